package tpch

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/numalab/numalab/internal/engine"
)

// PostgreSQL loads each table by one COPY in binary format, in a
// transaction of its own that first empties the table (TRUNCATE, of a
// table this load created): under wal_level=minimal, as on numalab's
// managed server, PostgreSQL then writes no WAL for the rows and syncs
// the table's files at commit instead, and COPY FREEZE writes them
// frozen, so that the first query does not write hint bits on every
// page. The eight COPYs run at once, each on a connection of its own,
// fed by the workers: a worker encodes the rows itself (several times
// faster than encoding each value through the driver, and the server
// then parses no numbers or dates, most of a text COPY's cost) and hands
// a table's rows to its COPY every pgBatchBytes. A table's COPY is one
// backend, so lineitem's, seven tenths of the rows, bounds the load.
//
// The connections are the engine's setup handle's (engine.Engine.DB),
// whose driver connection is pgx's: a stream connection (Connect) waits
// for the server on its own thread, which suits one round trip per call,
// not bulk writes.

// pgBatchBytes is about how many bytes of rows a worker hands to a
// table's COPY at a time.
const pgBatchBytes = 256 << 10

// pgCopyHeader starts a binary COPY: signature, flags, header extension
// length.
const pgCopyHeader = "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00"

// pgCopyTrailer ends a binary COPY: a row of -1 columns.
const pgCopyTrailer = "\xff\xff"

// pgEpochDay is 2000-01-01, PostgreSQL's day 0, as a day from startDate.
var pgEpochDay = int64(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Sub(startDate).Hours() / 24)

// insertPostgres loads the chunks cs into eng's tables, which this load
// created and which are empty, with workers generating, and returns the
// rows loaded per table (in tables' order).
func insertPostgres(ctx context.Context, eng engine.Engine, g *gen, cs []chunk, workers int) ([]int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	copies := make([]*pgCopy, len(tables))
	copied := make([]int64, len(tables))
	errs := make([]error, len(tables))
	var wg sync.WaitGroup
	for i, t := range tables {
		copies[i] = &pgCopy{t: t, batches: make(chan []byte, 2*workers), free: make(chan []byte, 4*workers)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			copied[i], errs[i] = copies[i].run(ctx, eng)
			if errs[i] != nil {
				cancel()
			}
		}()
	}
	rows, err := generate(ctx, g, cs, workers, func(context.Context) (worker, error) { return pgWorker(copies), nil })
	if err != nil {
		cancel()
	}
	for _, c := range copies {
		close(c.batches)
	}
	wg.Wait()
	if err != nil && !errors.Is(err, context.Canceled) {
		return rows, err
	}
	// A COPY's own failure matters more than the cancellation it caused.
	for i, t := range tables {
		if errs[i] != nil && !errors.Is(errs[i], context.Canceled) {
			return rows, fmt.Errorf("loading %s: %w", t.name, errs[i])
		}
	}
	if err == nil {
		err = errors.Join(errs...)
	}
	if err != nil {
		return rows, err
	}
	for i, t := range tables {
		if copied[i] != rows[i] {
			return rows, fmt.Errorf("loading %s: %d rows copied of the %d generated", t.name, copied[i], rows[i])
		}
	}
	return rows, nil
}

// pgCopy is one table's COPY: the workers send it batches of encoded rows
// and take empty buffers from free.
type pgCopy struct {
	t       *table
	batches chan []byte
	free    chan []byte
}

// run empties the table, copies the batches into it until batches is
// closed, and commits, all on a connection of its own in one transaction;
// it returns the rows copied. If ctx is canceled first, it rolls back.
func (c *pgCopy) run(ctx context.Context, eng engine.Engine) (int64, error) {
	conn, err := eng.DB().Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	name := pgx.Identifier{eng.Schema(), c.t.name}.Sanitize()
	var n int64
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("postgres connection is a %T, not pgx's", dc)
		}
		pc := sc.Conn().PgConn()
		if _, err := pc.Exec(ctx, "BEGIN; TRUNCATE "+name).ReadAll(); err != nil {
			return err
		}
		tag, err := pc.CopyFrom(ctx, &batchReader{ctx: ctx, c: c, cur: []byte(pgCopyHeader)}, "COPY "+name+" FROM STDIN (FORMAT binary, FREEZE)")
		if err == nil {
			n = tag.RowsAffected()
			_, err = pc.Exec(ctx, "COMMIT").ReadAll()
		}
		if err != nil {
			if _, rerr := pc.Exec(context.WithoutCancel(ctx), "ROLLBACK").ReadAll(); rerr != nil {
				err = fmt.Errorf("%w; and rolling back: %w", err, rerr)
			}
		}
		return err
	})
	return n, err
}

// batchReader reads a COPY's data: the header, the batches, the trailer.
// It fails when ctx is canceled, which fails the COPY.
type batchReader struct {
	ctx  context.Context
	c    *pgCopy
	cur  []byte // what is left of the header or the batch being read
	buf  []byte // the batch being read, returned to free when read
	done bool   // the trailer is in cur
}

func (r *batchReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.buf != nil {
			select {
			case r.c.free <- r.buf[:0]:
			default:
			}
			r.buf = nil
		}
		if r.done {
			return 0, io.EOF
		}
		select {
		case b, ok := <-r.c.batches:
			if !ok {
				r.cur, r.done = []byte(pgCopyTrailer), true
				continue
			}
			r.cur, r.buf = b, b
		case <-r.ctx.Done():
			return 0, r.ctx.Err()
		}
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// pgWorker is a worker's way to the COPYs: a sink per table that encodes
// its rows and sends them to the table's COPY.
type pgWorker []*pgCopy

func (w pgWorker) sink(t *table) (sink, error) {
	for _, c := range w {
		if c.t == t {
			return &pgSink{c: c}, nil
		}
	}
	return nil, fmt.Errorf("no COPY for table %s", t.name)
}

func (w pgWorker) close() error { return nil }

// pgSink gathers one table's rows and sends them to its COPY when they
// are pgBatchBytes, and the rest when closed.
type pgSink struct {
	c   *pgCopy
	ctx context.Context // the last write's, for close
	buf []byte
}

func (s *pgSink) write(ctx context.Context, rows []val, n int) error {
	s.ctx = ctx
	if s.buf == nil {
		select {
		case s.buf = <-s.c.free:
		default:
			s.buf = make([]byte, 0, pgBatchBytes+pgBatchBytes/4)
		}
	}
	s.buf = appendBinary(s.buf, s.c.t, rows, n)
	if len(s.buf) < pgBatchBytes {
		return nil
	}
	return s.send()
}

// send hands the rows gathered to the COPY.
func (s *pgSink) send() error {
	select {
	case s.c.batches <- s.buf:
		s.buf = nil
		return nil
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
}

func (s *pgSink) close() error {
	if len(s.buf) == 0 {
		return nil
	}
	return s.send()
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
