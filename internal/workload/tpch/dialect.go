package tpch

// What differs per engine, keyed by the registry's dialect: the SQL each
// engine spells its own way, its load's method and size, and what its
// settings can be advised on. The rest of the package asks these, or the
// engine registry for a capability.

import (
	"context"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/engine"
)

// afterCommit is what an engine writes after a load's last commit, for
// the load's note: DuckDB writes some of it again when the file closes
// (its checkpoint), which the load benchmark times too.
var afterCommit = map[engine.Dialect]string{engine.DuckDB: ", before DuckDB's checkpoint"}

// pageCosts says the engine's optimizer has page-cost settings a storage
// probe can advise on (PostgreSQL's random_page_cost and seq_page_cost:
// StorageAdvice).
var pageCosts = map[engine.Dialect]bool{engine.Postgres: true}

// sqlType is a column kind's type in dialect. Decimals are DECIMAL(15,2)
// on DuckDB, PostgreSQL and MariaDB, REAL (a double) on SQLite, which has
// no decimal; dates are text ('1995-03-15') on SQLite. Text is VARCHAR(199)
// on MariaDB (the longest of the specification's columns is 199
// characters): InnoDB keeps a VARCHAR in the row, and MariaDB's
// in-memory temporary tables of GROUP BY and DISTINCT take no TEXT.
func sqlType(k kind, dialect engine.Dialect) string {
	switch k {
	case kInt:
		return "INTEGER"
	case kBig:
		return "BIGINT"
	case kMoney:
		if dialect == engine.SQLite {
			return "REAL"
		}
		return "DECIMAL(15,2)"
	case kDate:
		if dialect == engine.SQLite {
			return "TEXT"
		}
		return "DATE"
	}
	switch dialect {
	case engine.DuckDB:
		return "VARCHAR"
	case engine.MariaDB:
		return "VARCHAR(199)"
	}
	return "TEXT"
}

// createTable is t's CREATE TABLE in dialect. SQLite and MariaDB get
// their primary keys here (rows arrive in key order, so the index grows at
// its end; InnoDB clusters a table by its primary key, and adding one
// later would copy the table); PostgreSQL gets it after the load (Load);
// DuckDB gets none: its scans need no index, and an index would slow the
// load. MariaDB's secondary indexes come after the load (myIndexes).
func createTable(t *table, dialect engine.Dialect) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE " + t.name + " (")
	for i, c := range t.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.name + " " + sqlType(c.kind, dialect) + " NOT NULL")
	}
	if dialect == engine.SQLite || dialect == engine.MariaDB {
		b.WriteString(", PRIMARY KEY (" + t.pkey + ")")
	}
	b.WriteString(")")
	return b.String()
}

// tableCount counts the tables of a name (the query's one argument) in
// numalab's schema (MariaDB: database), per server engine.
var tableCount = map[engine.Dialect]string{
	engine.Postgres: "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = $1",
	engine.MariaDB:  "SELECT count(*) FROM information_schema.tables WHERE table_schema = database() AND table_name = ?",
}

// metaKeyType is the key column's type: MariaDB indexes no TEXT whole.
func metaKeyType(dialect engine.Dialect) string {
	if dialect == engine.MariaDB {
		return "VARCHAR(64)"
	}
	return "TEXT"
}

var loadMethod = map[engine.Dialect]string{
	engine.Postgres: "COPY (binary)",
	engine.DuckDB:   "INSERT from chunk table functions",
	engine.SQLite:   "prepared multi-row INSERT",
	engine.MariaDB:  "prepared multi-row INSERT",
}

// Bytes per unit of scale factor each engine writes for a load, tables
// and (SQLite, PostgreSQL, MariaDB) keys included, with about 15% to
// spare, and a fixed part for the smallest loads. Measured at SF 0.01 and
// 0.1 on this package's load: SQLite 1.26 GB per SF, DuckDB 0.37 GB,
// PostgreSQL 1.50 GB, MariaDB 1.74 GB (19.7 MB at SF 0.01, 176.6 MB at
// SF 0.1, secondary indexes included); TestQueriesAgreeAcrossEngines
// checks them at SF 0.01.
var bytesPerSF = map[engine.Dialect]struct{ fixed, perSF float64 }{
	engine.SQLite:   {1 << 20, 1.45e9},
	engine.DuckDB:   {2 << 20, 0.45e9},
	engine.Postgres: {1 << 20, 1.75e9},
	engine.MariaDB:  {4 << 20, 2.0e9},
}

// date is a date literal: DATE '1995-03-15', or on SQLite the text.
func (q *qb) date(t time.Time) string {
	s := "'" + t.Format(time.DateOnly) + "'"
	if q.d == engine.SQLite {
		return s
	}
	return "DATE " + s
}

// year is the year of a date column, an integer.
func (q *qb) year(col string) string {
	if q.d == engine.SQLite {
		return "CAST(strftime('%Y', " + col + ") AS INTEGER)"
	}
	return "extract(year from " + col + ")"
}

// dialect is how tpch loads one engine, beside its SQL text.
type dialect struct {
	// oneWriter says one worker writes (SQLite's one writer at a time).
	oneWriter bool
	// insert generates every table's rows into eng's tables, which exist
	// and are empty, by the engine's bulk path over the chunks cs, and
	// returns the rows written per table (in tables' order).
	insert func(ctx context.Context, eng engine.Engine, g *gen, cs []chunk, workers int) ([]int64, error)
	// afterLoad is what runs after the rows are in: PostgreSQL's primary
	// keys and ANALYZE, SQLite's and DuckDB's ANALYZE, MariaDB's
	// secondary indexes (myIndexes) and ANALYZE TABLE.
	afterLoad func() []string
}

var dialects = map[engine.Dialect]dialect{
	engine.SQLite: {oneWriter: true,
		insert: func(ctx context.Context, eng engine.Engine, g *gen, cs []chunk, _ int) ([]int64, error) {
			return generate(ctx, g, cs, 1, func(context.Context) (worker, error) { return &sqliteWorker{eng: eng}, nil })
		},
		afterLoad: func() []string { return []string{"ANALYZE"} }},
	engine.DuckDB: {insert: insertDuckDB,
		afterLoad: func() []string { return []string{"ANALYZE"} }},
	engine.Postgres: {
		insert: func(ctx context.Context, eng engine.Engine, g *gen, cs []chunk, workers int) ([]int64, error) {
			return generate(ctx, g, cs, workers, func(ctx context.Context) (worker, error) { return &pgWorker{ctx: ctx, eng: eng}, nil })
		},
		afterLoad: func() []string {
			var post []string
			names := make([]string, len(tables))
			for i, t := range tables {
				post = append(post, "ALTER TABLE "+t.name+" ADD PRIMARY KEY ("+t.pkey+")")
				names[i] = t.name
			}
			return append(post, "ANALYZE "+strings.Join(names, ", "))
		}},
	engine.MariaDB: {
		insert: func(ctx context.Context, eng engine.Engine, g *gen, cs []chunk, workers int) ([]int64, error) {
			return generate(ctx, g, cs, workers, func(ctx context.Context) (worker, error) { return &myWorker{ctx: ctx, eng: eng}, nil })
		},
		afterLoad: func() []string {
			return append(append([]string{}, myIndexes...), "ANALYZE TABLE "+strings.Join(tableNames(), ", "))
		}},
}
