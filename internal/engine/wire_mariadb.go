package engine

// MariaDB's (and MySQL's) repeated call (fast.go's Repeater).
// go-sql-driver/mysql opens the connection (handshake, authentication,
// numalab's database, the server thread's pinning); then a Repeat speaks
// the client/server protocol itself on the connection's blocking socket,
// as libmysqlclient under sysbench does: a call is one write of a command
// encoded once and one read (more only when the answer arrives in
// pieces). Prepared is COM_STMT_EXECUTE of a statement prepared here
// (COM_STMT_PREPARE), whose answer is a binary result set, its integer
// parameters (MYSQL_TYPE_LONG) rewritten in place by Param; simple is
// COM_QUERY, a text result set. The answer is walked in place packet by
// packet: only an error packet is decoded. Nothing is allocated per call.
// The driver negotiates no CLIENT_DEPRECATE_EOF, so a result set is its
// column count, the column definitions, an EOF packet, the rows and an
// EOF packet. On a connection that asked the server to cache a prepared
// statement's metadata, as libmariadb (under sysbench) does
// (Options.MariaDBCacheMetadata), the column count is followed by a byte
// that says whether the definitions follow, and an execute's answer
// leaves them out (its EOF packet stays). Commands through the driver
// (Conn.Exec, Conn.Query) may come between calls: the driver keeps no
// state between commands.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
)

var _ Repeater = (*myConn)(nil)

// MySQL command bytes.
const (
	comQuery       = 0x03
	comStmtPrepare = 0x16
	comStmtExecute = 0x17
)

// serverMoreResultsExists is the status flag of a result followed by
// another (a CALL's).
const serverMoreResultsExists = 0x0008

// myWire is a stream connection's socket as its repeats read it.
type myWire struct {
	watcher
	cacheMeta bool // the server caches metadata
	// in holds what the server sent; in[r:w] is not parsed yet.
	in   []byte
	r, w int
}

// myRepeat is one repeated command.
type myRepeat struct {
	w      *myWire
	req    []byte // the command, as a packet
	params int    // the prepared statement's parameters, 4 bytes each at req's end
	stmt   uint32 // a COM_STMT_PREPARE's answer: the statement id
}

// wireOf returns the connection's wire, made on first use.
func (c *myConn) wireOf() *myWire {
	if c.wire == nil {
		c.wire = &myWire{watcher: watcher{conn: c.sock}, in: make([]byte, 8192),
			cacheMeta: c.cache != nil && c.cache.negotiated}
	}
	return c.wire
}

func (c *myConn) Repeat(ctx context.Context, query string, prepared bool) (Repeat, error) {
	w := c.wireOf()
	if !prepared {
		return &myRepeat{w: w, req: command(comQuery, query)}, nil
	}
	p := &myRepeat{w: w, req: command(comStmtPrepare, query)}
	if err := p.Call(ctx); err != nil {
		return nil, fmt.Errorf("preparing %q: %w", query, err)
	}
	if p.stmt == 0 {
		return nil, fmt.Errorf("preparing %q: the server answered with no statement id", query)
	}
	// COM_STMT_EXECUTE: statement id, no cursor, one iteration; with
	// parameters, the NULL bitmap, "types follow", each MYSQL_TYPE_LONG
	// signed, then their values.
	body := make([]byte, 9, 9+(p.params+7)/8+1+6*p.params)
	binary.LittleEndian.PutUint32(body, p.stmt)
	binary.LittleEndian.PutUint32(body[5:], 1)
	if p.params > 0 {
		body = append(body, make([]byte, (p.params+7)/8)...)
		body = append(body, 1)
		for range p.params {
			body = append(body, 0x03, 0)
		}
		body = append(body, make([]byte, 4*p.params)...)
	}
	return &myRepeat{w: w, req: command(comStmtExecute, string(body)), params: p.params}, nil
}

// command is one command packet (sequence number 0).
func command(cmd byte, arg string) []byte {
	n := 1 + len(arg)
	p := []byte{byte(n), byte(n >> 8), byte(n >> 16), 0, cmd}
	return append(p, arg...)
}

func (r *myRepeat) Param(i int, v int32) {
	if i >= 0 && i < r.params {
		binary.LittleEndian.PutUint32(r.req[len(r.req)-4*(r.params-i):], uint32(v))
	}
}

// Call makes one call. A COM_STMT_PREPARE's answer sets r.stmt.
func (r *myRepeat) Call(ctx context.Context) error {
	r.w.watch(ctx)
	if _, err := r.w.conn.Write(r.req); err != nil {
		return err
	}
	return r.answer()
}

// answer reads one command's answer: an OK or error packet, a prepared
// statement's (setting r.stmt), or result sets up to the last.
func (r *myRepeat) answer() error {
	w, prepare := r.w, r.req[4] == comStmtPrepare
	for {
		p, err := w.packet()
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
			r.stmt = binary.LittleEndian.Uint32(p[1:])
			params, cols := binary.LittleEndian.Uint16(p[7:]), binary.LittleEndian.Uint16(p[5:])
			r.params = int(params)
			for _, n := range []uint16{params, cols} {
				if n > 0 {
					if err := w.skip(int(n) + 1); err != nil {
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
		more, err := w.resultSet(p)
		if err != nil || !more {
			return err
		}
	}
}

// resultSet reads the rest of a result set whose column count is p, and
// says whether another result follows.
func (w *myWire) resultSet(p []byte) (bool, error) {
	cols, n := lenenc(p)
	defs := int(cols)
	if w.cacheMeta && len(p) > n && p[n] == 0 {
		defs = 0 // metadata unchanged since the prepare: not sent
	}
	if err := w.skip(defs + 1); err != nil { // definitions and EOF
		return false, err
	}
	for {
		p, err := w.packet()
		if err != nil {
			return false, err
		}
		if p[0] == 0xFF {
			return false, errPacket(p)
		}
		if p[0] == 0xFE && len(p) < 9 {
			var status uint16
			if len(p) >= 5 {
				status = binary.LittleEndian.Uint16(p[3:])
			}
			return status&serverMoreResultsExists != 0, nil
		}
	}
}

// skip reads and drops n packets.
func (w *myWire) skip(n int) error {
	for range n {
		if _, err := w.packet(); err != nil {
			return err
		}
	}
	return nil
}

// packet returns the next packet's payload, valid until the next call.
func (w *myWire) packet() ([]byte, error) {
	for {
		if w.w-w.r >= 4 {
			n := int(w.in[w.r]) | int(w.in[w.r+1])<<8 | int(w.in[w.r+2])<<16
			if n == 0 {
				return nil, errors.New("reading the answer: an empty packet")
			}
			if w.w-w.r >= 4+n {
				p := w.in[w.r+4 : w.r+4+n]
				w.r += 4 + n
				return p, nil
			}
			if 4+n > len(w.in) {
				w.in = append(w.in, make([]byte, 4+n)...)
			}
		}
		if w.r == w.w {
			w.r, w.w = 0, 0
		} else if w.r > 0 {
			w.w = copy(w.in, w.in[w.r:w.w])
			w.r = 0
		}
		n, err := w.conn.Read(w.in[w.w:])
		w.w += n
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

// closeWire stops the repeats' watch. It says whether a cancelled context
// shut the socket, after which the driver's quit fails: no error of the
// connection's.
func (c *myConn) closeWire() (shut bool) {
	return c.wire != nil && c.wire.unwatch()
}
