package tpch

import "fmt"

// Bytes per unit of scale factor each engine writes for a load, tables
// and (SQLite, PostgreSQL, MariaDB) keys included, with about 15% to
// spare, and a fixed part for the smallest loads. Measured at SF 0.01 and
// 0.1 on this package's load: SQLite 1.26 GB per SF, DuckDB 0.37 GB,
// PostgreSQL 1.50 GB, MariaDB 1.74 GB (19.7 MB at SF 0.01, 176.6 MB at
// SF 0.1, secondary indexes included); TestQueriesAgreeAcrossEngines
// checks them at SF 0.01.
var bytesPerSF = map[string]struct{ fixed, perSF float64 }{
	dialectSQLite:   {1 << 20, 1.45e9},
	dialectDuckDB:   {2 << 20, 0.45e9},
	dialectPostgres: {1 << 20, 1.75e9},
	dialectMariaDB:  {4 << 20, 2.0e9},
}

// EstimatedBytes is about how many bytes a load of scale factor sf writes
// into engine ("sqlite", "duckdb", "postgres" or "mariadb"), an upper estimate, to
// check the space before loading and to size caches.
func EstimatedBytes(sf float64, engine string) (int64, error) {
	if _, err := CountsFor(sf); err != nil {
		return 0, fmt.Errorf("estimating a tpch load: %w", err)
	}
	b, ok := bytesPerSF[engine]
	if !ok {
		return 0, fmt.Errorf("estimating a tpch load: no estimate for engine %q (expected sqlite, duckdb, postgres or mariadb)", engine)
	}
	return int64(b.fixed + b.perSF*sf), nil
}
