package tpch

import (
	"context"

	"github.com/numalab/numalab/internal/engine"
)

// MariaDB loads through the engine's bulk path (engine.Bulk: prepared
// multi-row INSERTs, a transaction per flush, on a connection of the
// Bulk's own). Each worker keeps one Bulk per table open from the table's
// first rows to the end of its chunk group, as PostgreSQL's keeps a COPY,
// so a worker holds up to two connections. Decimals go as their text
// ("12.34"), which the server converts exactly; dates as '1995-03-15'.
// The secondary indexes (myIndexes) and ANALYZE TABLE come after (Load).

type myWorker struct {
	ctx context.Context // the load's, for the Bulks
	eng engine.Engine
}

func (w *myWorker) sink(t *table) (sink, error) {
	b, err := w.eng.Bulk(w.ctx, t.name, t.colNames())
	if err != nil {
		return nil, err
	}
	return &mySink{t: t, b: b, row: make([]any, len(t.cols))}, nil
}

// mySink writes one table's rows into one Bulk.
type mySink struct {
	t   *table
	b   engine.Bulk
	row []any
}

func (s *mySink) write(_ context.Context, rows []val, n int) error {
	nc := len(s.t.cols)
	for r := range n {
		for i, c := range s.t.cols {
			s.row[i] = myValue(c.kind, rows[r*nc+i])
		}
		if err := s.b.Append(s.row...); err != nil {
			return err
		}
	}
	return nil
}

// close flushes what is left and closes the Bulk. The rows of its flushes
// are committed: a failed load's tables are dropped (Load).
func (s *mySink) close(abort error) error {
	if abort != nil {
		// Close flushes; rows that fail to flush now do not matter.
		s.b.Close()
		return nil
	}
	return s.b.Close()
}

// myValue converts a value for MariaDB: decimals as exact text, dates as
// text.
func myValue(k kind, v val) any {
	switch k {
	case kInt, kBig:
		return v.i
	case kMoney:
		return cents(v.i)
	case kDate:
		return dateText[v.i]
	}
	return v.s
}
