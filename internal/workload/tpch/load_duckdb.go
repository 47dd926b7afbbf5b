package tpch

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/numalab/numalab/internal/engine"
)

// DuckDB loads each table by one INSERT INTO t SELECT ... FROM a table
// function (duckdb-go's RegisterTableUDF, a parallel chunk source) that
// DuckDB's own threads call for chunks of rows, which they then write
// into its storage in parallel: each thread takes the next chunk of the
// table's keys, generates it and fills DuckDB's vectors from it a column
// at a time, 2,048 rows a call. No text is formatted or parsed, and no
// file is written beside the database. Numbers and dates are written into
// the vectors in Go (dates as days from startDate, which the INSERT adds
// back); text crosses cgo a string at a time (DuckDB copies it from Go's
// memory), except the columns of duckEnums, which go as an ENUM (its index
// looked up in Go, no string crossing cgo) and are cast back to text. A
// chunk of orders also makes its lineitems, and a chunk of parts its
// partsupps: each table's function generates its group's chunks and keeps
// its own table's rows, so orders and parts are generated twice (the
// whole generator is about a twentieth of a load's CPU).
//
// Insertion order is not preserved during the load
// (preserve_insertion_order off, set back after, as DuckDB's parallel
// insert then writes whole row groups from each thread; with it on,
// small batches are merged and written twice): rows are in key order
// within a chunk, not across chunks, as with parallel appends.
//
// This replaced a row table function (go-duckdb v2.1.0, whose chunk
// function failed at its first call), which replaced text files read by
// DuckDB's CSV reader, which replaced the Appender. Measured interleaved
// at SF 1 on a shared 2-CPU machine (load average 5 to 6), the chunk
// function loads at 505,000-531,000 rows/cpu-s against 447,000-467,000
// for the row function under go-duckdb v2.1.0 and DuckDB 1.2.1 (median
// 523,000 against 458,000, three runs each; the gain is the new driver's
// and DuckDB 1.5's together, not told apart); the row function in turn
// cost about as much CPU a row as the CSV reader (which parsed every
// value and checked its UTF-8). Each call first reads the cache lines of
// the comments it hands over (warm), which made the load 1.07-1.35 times
// as fast (three interleaved pairs at SF 1). On this 2-CPU machine at SF 1
// the load runs at 1.1 to 1.2 million rows/s when its host is quiet
// (docs/workloads/tpch.md). The rows are the same: every column of every
// table hashes alike (TestLoadCountsAndSplit). Three fifths of a load's CPU
// is DuckDB's storage (string compression and statistics, row groups
// written), which no path avoids.

// duckEnums are the text columns whose values come from a short list:
// DuckDB's table function hands them over as an ENUM (an index, no
// string crossing cgo), and the INSERT casts them back to text.
var duckEnums = map[string][]string{
	"l_returnflag":    {"N", "R", "A"},
	"l_linestatus":    {"O", "F"},
	"l_shipinstruct":  instructions,
	"l_shipmode":      shipModes,
	"o_orderstatus":   {"F", "O", "P"},
	"o_orderpriority": priorities,
	"c_mktsegment":    segments,
	"p_type":          partTypes,
	"p_container":     containers,
}

// duckLoads counts this process's DuckDB loads, whose table functions'
// names it tells apart.
var duckLoads atomic.Int64

// insertDuckDB loads the chunks cs into eng's tables, which are new and
// empty, one table function and one INSERT a table, and returns the rows
// loaded per table (in tables' order).
func insertDuckDB(ctx context.Context, eng engine.Engine, g *gen, cs []chunk, workers int) (rows []int64, err error) {
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
	// A table function's name can be registered once a database; the
	// functions live as long as the database is open, in memory.
	load := duckLoads.Add(1)
	rows = make([]int64, len(tables))
	for i, t := range tables {
		src, err := newDuckSource(g, t, cs, workers)
		if err != nil {
			return rows, err
		}
		name := "numalab_tpch_" + t.name + "_" + strconv.FormatInt(load, 10)
		err = duckdb.RegisterTableUDF(conn, name, duckdb.ParallelChunkTableFunction{
			BindArguments: func(map[string]any, ...any) (duckdb.ParallelChunkTableSource, error) { return src, nil },
		})
		if err != nil {
			return rows, fmt.Errorf("loading %s: %w", t.name, err)
		}
		res, err := conn.ExecContext(ctx, src.insert(name))
		if err != nil {
			return rows, fmt.Errorf("loading %s: %w", t.name, err)
		}
		got, err := res.RowsAffected()
		if err != nil || got != src.made.Load() {
			return rows, fmt.Errorf("loading %s: %d rows inserted of the %d made (%v)", t.name, got, src.made.Load(), err)
		}
		rows[i] = got
	}
	return rows, nil
}

// duckSource makes one table's rows for DuckDB, which calls FillChunk
// from several threads at once.
type duckSource struct {
	g       *gen
	t       *table
	ti      int
	cs      []chunk // the chunks of t's group
	workers int
	next    atomic.Int64
	made    atomic.Int64
	cols    []duckdb.ColumnInfo
}

func newDuckSource(g *gen, t *table, cs []chunk, workers int) (*duckSource, error) {
	s := &duckSource{g: g, t: t, workers: workers}
	for i, tt := range tables {
		if tt == t {
			s.ti = i
		}
	}
	grp := tableGroup[s.ti]
	for _, c := range cs {
		if c.group == grp {
			s.cs = append(s.cs, c)
		}
	}
	for _, c := range t.cols {
		var ti duckdb.TypeInfo
		var err error
		switch c.kind {
		case kInt, kDate:
			ti, err = duckdb.NewTypeInfo(duckdb.TYPE_INTEGER)
		case kBig:
			ti, err = duckdb.NewTypeInfo(duckdb.TYPE_BIGINT)
		case kMoney:
			ti, err = duckdb.NewDecimalInfo(15, 2)
		case kText:
			if e, ok := duckEnums[c.name]; ok {
				ti, err = duckdb.NewEnumInfo(e[0], e[1:]...)
			} else {
				ti, err = duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
			}
		}
		if err != nil {
			return nil, err
		}
		s.cols = append(s.cols, duckdb.ColumnInfo{Name: c.name, T: ti})
	}
	return s, nil
}

// insert is the INSERT that reads the table function name into t: dates
// come as days from startDate, ENUMs go back to text.
func (s *duckSource) insert(name string) string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + s.t.name + " SELECT ")
	for i, c := range s.t.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		switch _, enum := duckEnums[c.name]; {
		case c.kind == kDate:
			b.WriteString("DATE '" + startDate.Format("2006-01-02") + "' + " + c.name)
		case enum:
			b.WriteString(c.name + "::VARCHAR")
		default:
			b.WriteString(c.name)
		}
	}
	b.WriteString(" FROM " + name + "()")
	return b.String()
}

func (s *duckSource) ColumnInfos() []duckdb.ColumnInfo { return s.cols }

func (s *duckSource) Cardinality() *duckdb.CardinalityInfo { return nil }

func (s *duckSource) Init() duckdb.ParallelTableSourceInfo {
	return duckdb.ParallelTableSourceInfo{MaxThreads: s.workers}
}

func (s *duckSource) NewLocalState() any { return &duckLocal{b: newBatch()} }

// duckLocal is one DuckDB thread's rows: a chunk's, and how many of them
// it has handed over.
type duckLocal struct {
	b    *batch
	done int
}

// FillChunk fills out with up to a vector's worth of the rows of the
// thread's chunk, a column at a time, generating the next chunk when it
// has handed all of them over; an empty out ends the table.
func (s *duckSource) FillChunk(ls any, out duckdb.DataChunk) error {
	l := ls.(*duckLocal)
	for l.done >= l.b.ns[s.ti] {
		i := s.next.Add(1) - 1
		if i >= int64(len(s.cs)) {
			return out.SetSize(0)
		}
		l.b.reset()
		l.b.fill(s.g, s.cs[i])
		l.done = 0
		s.made.Add(int64(l.b.ns[s.ti]))
	}
	n := min(l.b.ns[s.ti]-l.done, duckdb.GetDataChunkCapacity())
	nc := len(s.t.cols)
	rows := l.b.bufs[s.ti][l.done*nc : (l.done+n)*nc]
	warm(s.t, rows)
	// The size first: a vector's writer takes its length from the chunk.
	if err := out.SetSize(n); err != nil {
		return err
	}
	for ci, c := range s.t.cols {
		var err error
		switch _, enum := duckEnums[c.name]; {
		case c.kind == kInt || c.kind == kDate:
			err = duckColumn(out, ci, rows, nc, func(v val) int32 { return int32(v.i) })
		case c.kind == kBig || c.kind == kMoney:
			err = duckColumn(out, ci, rows, nc, func(v val) int64 { return v.i })
		case enum:
			err = duckColumn(out, ci, rows, nc, func(v val) string { return v.s })
		default:
			err = duckText(out, ci, rows, nc)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
	}
	l.done += n
	return nil
}

// duckColumn sets column ci of out to field ci of each row in rows (nc
// values a row) through DuckDB's typed setter for T, which writes numbers
// into the vector in Go and looks an ENUM's string up in its dictionary.
func duckColumn[T any](out duckdb.DataChunk, ci int, rows []val, nc int, get func(val) T) error {
	for r := 0; r*nc < len(rows); r++ {
		if err := duckdb.SetChunkValue(out, ci, r, get(rows[r*nc+ci])); err != nil {
			return err
		}
	}
	return nil
}

// duckText sets text column ci of out through the vector's string writer,
// which DuckDB copies from Go's memory (one cgo call a string).
func duckText(out duckdb.DataChunk, ci int, rows []val, nc int) error {
	vec, err := out.GetVector(ci)
	if err != nil {
		return err
	}
	w, err := duckdb.GetVectorWriter[string](vec)
	if err != nil {
		return err
	}
	for r := 0; r*nc < len(rows); r++ {
		if err := w.Set(r, rows[r*nc+ci].s); err != nil {
			return err
		}
	}
	return nil
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
