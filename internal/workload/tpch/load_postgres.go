package tpch

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/numalab/numalab/internal/engine"
)

// PostgreSQL loads by COPY in text format on each worker's own connection,
// one COPY per batch: the worker writes the rows' text itself, which is
// several times faster than encoding each value through the driver. The
// connection is one of the engine's setup handle (engine.Engine.DB), whose
// driver connection is pgx's: a stream connection (Connect) waits for the
// server on its own thread, which suits one round trip per call, not
// bulk writes from a goroutine per worker.

type pgWorker struct {
	conn   *sql.Conn
	schema string
}

func newPGWorker(ctx context.Context, eng engine.Engine) (*pgWorker, error) {
	conn, err := eng.DB().Conn(ctx)
	if err != nil {
		return nil, err
	}
	schema := "numalab"
	if s, ok := eng.(interface{ Schema() string }); ok {
		schema = s.Schema()
	}
	return &pgWorker{conn: conn, schema: schema}, nil
}

// copyFrom runs one COPY of data on the worker's connection.
func (w *pgWorker) copyFrom(ctx context.Context, data []byte, stmt string) error {
	return w.conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("postgres connection is a %T, not pgx's", dc)
		}
		_, err := sc.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(data), stmt)
		return err
	})
}

func (w *pgWorker) sink(ctx context.Context, t *table) (sink, error) {
	return &pgSink{ctx: ctx, w: w, t: t,
		copy: "COPY " + pgx.Identifier{w.schema, t.name}.Sanitize() + " FROM STDIN"}, nil
}

func (w *pgWorker) close() error { return w.conn.Close() }

type pgSink struct {
	ctx  context.Context
	w    *pgWorker
	t    *table
	copy string
	buf  []byte
}

// write sends n rows as one COPY. Generated text holds no tab, newline or
// backslash (the grammar's words and vAlphabet), so no value needs
// escaping.
func (s *pgSink) write(rows []val, n int) error {
	b := s.buf[:0]
	nc := len(s.t.cols)
	for r := range n {
		for i, c := range s.t.cols {
			if i > 0 {
				b = append(b, '\t')
			}
			v := rows[r*nc+i]
			switch c.kind {
			case kInt, kBig:
				b = strconv.AppendInt(b, v.i, 10)
			case kMoney:
				b = appendCents(b, v.i)
			case kDate:
				b = append(b, dateText[v.i]...)
			case kText:
				b = append(b, v.s...)
			}
		}
		b = append(b, '\n')
	}
	s.buf = b
	return s.w.copyFrom(s.ctx, b, s.copy)
}

func (s *pgSink) close() error { return nil }

// appendCents appends hundredths c as a decimal: -1234 is "-12.34".
func appendCents(b []byte, c int64) []byte {
	if c < 0 {
		b = append(b, '-')
		c = -c
	}
	b = strconv.AppendInt(b, c/100, 10)
	return append(b, '.', byte('0'+c%100/10), byte('0'+c%10))
}
