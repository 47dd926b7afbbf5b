package tpch

import "github.com/numalab/numalab/internal/engine"

// The engines' names, as the tests open them (engine.Open's names, also
// the registry's dialects).
const (
	dialectSQLite   = "sqlite"
	dialectDuckDB   = "duckdb"
	dialectPostgres = "postgres"
	dialectMariaDB  = "mariadb"
)

// specOf is the registry's engine named name.
func specOf(name string) engine.Spec {
	s, _ := engine.Lookup(name)
	return s
}
