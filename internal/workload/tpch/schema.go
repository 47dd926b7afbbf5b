package tpch

import "strings"

// Dialects are the engine names (engine.Engine.Name) this package writes
// SQL for.
const (
	dialectSQLite   = "sqlite"
	dialectDuckDB   = "duckdb"
	dialectPostgres = "postgres"
)

// sqlType is a column kind's type in dialect. Decimals are DECIMAL(15,2)
// on DuckDB and PostgreSQL, REAL (a double) on SQLite, which has no
// decimal; dates are text ('1995-03-15') on SQLite.
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
	if dialect == dialectDuckDB {
		return "VARCHAR"
	}
	return "TEXT"
}

// createTable is t's CREATE TABLE in dialect. SQLite gets its primary key
// here (rows arrive in key order, so the index grows at its end);
// PostgreSQL gets it after the load (addKeys); DuckDB gets none: its scans
// need no index, and an index would slow the load.
func createTable(t *table, dialect string) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE " + t.name + " (")
	for i, c := range t.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.name + " " + sqlType(c.kind, dialect) + " NOT NULL")
	}
	if dialect == dialectSQLite {
		b.WriteString(", PRIMARY KEY (" + t.pkey + ")")
	}
	b.WriteString(")")
	return b.String()
}
