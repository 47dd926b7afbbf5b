package tpch

import (
	"context"

	"github.com/numalab/numalab/internal/engine"
)

// bulkWorker loads through engine.Bulk (DuckDB, SQLite), converting each
// value with conv. With perWrite each write is a Bulk of its own, closed
// at its end: SQLite's loads hold its one connection until Close, so one
// table's load must end before another's starts.
type bulkWorker struct {
	eng      engine.Engine
	conv     func(kind, val) any
	perWrite bool
}

func (w *bulkWorker) sink(ctx context.Context, t *table) (sink, error) {
	s := &bulkSink{ctx: ctx, w: w, t: t, row: make([]any, len(t.cols))}
	if !w.perWrite {
		if err := s.open(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (w *bulkWorker) close() error { return nil }

type bulkSink struct {
	ctx context.Context
	w   *bulkWorker
	t   *table
	b   engine.Bulk // nil between writes with perWrite
	row []any
}

func (s *bulkSink) open() (err error) {
	s.b, err = s.w.eng.Bulk(s.ctx, s.t.name, s.t.colNames())
	return err
}

func (s *bulkSink) write(rows []val, n int) error {
	if s.b == nil {
		if err := s.open(); err != nil {
			return err
		}
	}
	nc := len(s.t.cols)
	for r := range n {
		for i, c := range s.t.cols {
			s.row[i] = s.w.conv(c.kind, rows[r*nc+i])
		}
		if err := s.b.Append(s.row...); err != nil {
			return err
		}
	}
	if s.w.perWrite {
		return s.close()
	}
	return s.b.Flush()
}

func (s *bulkSink) close() error {
	if s.b == nil {
		return nil
	}
	err := s.b.Close()
	s.b = nil
	return err
}
