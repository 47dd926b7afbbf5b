package tpch

// How tpch loads one kind of engine, chosen once by asking the engine how
// it keeps a table (engine.Spec.Storage) and whether it is a server; the
// SQL each engine spells its own way comes from the engine (Spec.SQL).

import (
	"context"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/engine"
)

// keys says when a table gets its primary key.
type keys int

const (
	keysInCreate keys = iota // with the table: the rows arrive in key order
	keysAfter                // after the load (ALTER TABLE ADD PRIMARY KEY)
	keysNone                 // never: scans need no index
)

// loader is how tpch loads one kind of engine.
type loader struct {
	// method names the load's path, for the record.
	method string
	// keys is when the tables get their primary keys; indexes are
	// secondary indexes made after the load.
	keys    keys
	indexes []string
	// oneWriter says one worker writes (SQLite's one writer at a time).
	oneWriter bool
	// insert generates every table's rows into eng's tables, which exist
	// and are empty, by the engine's bulk path over the chunks cs, and
	// returns the rows written per table (in tables' order).
	insert func(ctx context.Context, eng engine.Engine, g *gen, cs []chunk, workers int) ([]int64, error)
	// Bytes per unit of scale factor a load writes, tables and keys
	// included, with about 15% to spare, and a fixed part for the
	// smallest loads (bytesFor).
	fixed, perSF float64
}

// Bytes per unit of scale factor each loader writes: measured at SF 0.01
// and 0.1 on this package's load: SQLite 1.26 GB per SF, DuckDB 0.37 GB,
// PostgreSQL 1.50 GB, MariaDB 1.74 GB (19.7 MB at SF 0.01, 176.6 MB at SF
// 0.1, secondary indexes included); TestQueriesAgreeAcrossEngines checks
// them at SF 0.01.
var (
	// A file kept in key order (SQLite): prepared multi-row INSERTs from
	// one writer, keys with the tables.
	fileLoader = loader{method: "prepared multi-row INSERT", oneWriter: true, fixed: 1 << 20, perSF: 1.45e9,
		insert: func(ctx context.Context, eng engine.Engine, g *gen, cs []chunk, _ int) ([]int64, error) {
			return generate(ctx, g, cs, 1, func(context.Context) (worker, error) { return &sqliteWorker{eng: eng}, nil })
		}}
	// Columns (DuckDB): chunk table functions, no keys.
	columnLoader = loader{method: "INSERT from chunk table functions", keys: keysNone, insert: insertDuckDB,
		fixed: 2 << 20, perSF: 0.45e9}
	// A heap (PostgreSQL): binary COPY from every worker, keys after.
	heapLoader = loader{method: "COPY (binary)", keys: keysAfter, fixed: 1 << 20, perSF: 1.75e9,
		insert: func(ctx context.Context, eng engine.Engine, g *gen, cs []chunk, workers int) ([]int64, error) {
			return generate(ctx, g, cs, workers,
				func(ctx context.Context) (worker, error) { return &pgWorker{ctx: ctx, eng: eng}, nil })
		}}
	// A server kept in key order (MariaDB): the engine's Bulk from every
	// worker, keys with the tables, then the secondary indexes its
	// nested-loop joins need (myIndexes).
	clusteredLoader = loader{method: "prepared multi-row INSERT", indexes: myIndexes, fixed: 4 << 20, perSF: 2.0e9,
		insert: func(ctx context.Context, eng engine.Engine, g *gen, cs []chunk, workers int) ([]int64, error) {
			return generate(ctx, g, cs, workers,
				func(ctx context.Context) (worker, error) { return &myWorker{ctx: ctx, eng: eng}, nil })
		}}
)

// loaderOf is how tpch loads the engine named name; ok false for an
// engine it has no loader for.
func loaderOf(name string) (engine.Spec, loader, bool) {
	spec, ok := engine.Lookup(name)
	switch {
	case !ok || spec.SQL == nil:
		return spec, loader{}, false
	case spec.Storage == engine.StorageHeap:
		return spec, heapLoader, true
	case spec.Storage == engine.StorageColumns:
		return spec, columnLoader, true
	case spec.Storage == engine.StorageClustered && spec.Server:
		return spec, clusteredLoader, true
	case spec.Storage == engine.StorageClustered:
		return spec, fileLoader, true
	}
	return spec, loader{}, false
}

// afterLoad is what runs after the rows are in: the keys (keysAfter), the
// secondary indexes, and the statistics.
func (l loader) afterLoad(d engine.SQL) []string {
	var post []string
	if l.keys == keysAfter {
		for _, t := range tables {
			post = append(post, "ALTER TABLE "+t.name+" ADD PRIMARY KEY ("+t.pkey+")")
		}
	}
	post = append(post, l.indexes...)
	return append(post, d.Analyze(tableNames()...))
}

// afterCommit is what an engine writes after a load's last commit, for
// the load's note: DuckDB writes some of it again when the file closes
// (its checkpoint), which the load benchmark times too.
func afterCommit(spec engine.Spec) string {
	if spec.SQL == nil || spec.SQL.Checkpoint() == "" {
		return ""
	}
	return ", before " + spec.Title + "'s checkpoint"
}

// sqlType is a column kind's type in d. Decimals are DECIMAL(15,2) where
// the engine has them (SQLite's is REAL, a double); dates are text on an
// engine without dates. Text is the engine's best text of at most 199
// characters (the longest of the specification's columns): MariaDB's
// VARCHAR(199), which InnoDB keeps in the row and MariaDB's in-memory
// temporary tables of GROUP BY and DISTINCT take, unlike TEXT.
func sqlType(k kind, d engine.SQL) string {
	switch k {
	case kInt:
		return d.Type(engine.Integer)
	case kBig:
		return d.Type(engine.BigInt)
	case kMoney:
		return d.Decimal(15, 2)
	case kDate:
		return d.Type(engine.Date)
	}
	return d.Text(199)
}

// createTable is t's CREATE TABLE on engine spec. Engines that keep a
// table in key order (SQLite, MariaDB) get its primary key here (rows
// arrive in key order, so the index grows at its end; InnoDB clusters a
// table by its primary key, and adding one later would copy the table);
// a heap (PostgreSQL) gets it after the load (Load); columns (DuckDB) get
// none: scans need no index, and an index would slow the load.
func createTable(t *table, spec engine.Spec) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE " + t.name + " (")
	for i, c := range t.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.name + " " + sqlType(c.kind, spec.SQL) + " NOT NULL")
	}
	if spec.Storage == engine.StorageClustered {
		b.WriteString(", PRIMARY KEY (" + t.pkey + ")")
	}
	b.WriteString(")")
	return b.String()
}

// date is a date literal: DATE '1995-03-15', or the text where dates are.
func (q *qb) date(t time.Time) string { return q.d.Date(t) }

// year is the year of a date column, an integer.
func (q *qb) year(col string) string { return q.d.Year(col) }

// loaderMethod names the load's path on the engine named name, for the
// record.
func loaderMethod(name string) string {
	_, l, _ := loaderOf(name)
	return l.method
}

// pageCosts says the engine named name has page-cost settings a storage
// probe can advise on (StorageAdvice).
func pageCosts(name string) bool {
	spec, _ := engine.Lookup(name)
	return spec.PageCosts
}
