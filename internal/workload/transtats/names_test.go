package transtats

import "github.com/numalab/numalab/internal/engine"

// The tests' short names for the registry's dialects.
type Dialect = engine.Dialect

const (
	SQLite   = engine.SQLite
	DuckDB   = engine.DuckDB
	Postgres = engine.Postgres
	MariaDB  = engine.MariaDB
)
