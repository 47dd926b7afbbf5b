package tpcc

// What differs per engine, keyed by the registry's dialect: the SQL each
// engine spells its own way, and what a load of it costs. The rest of the
// package asks these functions, or the engine registry for a capability.

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/numalab/numalab/internal/engine"
)

// bytesPerWarehouse is what one warehouse takes loaded, per dialect
// (size.go); loadWAL the write-ahead log a load may keep beside it.
var (
	bytesPerWarehouse = map[engine.Dialect]int64{engine.SQLite: sqliteBytesPerWarehouse, engine.DuckDB: duckdbBytesPerWarehouse,
		engine.Postgres: pgBytesPerWarehouse, engine.MariaDB: myBytesPerWarehouse}
	loadWAL = map[engine.Dialect]int64{engine.Postgres: pgMaxWAL}
)

// tableExistsSQL finds a table by name ($1 or ?) in a dialect.
func tableExistsSQL(dialect engine.Dialect) string {
	switch dialect {
	case engine.SQLite:
		return "SELECT name FROM sqlite_schema WHERE type = 'table' AND name = ?"
	case engine.Postgres:
		return "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1"
	case engine.MariaDB:
		return "SELECT table_name FROM information_schema.tables WHERE table_schema = database() AND table_name = ?"
	}
	return "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema = current_schema() AND table_name = ?"
}

// placeholders returns n parameter markers for dialect.
func placeholders(dialect engine.Dialect, n int) string {
	ps := make([]string, n)
	for i := range ps {
		if dialect == engine.Postgres {
			ps[i] = "$" + strconv.Itoa(i+1)
		} else {
			ps[i] = "?"
		}
	}
	return strings.Join(ps, ", ")
}

// afterData is what a load runs after the rows are in: SQLite's secondary
// indexes and ANALYZE; PostgreSQL's primary keys, indexes, VACUUM ANALYZE
// (then load makes the transaction functions); MariaDB's secondary
// indexes and ANALYZE TABLE (its primary keys come with the tables; then
// load makes the procedures); DuckDB's ANALYZE (its distinct counts).
func afterData(eng engine.Engine) []string {
	var out []string
	switch engine.DialectOf(eng.Name()) {
	case engine.SQLite:
		out = append(append(out, indexes...), "ANALYZE")
	case engine.Postgres:
		for _, t := range tables {
			if pk := primaryKey(t); pk != "" {
				out = append(out, "ALTER TABLE "+t.name+" ADD PRIMARY KEY ("+pk+")")
			}
		}
		out = append(append(out, indexes...), "VACUUM ANALYZE")
	case engine.MariaDB:
		out = append(append(out, indexes...), "ANALYZE TABLE "+strings.Join(tableNames(), ", "))
	case engine.DuckDB:
		out = append(out, "ANALYZE")
	}
	return out
}

// forDialect rewrites a condition's casts for MariaDB, whose CAST knows
// SIGNED, not BIGINT or INTEGER.
func forDialect(dialect engine.Dialect, q string) string {
	if dialect != engine.MariaDB {
		return q
	}
	return strings.NewReplacer(" AS BIGINT)", " AS SIGNED)", " AS INTEGER)", " AS SIGNED)").Replace(q)
}

// metaTable is numalab's marker table in a dialect: numalab_meta in a file
// of its own (SQLite, DuckDB), tpcc_meta in numalab's PostgreSQL schema or
// MariaDB database, which other workloads share.
func metaTable(dialect engine.Dialect) string {
	if dialect == engine.Postgres || dialect == engine.MariaDB {
		return "tpcc_meta"
	}
	return "numalab_meta"
}

// myTextTypes are the MariaDB types of TEXT columns that an index holds:
// their lengths of Clause 1.3, which keep the index within InnoDB's 3072
// bytes. Every other TEXT column is a varchar of its longest value.
var myTextTypes = map[string]string{"c_first": "varchar(16)", "c_last": "varchar(16)"}

// ddlFor is t's CREATE TABLE in dialect, without its primary key, which
// primaryKeyFor adds after the load (PostgreSQL) or which is left out
// (DuckDB: see Load); on MariaDB with it, since InnoDB stores a table in
// its primary key's order and the rows arrive in that order. Types map
// INTEGER to integer, TEXT to text (VARCHAR; MariaDB varchar(500), the
// longest C_DATA, or myTextTypes) and REAL to double precision, so that
// every engine holds the same values.
func ddlFor(t *table, dialect engine.Dialect) string {
	if dialect == engine.SQLite {
		return t.ddl
	}
	types := map[string]string{}
	for _, m := range colRE.FindAllStringSubmatch(t.ddl, -1) {
		types[m[1]] = m[2]
	}
	names := map[string]string{"INTEGER": "integer", "TEXT": "text", "REAL": "double precision"}
	switch dialect {
	case engine.DuckDB:
		names = map[string]string{"INTEGER": "INTEGER", "TEXT": "VARCHAR", "REAL": "DOUBLE"}
	case engine.MariaDB:
		names = map[string]string{"INTEGER": "int", "TEXT": "varchar(500)", "REAL": "double"}
	}
	var b strings.Builder
	b.WriteString("CREATE TABLE " + t.name + " (")
	for i, c := range t.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		typ := names[types[c]]
		if mt, ok := myTextTypes[c]; ok && dialect == engine.MariaDB {
			typ = mt
		}
		b.WriteString(c + " " + typ)
	}
	if pk := primaryKey(t); pk != "" && dialect == engine.MariaDB {
		b.WriteString(", PRIMARY KEY (" + pk + ")")
	}
	b.WriteString(")")
	return b.String()
}

// dialect is what tpcc does its own way on one engine, beside its SQL
// text (the functions above).
type dialect struct {
	// drop drops a previous or partial load of tpcc's objects in
	// numalab's schema (a server's); nil for a file of tpcc's own.
	drop func(ctx context.Context, eng engine.Engine) error
	// code makes the transactions' server-side code (codeKind: PostgreSQL
	// functions, MariaDB procedures) after a load and on every open.
	code     func(ctx context.Context, eng engine.Engine) error
	codeKind string
	// oneWriter says rows go in on one connection (insertAll) and the
	// data is the file's own pages (prewarm reads the file).
	oneWriter bool
	// runner opens one stream's transactions.
	runner func(ctx context.Context, w *Workload) (runner, error)
	// loadErr explains a load's error in the engine's terms.
	loadErr func(error) error
	// size is the loaded tables' size in numalab's schema; nil: the
	// file's, after beforeSize.
	size       func(ctx context.Context, eng engine.Engine) (int64, error)
	beforeSize string
}

var dialects = map[engine.Dialect]dialect{
	engine.SQLite: {oneWriter: true, loadErr: engine.SQLiteError, runner: newStmtRunner},
	engine.DuckDB: {beforeSize: "CHECKPOINT", runner: newStmtRunner},
	engine.Postgres: {drop: dropPG, codeKind: "functions",
		code: func(ctx context.Context, eng engine.Engine) error {
			_, err := eng.DB().ExecContext(ctx, pgFunctionsSQL(eng.Schema()))
			return err
		},
		runner: func(ctx context.Context, w *Workload) (runner, error) {
			osSQL, slSQL := pgCalls(w.eng.Schema(), w.opt.Augmented)
			return newCallRunner(ctx, w, osSQL, slSQL)
		},
		size: func(ctx context.Context, eng engine.Engine) (int64, error) {
			var n int64
			names := make([]string, 0, len(tables)+1)
			for _, t := range tables {
				names = append(names, t.name)
			}
			names = append(names, metaTable(engine.Postgres))
			err := eng.DB().QueryRowContext(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname = ANY($1)`, names).Scan(&n)
			return n, err
		}},
	engine.MariaDB: {drop: dropMy, code: createMyProcedures, codeKind: "procedures",
		runner: func(ctx context.Context, w *Workload) (runner, error) {
			osSQL, slSQL := myCalls(w.opt.Augmented)
			return newCallRunner(ctx, w, osSQL, slSQL)
		},
		size: func(ctx context.Context, eng engine.Engine) (int64, error) {
			var n int64
			err := eng.DB().QueryRowContext(ctx, `SELECT coalesce(sum(data_length + index_length), 0) FROM information_schema.tables
			WHERE table_schema = database() AND table_name IN ('`+strings.Join(tableNames(), "', '")+`', '`+metaTable(engine.MariaDB)+`')`).Scan(&n)
			return n, err
		}},
}

// metaDDL is the marker table's DDL: MariaDB quotes KEY and indexes no
// TEXT whole.
func metaDDL(d engine.Dialect) string {
	if d == engine.MariaDB {
		return "CREATE TABLE " + metaTable(d) + " (`key` varchar(64) PRIMARY KEY, value varchar(64) NOT NULL)"
	}
	return "CREATE TABLE " + metaTable(d) + " (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
}

// dropPG drops the functions and tables a TPC-C load makes in numalab's
// PostgreSQL schema, if they exist; never with CASCADE, so that nothing
// else that depends on them goes.
func dropPG(ctx context.Context, eng engine.Engine) error {
	q := pgx.Identifier{eng.Schema()}.Sanitize()
	stmts := []string{
		"DROP FUNCTION IF EXISTS " + q + ".order_status(integer, integer, integer, integer), " +
			q + ".order_status_aug(integer, integer, integer, integer), " +
			q + ".stock_level(integer, integer, integer), " + q + ".stock_level_aug(integer, integer, integer)",
		"DROP TABLE IF EXISTS " + q + "." + metaTable(engine.Postgres),
	}
	for _, t := range tables {
		stmts = append(stmts, "DROP TABLE IF EXISTS "+q+"."+t.name)
	}
	for _, s := range stmts {
		if _, err := eng.DB().ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// dropMy drops the procedures and tables a TPC-C load makes in numalab's
// MariaDB database, if they exist.
func dropMy(ctx context.Context, eng engine.Engine) error {
	var stmts []string
	for _, p := range []string{"order_status", "order_status_aug", "stock_level", "stock_level_aug"} {
		stmts = append(stmts, "DROP PROCEDURE IF EXISTS "+p)
	}
	stmts = append(stmts, "DROP TABLE IF EXISTS "+metaTable(engine.MariaDB))
	for _, t := range tables {
		stmts = append(stmts, "DROP TABLE IF EXISTS "+t.name)
	}
	for _, s := range stmts {
		if _, err := eng.DB().ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}
