package tpch

import "strings"

// Dialects are the engine names (engine.Engine.Name) this package writes
// SQL for.
const (
	dialectSQLite   = "sqlite"
	dialectDuckDB   = "duckdb"
	dialectPostgres = "postgres"
	dialectMariaDB  = "mariadb"
)

// sqlType is a column kind's type in dialect. Decimals are DECIMAL(15,2)
// on DuckDB, PostgreSQL and MariaDB, REAL (a double) on SQLite, which has
// no decimal; dates are text ('1995-03-15') on SQLite. Text is VARCHAR(199)
// on MariaDB (the longest of the specification's columns is 199
// characters): InnoDB keeps a VARCHAR in the row, and MariaDB's
// in-memory temporary tables of GROUP BY and DISTINCT take no TEXT.
func sqlType(k kind, dialect string) string {
	switch k {
	case kInt:
		return "INTEGER"
	case kBig:
		return "BIGINT"
	case kMoney:
		if dialect == dialectSQLite {
			return "REAL"
		}
		return "DECIMAL(15,2)"
	case kDate:
		if dialect == dialectSQLite {
			return "TEXT"
		}
		return "DATE"
	}
	switch dialect {
	case dialectDuckDB:
		return "VARCHAR"
	case dialectMariaDB:
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
func createTable(t *table, dialect string) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE " + t.name + " (")
	for i, c := range t.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.name + " " + sqlType(c.kind, dialect) + " NOT NULL")
	}
	if dialect == dialectSQLite || dialect == dialectMariaDB {
		b.WriteString(", PRIMARY KEY (" + t.pkey + ")")
	}
	b.WriteString(")")
	return b.String()
}

// myIndexes are MariaDB's secondary indexes, made after the load: its
// joins are nested loops (no hash join by default), which look the inner
// table up by an index, and without one on the foreign keys Q2, Q17, Q20
// and Q21 scan a table per outer row. The specification allows indexes
// on primary and foreign keys (clause 1.4.2.3).
var myIndexes = []string{
	"CREATE INDEX n_regionkey ON nation (n_regionkey)",
	"CREATE INDEX s_nationkey ON supplier (s_nationkey)",
	"CREATE INDEX ps_suppkey ON partsupp (ps_suppkey)",
	"CREATE INDEX c_nationkey ON customer (c_nationkey)",
	"CREATE INDEX o_custkey ON orders (o_custkey)",
	"CREATE INDEX l_partkey ON lineitem (l_partkey, l_suppkey)",
	"CREATE INDEX l_suppkey ON lineitem (l_suppkey)",
}
