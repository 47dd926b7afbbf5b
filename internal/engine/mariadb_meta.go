package engine

// MariaDB's metadata cache for prepared statements
// (MARIADB_CLIENT_CACHE_METADATA, MariaDB 10.6 and later): a client that
// asks for it at the handshake gets no column definitions with a
// COM_STMT_EXECUTE's result set when they have not changed since the
// statement was prepared, which saves the server building and sending
// them at every call. MariaDB's own client library (libmariadb, which
// sysbench uses) asks for it; go-sql-driver/mysql does not, and its
// prepared statements would misread such result sets. So only a
// connection whose workload runs its binary result sets itself
// (Options.MariaDBCacheMetadata) asks for it: cacheMetaConn rewrites the
// driver's handshake response, when the server offers the capability, to
// say it is a MariaDB client (CLIENT_MYSQL off) with that extended
// capability on.

import (
	"encoding/binary"
	"net"
	"strings"
)

// Capability bits of the MariaDB handshake.
const (
	clientMySQL          = 1      // in the lower capabilities: a MySQL client, no extended capabilities
	mariadbCacheMetadata = 1 << 4 // MARIADB_CLIENT_CACHE_METADATA, in the extended (upper 32) capabilities
)

// cacheMetaConn rewrites the handshake response as the file comment says.
type cacheMetaConn struct {
	net.Conn
	greeting []byte // the server's first packet, as read so far
	offered  bool   // the server offers the metadata cache
	done     bool   // the handshake response has been written
	// Negotiated says whether the client asked for it.
	negotiated bool
}

func (c *cacheMetaConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if !c.done && n > 0 {
		c.greeting = append(c.greeting, b[:n]...)
		c.offered = greetingOffersCache(c.greeting)
	}
	return n, err
}

func (c *cacheMetaConn) Write(b []byte) (int, error) {
	if !c.done {
		c.done = true
		// The handshake response: header, capabilities (4), max packet
		// (4), character set (1), 19 bytes of filler, extended
		// capabilities (4).
		if c.offered && len(b) >= 4+32 && b[3] == 1 {
			caps := binary.LittleEndian.Uint32(b[4:])
			binary.LittleEndian.PutUint32(b[4:], caps&^clientMySQL)
			ext := binary.LittleEndian.Uint32(b[4+28:])
			binary.LittleEndian.PutUint32(b[4+28:], ext|mariadbCacheMetadata)
			c.negotiated = true
		}
		c.greeting = nil
	}
	return c.Conn.Write(b)
}

// greetingOffersCache says whether a MariaDB server's greeting packet
// (header included) offers the metadata cache: protocol 10, the server
// version, connection id (4), scramble (8), filler (1), capabilities low
// (2), character set (1), status (2), capabilities high (2), scramble
// length (1), filler (6), extended capabilities (4).
func greetingOffersCache(p []byte) bool {
	if len(p) < 5 || p[4] != 10 {
		return false
	}
	v := p[5:]
	end := strings.IndexByte(string(v), 0)
	if end < 0 || !strings.Contains(string(v[:end]), "MariaDB") {
		return false
	}
	rest := v[end+1:]
	if len(rest) < 4+8+1+2+1+2+2+1+6+4 {
		return false
	}
	capsLow := binary.LittleEndian.Uint16(rest[13:])
	ext := binary.LittleEndian.Uint32(rest[4+8+1+2+1+2+2+1+6:])
	return capsLow&clientMySQL == 0 && ext&mariadbCacheMetadata != 0
}
