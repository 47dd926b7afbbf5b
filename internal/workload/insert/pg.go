package insert

// PostgreSQL's loader. The stream's connection is opened by the engine
// (startup, settings, its backend pinned to the stream's CPUs, a socket
// that waits in the kernel on the stream's own thread); pgx prepares the
// INSERTs, and then the stream takes the connection over (pgconn's
// Hijack) and speaks the protocol itself, a batch in one round trip:
//
//   - copy: COPY ... FROM STDIN, the batch's rows in text format in
//     CopyData messages, CopyDone;
//   - insert: Bind and Execute of a prepared multi-row INSERT per
//     chunkRows rows, then one Sync, which commits them together.
//
// pgx's own CopyFrom reads the socket from a second goroutine while the
// first writes; on the engine's blocking socket each of those waits holds
// a P, and a batch of 200 rows took 100 ms instead of one.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/numalab/numalab/internal/engine"
)

type pgLoader struct {
	cols    []int // the columns sent (loadColumns)
	c       engine.Conn
	conn    net.Conn
	fe      *pgproto3.Frontend
	method  string
	copySQL string
	stmts   map[int]string // rows per INSERT → prepared statement name
	buf     []byte         // COPY's text, or the INSERT's parameters
	bind    pgproto3.Bind
	exec    pgproto3.Execute
	sync    pgproto3.Sync
}

// copyChunk is the most bytes of one CopyData message.
const copyChunk = 256 << 10

func openPGLoader(ctx context.Context, eng engine.Engine, method string, batch int, cols []int) (*pgLoader, error) {
	c, err := eng.Connect(ctx)
	if err != nil {
		return nil, err
	}
	name := pgx.Identifier{eng.Schema(), Table}.Sanitize()
	l := &pgLoader{cols: cols, c: c, method: method, stmts: map[int]string{},
		copySQL: fmt.Sprintf("COPY %s (%s) FROM STDIN", name, strings.Join(columnNames(cols), ", "))}
	pc := c.Native().Postgres
	if method == "insert" {
		for _, n := range []int{min(batch, chunkRows), batch % chunkRows} {
			if _, ok := l.stmts[n]; ok || n == 0 {
				continue
			}
			st := "numalab_insert_" + strconv.Itoa(n)
			if _, err := pc.Prepare(ctx, st, multiRowSQL(name, n, true, cols)); err != nil {
				c.Close()
				return nil, fmt.Errorf("preparing the %d-row INSERT: %w", n, err)
			}
			l.stmts[n] = st
		}
	}
	if l.conn, l.fe, err = engine.TakeOver(ctx, c); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *pgLoader) load(ctx context.Context, r *rows) (time.Duration, error) {
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { l.conn.SetDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	if l.method == "copy" {
		return 0, l.copy(r)
	}
	return 0, l.insert(r)
}

// appendText appends row i's value of column j in PostgreSQL's text form.
func appendText(b []byte, r *rows, i, j int) []byte {
	switch j {
	case 0:
		return strconv.AppendInt(b, r.id[i], 10)
	case 1:
		return strconv.AppendInt(b, r.stream, 10)
	case 2:
		return strconv.AppendInt(b, r.k[i], 10)
	case 3:
		return strconv.AppendFloat(b, r.v[i], 'g', -1, 64)
	}
	return append(b, r.pad[i]...)
}

func (l *pgLoader) copy(r *rows) error {
	l.fe.Send(&pgproto3.Query{String: l.copySQL})
	if err := l.fe.Flush(); err != nil {
		return err
	}
	for {
		msg, err := l.fe.Receive()
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *pgproto3.CopyInResponse:
		case *pgproto3.ErrorResponse:
			return l.finish(pgconn.ErrorResponseToPgError(m))
		default:
			continue
		}
		break
	}
	b := l.buf[:0]
	for i := range r.n() {
		for x, j := range l.cols {
			if x > 0 {
				b = append(b, '\t')
			}
			b = appendText(b, r, i, j)
		}
		b = append(b, '\n')
	}
	l.buf = b
	for len(b) > 0 {
		n := min(len(b), copyChunk)
		l.fe.Send(&pgproto3.CopyData{Data: b[:n]})
		b = b[n:]
	}
	l.fe.Send(&pgproto3.CopyDone{})
	if err := l.fe.Flush(); err != nil {
		return err
	}
	return l.finish(nil)
}

func (l *pgLoader) insert(r *rows) error {
	b := l.buf[:0]
	for a := 0; a < r.n(); a += chunkRows {
		end := min(a+chunkRows, r.n())
		l.bind.PreparedStatement = l.stmts[end-a]
		l.bind.Parameters = l.bind.Parameters[:0]
		for i := a; i < end; i++ {
			for _, j := range l.cols {
				start := len(b)
				b = appendText(b, r, i, j)
				l.bind.Parameters = append(l.bind.Parameters, b[start:len(b):len(b)])
			}
		}
		l.fe.Send(&l.bind)
		l.fe.Send(&l.exec)
	}
	l.fe.Send(&l.sync)
	err := l.fe.Flush()
	// Parameters point into b: keep the grown buffer only after sending.
	l.buf = b
	if err != nil {
		return err
	}
	return l.finish(nil)
}

// finish reads up to ReadyForQuery and returns the first error: err, or
// the server's.
func (l *pgLoader) finish(err error) error {
	for {
		msg, rerr := l.fe.Receive()
		if rerr != nil {
			return errors.Join(err, rerr)
		}
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			if err == nil {
				err = pgconn.ErrorResponseToPgError(m)
			}
		case *pgproto3.ReadyForQuery:
			return err
		}
	}
}

func (l *pgLoader) pid() int { return l.c.BackendPID() }

func (l *pgLoader) close() error {
	l.fe.Send(&pgproto3.Terminate{})
	l.fe.Flush()
	err := l.conn.Close()
	l.c.Close() // pgx's side: nothing left to close after the takeover
	return err
}
