package inspect

import (
	"context"
	"fmt"

	"github.com/numalab/numalab/internal/result"
)

// Database inspects the database tg names with its engine's reader
// (SQLite, DuckDB, Postgres or MariaDB).
func Database(ctx context.Context, tg Target, opt Options) (*result.Inspection, error) {
	switch tg.Engine {
	case "sqlite":
		return SQLite(ctx, tg.Path, opt)
	case "duckdb":
		return DuckDB(ctx, tg.Path, opt)
	case "postgres":
		return Postgres(ctx, tg.DSN, opt)
	case "mariadb":
		return MariaDB(ctx, tg.DSN, opt)
	}
	return nil, fmt.Errorf("inspecting: unknown engine %q (expected sqlite, duckdb, postgres or mariadb)", tg.Engine)
}
