package null

// The calls. On a server (PostgreSQL, MariaDB or MySQL) the engine opens
// the stream's connection (startup, the engine's settings, the server
// thread's pinning) and repeats the call as the server's own benchmark
// client does (engine.Repeater: libpq under pgbench, libmysqlclient under
// sysbench): one write of a command encoded once and one read, the answer
// walked in place, nothing allocated and no timer set per call. SQLite: a
// prepared SELECT 1 on an in-memory database, through go-sqlite3's
// driver statement.
//
// The point-select call (CallPointSelect) is sysbench's oltp_point_select
// statement, SELECT c FROM sbtest1 WHERE id=?, prepared, on numalab's
// own sysbench-shaped table (pointSelectTable): each call sends the same
// command with the next id (uniform over the table's rows, as sysbench
// --rand-type=uniform draws them) as its parameter.

import (
	"context"
	"database/sql/driver"
	"fmt"
	"io"

	"github.com/mattn/go-sqlite3"

	"github.com/numalab/numalab/internal/engine"
)

const selectOne = "SELECT 1"

// serverStream repeats the call on a server's connection.
type serverStream struct {
	c   engine.Conn
	rep engine.Repeat
	pid int    // the server process or thread serving it
	ids uint64 // point-select: the id generator's state; 0 for SELECT 1
}

func openServer(ctx context.Context, c engine.Conn, protocol, call string, session []string) (*serverStream, error) {
	r, ok := c.(engine.Repeater)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("opening a null stream: the engine's connection cannot repeat a call")
	}
	s := &serverStream{c: c, pid: c.BackendPID()}
	for _, q := range session {
		if err := c.Exec(ctx, q); err != nil {
			c.Close()
			return nil, fmt.Errorf("setting up the session with %q: %w", q, err)
		}
	}
	stmt := selectOne
	if call == CallPointSelect {
		stmt = pointSelect
		s.ids = uint64(s.pid)<<32 | 0x9e3779b9 // any state but 0
	}
	var err error
	if s.rep, err = r.Repeat(ctx, stmt, protocol == Prepared); err != nil {
		c.Close()
		return nil, err
	}
	// One call before the window: the server's first wake-up on the CPU
	// it was just pinned to waits, on a loaded machine, for hundreds of
	// milliseconds and at times for more than a whole cell (measured on
	// PostgreSQL: the query sat in the backend's socket while the
	// backend, woken, was not run for 1.3 s), which left cells with no
	// call at all.
	if _, err := s.Next(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("first call to server process or thread %d: %w", s.pid, err)
	}
	return s, nil
}

// Next makes one call. A cancelled ctx interrupts it by shutting the
// socket (the connection is then unusable).
func (s *serverStream) Next(ctx context.Context) (int, error) {
	if s.ids != 0 {
		s.rep.Param(0, int32(s.nextID()))
	}
	return 0, s.rep.Call(ctx)
}

// nextID draws the next point select's id, uniform in [1,
// pointSelectRows] (xorshift64*, then a multiply-shift into the range).
func (s *serverStream) nextID() uint32 {
	s.ids ^= s.ids >> 12
	s.ids ^= s.ids << 25
	s.ids ^= s.ids >> 27
	r := uint32((s.ids * 0x2545F4914F6CDD1D) >> 32)
	return uint32(uint64(r)*pointSelectRows>>32) + 1
}

// Close closes the connection. A cancelled context has shut its socket
// already: the engine does not count that as an error.
func (s *serverStream) Close() error { return s.c.Close() }

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
