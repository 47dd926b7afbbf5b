package transtats

// The tests' short names for the registry's engines.
const (
	SQLite   = "sqlite"
	DuckDB   = "duckdb"
	Postgres = "postgres"
	MariaDB  = "mariadb"
)
