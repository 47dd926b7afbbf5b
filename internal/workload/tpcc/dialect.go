package tpcc

// What tpcc does its own way on each kind of engine (its server-side code,
// where its rows go, what a load costs), chosen once by how the engine
// keeps a table (engine.Spec.Storage) and whether it is a server; the SQL
// each engine spells its own way comes from the engine (Spec.SQL).

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/numalab/numalab/internal/engine"
)

// afterData is what a load runs after the rows are in: the primary keys
// of an engine that adds them after a load (PostgreSQL's heap), the
// secondary indexes (not on DuckDB's columns, which need none), and the
// engine's statistics after a load (SQLite's and DuckDB's ANALYZE,
// PostgreSQL's VACUUM ANALYZE, MariaDB's ANALYZE TABLE of the nine).
// Then load makes the transactions' server-side code.
func afterData(spec engine.Spec, k kind) []string {
	var out []string
	if k.keyAfterLoad {
		for _, t := range tables {
			if pk := primaryKey(t); pk != "" {
				out = append(out, "ALTER TABLE "+t.name+" ADD PRIMARY KEY ("+pk+")")
			}
		}
	}
	if k.indexes {
		out = append(out, indexes...)
	}
	return append(out, spec.SQL.AnalyzeLoaded(tableNames()...))
}

// Marker tables: numalab_meta in a file of its own (SQLite, DuckDB),
// tpcc_meta in numalab's schema or database on a server, which other
// workloads share.
const (
	metaFile   = "numalab_meta"
	metaServer = "tpcc_meta"
)

// metaTable is numalab's marker table on an engine.
func metaTable(spec engine.Spec) string {
	if spec.Server {
		return metaServer
	}
	return metaFile
}

// textMax are the lengths of Clause 1.3 of the TEXT columns that an index
// holds (engine.SQL.Text: they keep MariaDB's index within InnoDB's 3072
// bytes); every other TEXT column is at most 500 characters, the longest
// C_DATA.
var textMax = map[string]int{"c_first": 16, "c_last": 16}

// ddlFor is t's CREATE TABLE on an engine: the schema's own DDL on the
// engine it is written for (SQLite, in schema.go), else its columns in
// the engine's types (INTEGER, TEXT of textMax or 500 characters, REAL a
// double, so that every engine holds the same values) with the primary
// key when the engine keeps the rows in its order (InnoDB, which the rows
// then arrive in), else without it, which primaryKey adds after the load
// (PostgreSQL) or which is left out (DuckDB: see Load).
func ddlFor(t *table, spec engine.Spec, k kind) string {
	if k.ownDDL {
		return t.ddl
	}
	types := map[string]string{}
	for _, m := range colRE.FindAllStringSubmatch(t.ddl, -1) {
		types[m[1]] = m[2]
	}
	var b strings.Builder
	b.WriteString("CREATE TABLE " + t.name + " (")
	for i, c := range t.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		typ := spec.SQL.Type(engine.Integer)
		switch types[c] {
		case "TEXT":
			typ = spec.SQL.Text(cmp.Or(textMax[c], 500))
		case "REAL":
			typ = spec.SQL.Type(engine.Double)
		}
		b.WriteString(c + " " + typ)
	}
	if pk := primaryKey(t); pk != "" && k.keyInTable {
		b.WriteString(", PRIMARY KEY (" + pk + ")")
	}
	b.WriteString(")")
	return b.String()
}

// kind is what tpcc does its own way on one kind of engine, beside the
// SQL the engine spells.
type kind struct {
	// ownDDL: the tables are made by the schema's DDL as written
	// (SQLite's, clustered WITHOUT ROWID tables); keyInTable: the primary
	// key is declared with the table (InnoDB); keyAfterLoad: added after
	// the load (PostgreSQL's heap); indexes: the secondary indexes are
	// built after the load (all but DuckDB).
	ownDDL, keyInTable, keyAfterLoad, indexes bool
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
	// file's, after the engine's checkpoint.
	size func(ctx context.Context, eng engine.Engine) (int64, error)
	// bytesPerWarehouse is what one warehouse takes loaded (size.go);
	// loadWAL the write-ahead log a load may keep beside it.
	bytesPerWarehouse, loadWAL int64
}

// The kinds of engine tpcc runs on.
var (
	// An embedded engine that keeps rows in key order (SQLite): one
	// writer, the clauses' statements.
	clusteredFile = kind{ownDDL: true, indexes: true, oneWriter: true, loadErr: engine.SQLiteError,
		runner: newStmtRunner, bytesPerWarehouse: sqliteBytesPerWarehouse}
	// An embedded engine of compressed columns (DuckDB).
	columnFile = kind{runner: newStmtRunner, bytesPerWarehouse: duckdbBytesPerWarehouse}
	// A server that keeps rows in a heap (PostgreSQL): PL/pgSQL functions.
	heapServer = kind{keyAfterLoad: true, indexes: true, drop: dropPG, codeKind: "functions",
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
			names := append(tableNames(), metaServer)
			err := eng.DB().QueryRowContext(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname = ANY($1)`, names).Scan(&n)
			return n, err
		},
		bytesPerWarehouse: pgBytesPerWarehouse, loadWAL: pgMaxWAL}
	// A server that keeps rows in key order (MariaDB's InnoDB): stored
	// procedures.
	clusteredServer = kind{keyInTable: true, indexes: true, drop: dropMy, code: createMyProcedures, codeKind: "procedures",
		runner: func(ctx context.Context, w *Workload) (runner, error) {
			osSQL, slSQL := myCalls(w.opt.Augmented)
			return newCallRunner(ctx, w, osSQL, slSQL)
		},
		size: func(ctx context.Context, eng engine.Engine) (int64, error) {
			var n int64
			names := "'" + strings.Join(append(tableNames(), metaServer), "', '") + "'"
			err := eng.DB().QueryRowContext(ctx, `SELECT coalesce(sum(data_length + index_length), 0)
			FROM information_schema.tables WHERE table_schema = database() AND table_name IN (`+names+`)`).Scan(&n)
			return n, err
		},
		bytesPerWarehouse: myBytesPerWarehouse}
)

// kindOf is the engine named name and tpcc's kind of it; ok is false for
// an engine tpcc has no kind for.
func kindOf(name string) (engine.Spec, kind, bool) {
	spec, ok := engine.Lookup(name)
	switch {
	case !ok || spec.SQL == nil:
		return spec, kind{}, false
	case spec.Storage == engine.StorageHeap && spec.Server:
		return spec, heapServer, true
	case spec.Storage == engine.StorageClustered && spec.Server:
		return spec, clusteredServer, true
	case spec.Storage == engine.StorageClustered:
		return spec, clusteredFile, true
	case spec.Storage == engine.StorageColumns:
		return spec, columnFile, true
	}
	return spec, kind{}, false
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
		"DROP TABLE IF EXISTS " + q + "." + metaServer,
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
	stmts = append(stmts, "DROP TABLE IF EXISTS "+metaServer)
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
