package tpch

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/numalab/numalab/internal/engine"
)

// DuckDB loads through its own CSV reader, which parses in parallel in
// C++, instead of the Appender, which crosses cgo once a value and copies
// every string (a load then costs a fifth less CPU per row; most of the
// rest is DuckDB's storage, which any path pays). The workers write
// the rows as text (load_text.go) into files of their own in a directory
// beside the database, one a table; then one INSERT a table reads them
// all, with the columns' types given (nothing sniffed). The files are
// removed as soon as they are read, and their directory when the load
// ends, failed or not.
//
// A load larger than duckSegmentBytes of text goes in segments, each a run
// of chunks written, read and removed before the next: the files never
// hold more than one segment. Insertion order is not preserved during the
// load (preserve_insertion_order off, as DuckDB's parallel insert then
// writes whole row groups from each thread; with it on, small batches are
// merged and written twice, which doubles the reader's cost): rows are in
// key order within a chunk, not across chunks, as with parallel appends.

// duckSegmentBytes caps the text files of one segment.
const duckSegmentBytes = 256 << 20

// textBytesPerKey is about how many bytes of text one key of a chunk
// group writes, a little more than measured at SF 0.01 and 0.1 (an order
// and its lines 600–614, a part and its partsupps 691–701, a customer 161,
// a supplier 138, the nations and regions 2,653 in their one chunk).
var textBytesPerKey = [...]int64{groupFixed: 4096, groupSupplier: 150, groupPart: 740, groupCustomer: 170, groupOrders: 640}

// duckSegments splits cs into runs of whole chunks of at most max bytes of
// text each (a chunk larger than max is a run of its own).
func duckSegments(cs []chunk, max int64) [][]chunk {
	var out [][]chunk
	start, bytes := 0, int64(0)
	for i, c := range cs {
		b := (c.hi - c.lo) * textBytesPerKey[c.group]
		if i > start && bytes+b > max {
			out = append(out, cs[start:i])
			start, bytes = i, 0
		}
		bytes += b
	}
	return append(out, cs[start:])
}

// segmentBytes is the text of the largest segment of segs.
func segmentBytes(segs [][]chunk) int64 {
	var most int64
	for _, seg := range segs {
		var b int64
		for _, c := range seg {
			b += (c.hi - c.lo) * textBytesPerKey[c.group]
		}
		most = max(most, b)
	}
	return most
}

// insertDuckDB loads the chunks cs into eng's tables through text files in
// segments of at most segBytes (duckSegmentBytes, smaller in tests) and
// returns the rows loaded per table (in tables' order).
func insertDuckDB(ctx context.Context, eng engine.Engine, g *gen, cs []chunk, workers int, segBytes int64) (rows []int64, err error) {
	segs := duckSegments(cs, segBytes)
	dir, err := os.MkdirTemp(filepath.Dir(eng.Path()), filepath.Base(eng.Path())+".load-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if rerr := os.RemoveAll(dir); err == nil {
			err = rerr
		}
	}()
	// Room for the largest segment's files and the database beside them.
	dbBytes, err := EstimatedBytes(g.sf, dialectDuckDB)
	if err != nil {
		return nil, err
	}
	room, err := engine.RoomAt(dir)
	if err != nil {
		return nil, err
	}
	if err := room.Check(segmentBytes(segs) + dbBytes); err != nil {
		return nil, fmt.Errorf("the database and its load's text files: %w", err)
	}
	conn, err := eng.DB().Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	restore, err := setDuck(ctx, conn, "preserve_insertion_order", "false")
	if err != nil {
		return nil, err
	}
	defer func() {
		if rerr := restore(); err == nil {
			err = rerr
		}
	}()
	rows = make([]int64, len(tables))
	for _, seg := range segs {
		fs := &textFiles{dir: dir, files: map[*table][]string{}}
		n, err := generate(ctx, g, seg, workers, fs.worker)
		if err != nil {
			return rows, err
		}
		for i, t := range tables {
			if len(fs.files[t]) == 0 {
				continue
			}
			res, err := conn.ExecContext(ctx, duckReadCSV(t, fs.files[t]))
			if err != nil {
				return rows, fmt.Errorf("loading %s: %w", t.name, err)
			}
			if got, err := res.RowsAffected(); err != nil || got != n[i] {
				return rows, fmt.Errorf("loading %s: %d rows read of the %d written (%v)", t.name, got, n[i], err)
			}
			rows[i] += n[i]
			for _, f := range fs.files[t] {
				if err := os.Remove(f); err != nil {
					return rows, err
				}
			}
		}
	}
	return rows, nil
}

// setDuck sets DuckDB setting name to value on conn and returns what sets
// it back.
func setDuck(ctx context.Context, conn *sql.Conn, name, value string) (restore func() error, err error) {
	var was string
	if err := conn.QueryRowContext(ctx, "SELECT current_setting('"+name+"')::VARCHAR").Scan(&was); err != nil {
		return nil, fmt.Errorf("reading duckdb's %s: %w", name, err)
	}
	if _, err := conn.ExecContext(ctx, "SET "+name+" = "+value); err != nil {
		return nil, fmt.Errorf("setting duckdb's %s: %w", name, err)
	}
	return func() error {
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), "SET "+name+" = "+was); err != nil {
			return fmt.Errorf("setting duckdb's %s back to %s: %w", name, was, err)
		}
		return nil
	}, nil
}

// duckReadCSV is the INSERT that reads files into t: tab-separated, no
// quotes, escapes or header, t's columns and types given.
func duckReadCSV(t *table, files []string) string {
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	var b strings.Builder
	b.WriteString("INSERT INTO " + t.name + " SELECT * FROM read_csv([")
	for i, f := range files {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(f))
	}
	b.WriteString("], delim = '\t', quote = '', escape = '', header = false, auto_detect = false, columns = {")
	for i, c := range t.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(c.name) + ": " + quote(sqlType(c.kind, dialectDuckDB)))
	}
	b.WriteString("})")
	return b.String()
}

// textFiles are one segment's files, per table: each worker's sink writes
// one.
type textFiles struct {
	dir   string
	mu    sync.Mutex
	n     int
	files map[*table][]string
}

func (fs *textFiles) worker(context.Context) (worker, error) { return fs, nil }

func (fs *textFiles) sink(t *table) (sink, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.n++
	name := filepath.Join(fs.dir, t.name+"-"+strconv.Itoa(fs.n)+".tsv")
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	fs.files[t] = append(fs.files[t], name)
	return &textSink{f: f, t: t}, nil
}

func (fs *textFiles) close() error { return nil }

// textSink writes one table's rows into a file as text.
type textSink struct {
	f   *os.File
	t   *table
	buf []byte
}

func (s *textSink) write(_ context.Context, rows []val, n int) error {
	s.buf = appendText(s.buf[:0], s.t, rows, n)
	_, err := s.f.Write(s.buf)
	return err
}

func (s *textSink) close() error { return s.f.Close() }
