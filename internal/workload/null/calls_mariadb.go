package null

// The MariaDB (and MySQL) call. go-sql-driver/mysql opens the connection
// (handshake, authentication, numalab's database, the server thread's
// pinning); then the stream speaks the client/server protocol itself on
// the connection's blocking socket, as libmysqlclient under sysbench
// does: a call is one write of a command encoded once, at open, and one
// read (more only when the answer arrives in pieces). Prepared is
// COM_STMT_EXECUTE of a SELECT 1 the stream prepared itself
// (COM_STMT_PREPARE), whose answer is a binary result set; simple is
// COM_QUERY 'SELECT 1', a text result set. The answer is walked in place
// packet by packet: only an error packet is decoded. Nothing is allocated
// per call. The driver negotiates no CLIENT_DEPRECATE_EOF, so a result
// set is its column count, the column definitions, an EOF packet, the rows
// and an EOF packet. The engine's stream connections ask a MariaDB server
// to cache a prepared statement's metadata, as libmariadb (under sysbench)
// does (engine.Options.MariaDBCacheMetadata): the column count is then
// followed by a byte that says whether the definitions follow, and an
// execute's answer leaves them out (its EOF packet stays).
//
// The point-select call (CallPointSelect) is sysbench's oltp_point_select
// statement, SELECT c FROM sbtest1 WHERE id=?, prepared, on numalab's
// own sysbench-shaped table (pointSelectTable): each call writes the same
// COM_STMT_EXECUTE with the next id (uniform over the table's rows, as
// sysbench --rand-type=uniform draws them) in its parameter's 4 bytes.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/numalab/numalab/internal/engine"
)

// MySQL command bytes.
const (
	comQuery       = 0x03
	comStmtPrepare = 0x16
	comStmtExecute = 0x17
)

// serverMoreResultsExists is the status flag of a result followed by
// another (a CALL's).
const serverMoreResultsExists = 0x0008

type myStream struct {
	conn      net.Conn
	ids       uint64 // point-select: the id generator's state; 0 for SELECT 1
	closeConn func() error
	tid       int    // the server thread's
	req       []byte // one call's command, as a packet
	stmt      uint32 // the prepared SELECT 1's id
	cacheMeta bool   // the server caches metadata (MariaDBConn.CacheMetadata)
	// in holds what the server sent; in[r:w] is not parsed yet.
	in   []byte
	r, w int
	ctx  context.Context
	stop func() bool
}

func openMy(ctx context.Context, c engine.Conn, protocol, call string, session []string) (*myStream, error) {
	n := c.Native().MariaDB
	s := &myStream{conn: n.Socket, closeConn: c.Close, tid: c.BackendPID(), cacheMeta: n.CacheMetadata, in: make([]byte, 8192)}
	for _, q := range session {
		if _, err := n.Conn.ExecContext(ctx, q); err != nil {
			c.Close()
			return nil, fmt.Errorf("setting up the session with %q: %w", q, err)
		}
	}
	if protocol == Prepared {
		stmt := selectOne
		if call == CallPointSelect {
			stmt = pointSelect
			s.ids = uint64(s.tid)<<32 | 0x9e3779b9 // any state but 0
		}
		if _, err := s.call(ctx, command(comStmtPrepare, stmt)); err != nil {
			c.Close()
			return nil, fmt.Errorf("preparing %q: %w", stmt, err)
		}
		if s.stmt == 0 {
			c.Close()
			return nil, fmt.Errorf("preparing %q: the server answered with no statement id", stmt)
		}
		// COM_STMT_EXECUTE: statement id, no cursor, one iteration; for
		// the point select its one parameter: the NULL bitmap, "types
		// follow", MYSQL_TYPE_LONG signed, the value.
		body := make([]byte, 9, 9+8)
		binary.LittleEndian.PutUint32(body, s.stmt)
		binary.LittleEndian.PutUint32(body[5:], 1)
		if s.ids != 0 {
			body = append(body, 0, 1, 0x03, 0, 0, 0, 0, 0)
		}
		s.req = command(comStmtExecute, string(body))
	} else {
		s.req = command(comQuery, selectOne)
	}
	// One call before the window, as on PostgreSQL: the server thread's
	// first wake-up on the CPU it was just pinned to can wait long on a
	// loaded machine.
	if _, err := s.Next(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("first call to server thread %d: %w", s.tid, err)
	}
	return s, nil
}

// command is one command packet (sequence number 0).
func command(cmd byte, arg string) []byte {
	n := 1 + len(arg)
	p := []byte{byte(n), byte(n >> 8), byte(n >> 16), 0, cmd}
	return append(p, arg...)
}

// call sends req and reads its answer; a COM_STMT_PREPARE's answer sets
// s.stmt.
func (s *myStream) call(ctx context.Context, req []byte) (int, error) {
	saved := s.req
	s.req = req
	defer func() { s.req = saved }()
	return s.Next(ctx)
}

// Next makes one call. A cancelled ctx interrupts it by shutting the
// socket (the connection is then unusable).
func (s *myStream) Next(ctx context.Context) (int, error) {
	if ctx != s.ctx {
		s.watch(ctx)
	}
	if s.ids != 0 && s.req[4] == comStmtExecute {
		binary.LittleEndian.PutUint32(s.req[len(s.req)-4:], s.nextID())
	}
	if _, err := s.conn.Write(s.req); err != nil {
		return 0, err
	}
	return 0, s.answer()
}

// nextID draws the next point select's id, uniform in [1,
// pointSelectRows] (xorshift64*, then a multiply-shift into the range).
func (s *myStream) nextID() uint32 {
	s.ids ^= s.ids >> 12
	s.ids ^= s.ids << 25
	s.ids ^= s.ids >> 27
	r := uint32((s.ids * 0x2545F4914F6CDD1D) >> 32)
	return uint32(uint64(r)*pointSelectRows>>32) + 1
}

// watch makes ctx's cancellation shut the socket, instead of the
// previous context's.
func (s *myStream) watch(ctx context.Context) {
	if s.stop != nil {
		s.stop()
	}
	s.ctx, s.stop = ctx, nil
	if ctx.Done() != nil {
		s.stop = context.AfterFunc(ctx, func() { s.conn.SetDeadline(time.Unix(1, 0)) })
	}
}

// answer reads one command's answer: an OK or error packet, a prepared
// statement's (setting s.stmt), or result sets up to the last.
func (s *myStream) answer() error {
	prepare := s.req[4] == comStmtPrepare
	for {
		p, err := s.packet()
		if err != nil {
			return err
		}
		switch {
		case p[0] == 0xFF:
			return errPacket(p)
		case p[0] == 0x00 && prepare:
			// Statement id, columns, parameters: each is followed by its
			// definitions and an EOF packet.
			if len(p) < 9 {
				return fmt.Errorf("reading the answer: a prepare OK of %d bytes", len(p))
			}
			s.stmt = binary.LittleEndian.Uint32(p[1:])
			for _, n := range []uint16{binary.LittleEndian.Uint16(p[7:]), binary.LittleEndian.Uint16(p[5:])} {
				if n > 0 {
					if err := s.skip(int(n) + 1); err != nil {
						return err
					}
				}
			}
			return nil
		case p[0] == 0x00:
			if okStatus(p)&serverMoreResultsExists == 0 {
				return nil
			}
			continue
		}
		cols, n := lenenc(p)
		defs := int(cols)
		if s.cacheMeta && len(p) > n && p[n] == 0 {
			defs = 0 // metadata unchanged since the prepare: not sent
		}
		if err := s.skip(defs + 1); err != nil { // definitions and EOF
			return err
		}
		var status uint16
		for {
			p, err := s.packet()
			if err != nil {
				return err
			}
			if p[0] == 0xFF {
				return errPacket(p)
			}
			if p[0] == 0xFE && len(p) < 9 {
				if len(p) >= 5 {
					status = binary.LittleEndian.Uint16(p[3:])
				}
				break
			}
		}
		if status&serverMoreResultsExists == 0 {
			return nil
		}
	}
}

// skip reads and drops n packets.
func (s *myStream) skip(n int) error {
	for range n {
		if _, err := s.packet(); err != nil {
			return err
		}
	}
	return nil
}

// packet returns the next packet's payload, valid until the next call.
func (s *myStream) packet() ([]byte, error) {
	for {
		if s.w-s.r >= 4 {
			n := int(s.in[s.r]) | int(s.in[s.r+1])<<8 | int(s.in[s.r+2])<<16
			if n == 0 {
				return nil, errors.New("reading the answer: an empty packet")
			}
			if s.w-s.r >= 4+n {
				p := s.in[s.r+4 : s.r+4+n]
				s.r += 4 + n
				return p, nil
			}
			if 4+n > len(s.in) {
				s.in = append(s.in, make([]byte, 4+n)...)
			}
		}
		if s.r == s.w {
			s.r, s.w = 0, 0
		} else if s.r > 0 {
			s.w = copy(s.in, s.in[s.r:s.w])
			s.r = 0
		}
		n, err := s.conn.Read(s.in[s.w:])
		s.w += n
		if err != nil && n == 0 {
			return nil, err
		}
	}
}

// lenenc reads a length-encoded integer at the start of p and returns it
// with its size.
func lenenc(p []byte) (uint64, int) {
	switch {
	case len(p) == 0:
		return 0, 0
	case p[0] < 0xFB:
		return uint64(p[0]), 1
	case p[0] == 0xFC && len(p) >= 3:
		return uint64(binary.LittleEndian.Uint16(p[1:])), 3
	case p[0] == 0xFD && len(p) >= 4:
		return uint64(p[1]) | uint64(p[2])<<8 | uint64(p[3])<<16, 4
	case p[0] == 0xFE && len(p) >= 9:
		return binary.LittleEndian.Uint64(p[1:]), 9
	}
	return 0, 1
}

// okStatus is an OK packet's status flags.
func okStatus(p []byte) uint16 {
	i := 1
	for range 2 { // affected rows, last insert id
		_, n := lenenc(p[i:])
		i += n
	}
	if i+2 > len(p) {
		return 0
	}
	return binary.LittleEndian.Uint16(p[i:])
}

// errPacket decodes an error packet: code, SQL state, message.
func errPacket(p []byte) error {
	if len(p) < 3 {
		return errors.New("the server reported an error it did not describe")
	}
	code := binary.LittleEndian.Uint16(p[1:])
	msg := p[3:]
	state := ""
	if len(msg) >= 6 && msg[0] == '#' {
		state, msg = string(msg[1:6]), msg[6:]
	}
	return fmt.Errorf("error %d (%s): %s", code, state, msg)
}

// Close closes the connection through the driver, which quits and closes
// the socket. A cancelled context has shut the socket already, and the
// driver's quit then fails: that is no error of the stream.
func (s *myStream) Close() error {
	if s.stop != nil {
		s.stop()
	}
	err := s.closeConn()
	if s.ctx != nil && s.ctx.Err() != nil {
		return nil
	}
	return err
}
