package null

// The calls. PostgreSQL: pgx opens the connection (startup, the engine's
// settings, backend pinning) and prepares SELECT 1; then the stream takes
// the connection over (pgconn's Hijack), as tpcc-ro's streams do, and
// speaks the protocol itself, no leaner than libpq under pgbench: a call
// is one write of bytes encoded once, at open, and one read (more only
// when the answer arrives in pieces) on the engine's blocking socket,
// which on a unix socket first waits in poll, as libpq does. The answer is
// parsed in place: only an ErrorResponse is decoded, and the call ends at
// ReadyForQuery. Nothing is allocated and no timer or context callback is
// set per call. SQLite: a prepared SELECT 1 on an in-memory
// database, through go-sqlite3's driver statement.

import (
	"context"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/mattn/go-sqlite3"

	"github.com/numalab/numalab/internal/engine"
)

const selectOne = "SELECT 1"

type pgStream struct {
	conn      net.Conn
	closeConn func() error
	pid       int    // the backend's
	req       []byte // one call's messages, encoded
	// in holds what the server sent; in[r:w] is not parsed yet (a
	// message the server sent unasked, after ReadyForQuery, waits there
	// for the next call).
	in   []byte
	r, w int
	// ctx is the context whose cancellation shuts the socket (stop
	// undoes that): set once per context, not per call.
	ctx  context.Context
	stop func() bool
}

func openPG(ctx context.Context, c engine.Conn, protocol string, session []string) (*pgStream, error) {
	pc := c.Native().Postgres
	s := &pgStream{closeConn: c.Close, pid: c.BackendPID(), in: make([]byte, 8192)}
	for _, q := range session {
		if _, err := pc.Exec(ctx, q); err != nil {
			c.Close()
			return nil, fmt.Errorf("setting up the session with %q: %w", q, err)
		}
	}
	var msgs []pgproto3.FrontendMessage
	if protocol == Prepared {
		const name = "numalab_null"
		if _, err := pc.Prepare(ctx, name, selectOne); err != nil {
			c.Close()
			return nil, fmt.Errorf("preparing %q: %w", selectOne, err)
		}
		// The messages of pgbench -M prepared (libpq's PQsendQueryPrepared):
		// the answer comes in text, with its RowDescription.
		msgs = []pgproto3.FrontendMessage{&pgproto3.Bind{PreparedStatement: name}, &pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{}}
	} else {
		msgs = []pgproto3.FrontendMessage{&pgproto3.Query{String: selectOne}}
	}
	for _, m := range msgs {
		var err error
		if s.req, err = m.Encode(s.req); err != nil {
			c.Close()
			return nil, fmt.Errorf("encoding %T: %w", m, err)
		}
	}
	var err error
	if s.conn, _, err = engine.TakeOver(ctx, c); err != nil {
		return nil, err
	}
	// One call before the window: the backend's first wake-up on the
	// CPU it was just pinned to waits, on a loaded machine, for hundreds
	// of milliseconds and at times for more than a whole cell (measured:
	// the query sat in the backend's socket while the backend, woken,
	// was not run for 1.3 s), which left cells with no call at all.
	if _, err := s.Next(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("first call to backend %d: %w", s.pid, err)
	}
	return s, nil
}

// Next makes one call. A cancelled ctx interrupts it by shutting the
// socket (the connection is then unusable).
func (s *pgStream) Next(ctx context.Context) (int, error) {
	if ctx != s.ctx {
		s.watch(ctx)
	}
	if _, err := s.conn.Write(s.req); err != nil {
		return 0, err
	}
	return 0, s.answer()
}

// watch makes ctx's cancellation shut the socket, instead of the
// previous context's.
func (s *pgStream) watch(ctx context.Context) {
	if s.stop != nil {
		s.stop()
	}
	s.ctx, s.stop = ctx, nil
	if ctx.Done() != nil {
		s.stop = context.AfterFunc(ctx, func() { s.conn.SetDeadline(time.Unix(1, 0)) })
	}
}

// answer reads the server's messages up to ReadyForQuery and returns the
// first error the server reported.
func (s *pgStream) answer() error {
	var callErr error
	for {
		for s.w-s.r >= 5 {
			typ, n := s.in[s.r], 1+int(binary.BigEndian.Uint32(s.in[s.r+1:]))
			if n < 5 {
				return fmt.Errorf("reading the answer: message %q of length %d", typ, n-1)
			}
			if s.w-s.r < n {
				break
			}
			body := s.in[s.r+5 : s.r+n]
			s.r += n
			switch typ {
			case 'E':
				if callErr == nil {
					var m pgproto3.ErrorResponse
					if callErr = m.Decode(body); callErr == nil {
						callErr = pgconn.ErrorResponseToPgError(&m)
					}
				}
			case 'Z':
				return callErr
			}
		}
		if s.r == s.w {
			s.r, s.w = 0, 0
		} else if s.r > 0 {
			s.w = copy(s.in, s.in[s.r:s.w])
			s.r = 0
		}
		if s.w == len(s.in) {
			s.in = append(s.in, make([]byte, len(s.in))...)
		}
		n, err := s.conn.Read(s.in[s.w:])
		s.w += n
		if err != nil {
			return errors.Join(callErr, err)
		}
	}
}

func (s *pgStream) Close() error {
	if s.stop != nil {
		s.stop()
	}
	s.conn.Write([]byte{'X', 0, 0, 0, 4}) // Terminate
	err := s.conn.Close()
	s.closeConn() // pgx's side: nothing left to close after the takeover
	return err
}

type sqliteStream struct {
	conn *sqlite3.SQLiteConn
	st   driver.Stmt
	dest []driver.Value
}

func openSQLite() (*sqliteStream, error) {
	dc, err := (&sqlite3.SQLiteDriver{}).Open(":memory:")
	if err != nil {
		return nil, fmt.Errorf("opening an in-memory SQLite database: %w", err)
	}
	conn := dc.(*sqlite3.SQLiteConn)
	st, err := conn.Prepare(selectOne)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("preparing %q: %w", selectOne, err)
	}
	return &sqliteStream{conn: conn, st: st, dest: make([]driver.Value, 1)}, nil
}

// Next runs the statement and reads its row. The context is Background:
// a cancellable one costs the driver a goroutine per call, and the call
// never blocks.
func (s *sqliteStream) Next(context.Context) (int, error) {
	rows, err := s.st.(driver.StmtQueryContext).QueryContext(context.Background(), nil)
	if err != nil {
		return 0, err
	}
	for {
		if err := rows.Next(s.dest); err == io.EOF {
			break
		} else if err != nil {
			rows.Close()
			return 0, err
		}
	}
	return 0, rows.Close()
}

func (s *sqliteStream) Close() error {
	s.st.Close()
	return s.conn.Close()
}
