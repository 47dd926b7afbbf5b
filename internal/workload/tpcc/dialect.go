package tpcc

// What differs per engine, keyed by the registry's dialect: the SQL each
// engine spells its own way, and what a load of it costs. The rest of the
// package asks these functions, or the engine registry for a capability.

import (
	"strconv"
	"strings"

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

// metaKey is the marker table's key column as a dialect spells it: KEY is
// a reserved word in MariaDB and MySQL.
func metaKey(dialect engine.Dialect) string {
	if dialect == engine.MariaDB {
		return "`key`"
	}
	return "key"
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
