package tpcc

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/mattn/go-sqlite3"

	"github.com/numalab/numalab/internal/engine"
)

// insertAll generates every row in one goroutine and inserts them in this
// one, a chunk per write transaction, with prepared multi-row INSERTs on
// the driver's own connection (no database/sql conversions).
func insertAll(ctx context.Context, eng engine.Engine, cfg LoadConfig, k Constants) (int64, error) {
	p, genErr, cancel := startGenerator(ctx, cfg, k)
	defer cancel()

	conn, err := eng.DB().Conn(ctx)
	if err != nil {
		cancel()
		<-genErr
		return 0, err
	}
	defer conn.Close()
	var done int64
	total := ExpectedRows(cfg.Warehouses)
	err = conn.Raw(func(dc any) error {
		ins := &inserter{c: dc.(*sqlite3.SQLiteConn), stmts: map[stmtKey]driver.Stmt{}}
		defer ins.close()
		for c := range p.full {
			if err := ins.insert(c); err != nil {
				return fmt.Errorf("inserting into %s: %w", c.t.name, err)
			}
			done += int64(c.rows)
			p.free <- c
			if cfg.Progress != nil {
				cfg.Progress(done, max(total, done))
			}
		}
		return nil
	})
	if err != nil {
		cancel()
		for range p.full { // let the generator finish
		}
		<-genErr
		return done, err
	}
	if err := <-genErr; err != nil {
		return done, fmt.Errorf("generating rows: %w", err)
	}
	if cfg.Progress != nil {
		cfg.Progress(done, done)
	}
	return done, nil
}

type stmtKey struct {
	t    *table
	rows int
}

// inserter holds the load connection's prepared statements.
type inserter struct {
	c             *sqlite3.SQLiteConn
	stmts         map[stmtKey]driver.Stmt
	begin, commit driver.Stmt
	args          []driver.NamedValue // one INSERT's arguments
}

func (ins *inserter) stmt(t *table, n int) (driver.Stmt, error) {
	k := stmtKey{t, n}
	if s, ok := ins.stmts[k]; ok {
		return s, nil
	}
	s, err := ins.c.Prepare(insertSQL(t, n))
	if err != nil {
		return nil, err
	}
	ins.stmts[k] = s
	return s, nil
}

func (ins *inserter) exec(s *driver.Stmt, q string) error {
	if *s == nil {
		p, err := ins.c.Prepare(q)
		if err != nil {
			return err
		}
		*s = p
	}
	_, err := (*s).(driver.StmtExecContext).ExecContext(context.Background(), nil)
	return err
}

func (ins *inserter) insert(c *chunk) error {
	if err := ins.exec(&ins.begin, "BEGIN"); err != nil {
		return err
	}
	own := len(c.t.cols) - c.t.nShare
	per := batchRows(c.t)
	for off := 0; off < c.rows; off += per {
		n := min(per, c.rows-off)
		s, err := ins.stmt(c.t, n)
		if err != nil {
			return err
		}
		args := append(append(ins.args[:0], c.shared...), c.vals[off*own:(off+n)*own]...)
		ins.args = args
		// Background: a cancellable context costs a goroutine per call in
		// the driver; the caller stops between chunks instead.
		if _, err := s.(driver.StmtExecContext).ExecContext(context.Background(), args); err != nil {
			return err
		}
	}
	return ins.exec(&ins.commit, "COMMIT")
}

func (ins *inserter) close() {
	for _, s := range ins.stmts {
		s.Close()
	}
	for _, s := range []driver.Stmt{ins.begin, ins.commit} {
		if s != nil {
			s.Close()
		}
	}
}
