package tpch

import (
	"context"

	"github.com/numalab/numalab/internal/engine"
)

// SQLite loads through the engine's bulk path (engine.Bulk: prepared
// multi-row INSERTs in large transactions) from one worker: SQLite has one
// writer at a time. Each write is a Bulk of its own, closed at its end:
// a Bulk holds SQLite's one connection until it is closed, so one table's
// write must end before another's starts.

type sqliteWorker struct{ eng engine.Engine }

func (w *sqliteWorker) sink(t *table) (sink, error) {
	return &sqliteSink{w: w, t: t, row: make([]any, len(t.cols))}, nil
}

// sqliteSink writes one table's rows.
type sqliteSink struct {
	w   *sqliteWorker
	t   *table
	row []any
}

func (s *sqliteSink) write(ctx context.Context, rows []val, n int) (err error) {
	b, err := s.w.eng.Bulk(ctx, s.t.name, s.t.colNames())
	if err != nil {
		return err
	}
	defer func() {
		if cerr := b.Close(); err == nil {
			err = cerr
		}
	}()
	nc := len(s.t.cols)
	for r := range n {
		for i, c := range s.t.cols {
			s.row[i] = sqliteValue(c.kind, rows[r*nc+i])
		}
		if err := b.Append(s.row...); err != nil {
			return err
		}
	}
	return nil
}

func (s *sqliteSink) close(error) error { return nil }

// sqliteValue converts a value for SQLite: decimals are doubles (c/100 is
// the double nearest the decimal, as parsing "12.34" gives), dates text.
func sqliteValue(k kind, v val) any {
	switch k {
	case kInt, kBig:
		return v.i
	case kMoney:
		return float64(v.i) / 100
	case kDate:
		return dateText[v.i]
	}
	return v.s
}
