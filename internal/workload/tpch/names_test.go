package tpch

// The engines' names, as the tests open them (engine.Open's names, also
// the registry's dialects).
const (
	dialectSQLite   = "sqlite"
	dialectDuckDB   = "duckdb"
	dialectPostgres = "postgres"
	dialectMariaDB  = "mariadb"
)
