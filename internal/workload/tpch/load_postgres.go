package tpch

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/numalab/numalab/internal/engine"
)

// PostgreSQL loads by COPY in binary format: each worker streams each
// table's rows into a COPY of its own, on a connection of its own, open
// from the table's first rows to the end of the table's chunk group, and
// writes each chunk's rows into it as soon as it has made them (through a
// pipe that the connection reads as it sends). The worker encodes the rows
// itself, which is several times faster than encoding each value through
// the driver, and the server then parses no numbers or dates, which is
// most of a text COPY's cost.
//
// This replaced a COPY statement per 4 MiB of a table's rows, gathered
// and then sent: smaller COPYs of that kind cost more (at 256 KiB a load
// ran at three quarters of the speed), as each COPY's own cost in the
// backend is about a millisecond. Handing the connection whole chunks
// through two buffers, so that the worker makes the next chunk while the
// connection sends one, was no faster than the pipe (four interleaved
// pairs at SF 1): the CPUs are busy either way. A worker holds two
// connections at a time (a group's two tables), so a load uses up to
// twice as many connections as workers. A COPY lasts as long as its
// table's part of the load: a statement_timeout shorter than that, on a
// user's server, ends the load. The connections are the engine's setup
// handle's (engine.Engine.DB), whose driver connection is pgx's: a stream
// connection (Connect) waits for the server on its own thread, which
// suits one round trip per call, not bulk writes from a goroutine per
// worker.

type pgWorker struct {
	ctx context.Context // the load's, for the COPYs
	eng engine.Engine
}

func (w *pgWorker) sink(t *table) (sink, error) {
	conn, err := w.eng.DB().Conn(w.ctx)
	if err != nil {
		return nil, err
	}
	stmt := "COPY " + pgx.Identifier{w.eng.Schema(), t.name}.Sanitize() + " FROM STDIN (FORMAT binary)"
	pr, pw := io.Pipe()
	s := &pgSink{t: t, conn: conn, pw: pw, ended: make(chan struct{}), buf: []byte(pgCopyHeader)}
	go func() {
		defer close(s.ended)
		s.err = conn.Raw(func(dc any) error {
			sc, ok := dc.(*stdlib.Conn)
			if !ok {
				return fmt.Errorf("postgres connection is a %T, not pgx's", dc)
			}
			_, err := sc.Conn().PgConn().CopyFrom(w.ctx, pr, stmt)
			if err != nil && w.ctx.Err() != nil {
				// Cancelled, the connection was closed under it.
				err = fmt.Errorf("%w (%v)", w.ctx.Err(), err)
			}
			return err
		})
		// A write after the COPY ended gets an error, not a wait.
		pr.CloseWithError(cmp.Or(s.err, errCopyEnded))
	}()
	return s, nil
}

// pgSink streams one table's rows into one COPY.
type pgSink struct {
	t     *table
	conn  *sql.Conn
	pw    *io.PipeWriter // to the COPY
	buf   []byte         // the rows being encoded (first the COPY's header)
	ended chan struct{}  // closed when the COPY has ended, with err set
	err   error          // the COPY's result
}

// errCopyEnded is a write's error when the COPY ended without one, which
// no write sees: the worker writes to a COPY only before closing it.
var errCopyEnded = errors.New("the COPY has ended")

// pgCopyHeader starts a binary COPY: signature, flags, header extension
// length.
const pgCopyHeader = "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00"

// pgEpochDay is 2000-01-01, PostgreSQL's day 0, as a day from startDate.
var pgEpochDay = int64(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Sub(startDate).Hours() / 24)

func (s *pgSink) write(_ context.Context, rows []val, n int) error {
	s.buf = appendBinary(s.buf, s.t, rows, n)
	return s.send()
}

// send writes the rows encoded into the COPY; a COPY that has ended
// returns its error.
func (s *pgSink) send() error {
	_, err := s.pw.Write(s.buf)
	s.buf = s.buf[:0]
	if err != nil {
		<-s.ended
		return cmp.Or(s.err, err)
	}
	return nil
}

// close ends the COPY and returns its connection. With abort nil the COPY
// ends normally, which commits it; else it fails with abort's message, and
// the server keeps none of its rows.
func (s *pgSink) close(abort error) error {
	var err error
	if abort == nil {
		s.buf = binary.BigEndian.AppendUint16(s.buf, 0xffff)
		err = s.send()
	}
	s.pw.CloseWithError(abort)
	<-s.ended
	return errors.Join(cmp.Or(err, s.err), s.conn.Close())
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
