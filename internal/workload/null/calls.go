package null

// The calls. PostgreSQL: pgx opens the connection (startup, the engine's
// settings, backend pinning) and prepares SELECT 1; then the stream takes
// the connection over (pgconn's Hijack), as tpcc-ro's streams do, and
// speaks the protocol itself: one write and one blocking read per call on
// the engine's blocking socket, as libpq does, with none of pgx's per-call
// timers. SQLite: a prepared SELECT 1 on an in-memory database, through
// go-sqlite3's driver statement.

import (
	"context"
	"database/sql/driver"
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
	fe        *pgproto3.Frontend
	closeConn func() error
	pid       int // the backend's
	msgs      []pgproto3.FrontendMessage
}

func openPG(ctx context.Context, c engine.Conn, protocol string) (*pgStream, error) {
	pc := c.Native().Postgres
	s := &pgStream{closeConn: c.Close, pid: c.BackendPID()}
	if protocol == Prepared {
		const name = "numalab_null"
		if _, err := pc.Prepare(ctx, name, selectOne); err != nil {
			c.Close()
			return nil, fmt.Errorf("preparing %q: %w", selectOne, err)
		}
		s.msgs = []pgproto3.FrontendMessage{&pgproto3.Bind{PreparedStatement: name, ResultFormatCodes: []int16{1}}, &pgproto3.Execute{}, &pgproto3.Sync{}}
	} else {
		s.msgs = []pgproto3.FrontendMessage{&pgproto3.Query{String: selectOne}}
	}
	var err error
	if s.conn, s.fe, err = engine.TakeOver(ctx, c); err != nil {
		return nil, err
	}
	return s, nil
}

// Next makes one call. A cancelled ctx interrupts it by shutting the
// socket (the connection is then unusable).
func (s *pgStream) Next(ctx context.Context) (int, error) {
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { s.conn.SetDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	for _, m := range s.msgs {
		s.fe.Send(m)
	}
	if err := s.fe.Flush(); err != nil {
		return 0, err
	}
	var callErr error
	for {
		msg, err := s.fe.Receive()
		if err != nil {
			return 0, err
		}
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			if callErr == nil {
				callErr = pgconn.ErrorResponseToPgError(m)
			}
		case *pgproto3.ReadyForQuery:
			return 0, callErr
		}
	}
}

func (s *pgStream) Close() error {
	s.fe.Send(&pgproto3.Terminate{})
	s.fe.Flush()
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
