package tpch

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/numalab/numalab/internal/engine"
)

// PostgreSQL loads by COPY in binary format on each worker's own
// connection, a COPY per table every pgCopyBytes: the worker encodes the
// rows itself, which is several times faster than encoding each value
// through the driver, and the server then parses no numbers or dates,
// which is most of a text COPY's cost. The
// connection is one of the engine's setup handle (engine.Engine.DB), whose
// driver connection is pgx's: a stream connection (Connect) waits for the
// server on its own thread, which suits one round trip per call, not
// bulk writes from a goroutine per worker.

type pgWorker struct {
	ctx    context.Context // the load's, for the COPY a sink sends when closed
	conn   *sql.Conn
	schema string
}

func newPGWorker(ctx context.Context, eng engine.Engine) (*pgWorker, error) {
	conn, err := eng.DB().Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &pgWorker{ctx: ctx, conn: conn, schema: eng.Schema()}, nil
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

func (w *pgWorker) sink(t *table) (sink, error) {
	return &pgSink{w: w, t: t,
		copy: "COPY " + pgx.Identifier{w.schema, t.name}.Sanitize() + " FROM STDIN (FORMAT binary)"}, nil
}

func (w *pgWorker) close() error { return w.conn.Close() }

// pgSink gathers one table's rows into a COPY and sends it when it holds
// pgCopyBytes, and the rest when closed.
type pgSink struct {
	w    *pgWorker
	t    *table
	copy string
	buf  []byte // the COPY gathered so far: header and rows, or nothing
}

// pgCopyBytes is about how much one COPY sends: enough that a COPY's own
// cost (a round trip, a transaction) is small beside its rows'.
const pgCopyBytes = 4 << 20

// pgCopyHeader starts a binary COPY: signature, flags, header extension
// length.
const pgCopyHeader = "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00"

// pgEpochDay is 2000-01-01, PostgreSQL's day 0, as a day from startDate.
var pgEpochDay = int64(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Sub(startDate).Hours() / 24)

func (s *pgSink) write(ctx context.Context, rows []val, n int) error {
	if len(s.buf) == 0 {
		s.buf = append(s.buf, pgCopyHeader...)
	}
	s.buf = appendBinary(s.buf, s.t, rows, n)
	if len(s.buf) < pgCopyBytes {
		return nil
	}
	return s.send(ctx)
}

// send ends the COPY gathered and runs it.
func (s *pgSink) send(ctx context.Context) error {
	s.buf = binary.BigEndian.AppendUint16(s.buf, 0xffff)
	err := s.w.copyFrom(ctx, s.buf, s.copy)
	s.buf = s.buf[:0]
	return err
}

func (s *pgSink) close() error {
	if len(s.buf) == 0 {
		return nil
	}
	return s.send(s.w.ctx)
}

// appendBinary appends n rows of t (rows holds them flat) in COPY's binary
// format.
func appendBinary(b []byte, t *table, rows []val, n int) []byte {
	nc := len(t.cols)
	for r := range n {
		b = binary.BigEndian.AppendUint16(b, uint16(nc))
		for i, c := range t.cols {
			v := rows[r*nc+i]
			switch c.kind {
			case kInt:
				b = binary.BigEndian.AppendUint32(b, 4)
				b = binary.BigEndian.AppendUint32(b, uint32(int32(v.i)))
			case kBig:
				b = binary.BigEndian.AppendUint32(b, 8)
				b = binary.BigEndian.AppendUint64(b, uint64(v.i))
			case kMoney:
				b = appendNumeric(b, v.i)
			case kDate:
				b = binary.BigEndian.AppendUint32(b, 4)
				b = binary.BigEndian.AppendUint32(b, uint32(int32(v.i-pgEpochDay)))
			case kText:
				b = binary.BigEndian.AppendUint32(b, uint32(len(v.s)))
				b = append(b, v.s...)
			}
		}
	}
	return b
}

// appendNumeric appends hundredths c as a binary numeric field of scale 2:
// its length, then digit count, weight, sign and display scale, then the
// digits in base 10,000, most significant first, with no leading or
// trailing zero digits.
func appendNumeric(b []byte, c int64) []byte {
	sign := uint16(0)
	if c < 0 {
		sign, c = 0x4000, -c
	}
	var digits [8]uint16
	n := 0
	// The integer part's base-10,000 digits, least significant first.
	for ip := c / 100; ip > 0; ip /= 10000 {
		digits[n] = uint16(ip % 10000)
		n++
	}
	weight := n - 1
	// Reverse them and append the fraction's digit (.25 is 2500).
	for i := 0; i < n/2; i++ {
		digits[i], digits[n-1-i] = digits[n-1-i], digits[i]
	}
	digits[n] = uint16(c % 100 * 100)
	n++
	for n > 0 && digits[n-1] == 0 {
		n--
	}
	if n == 0 {
		weight, sign = 0, 0
	}
	b = binary.BigEndian.AppendUint32(b, uint32(8+2*n))
	b = binary.BigEndian.AppendUint16(b, uint16(n))
	b = binary.BigEndian.AppendUint16(b, uint16(int16(weight)))
	b = binary.BigEndian.AppendUint16(b, sign)
	b = binary.BigEndian.AppendUint16(b, 2)
	for _, d := range digits[:n] {
		b = binary.BigEndian.AppendUint16(b, d)
	}
	return b
}
