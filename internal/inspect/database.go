package inspect

import (
	"context"
	"fmt"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
)

// Database inspects the database tg names with the reader of its
// engine's catalog (the registry's Inspect.Catalog).
func Database(ctx context.Context, tg Target, opt Options) (*result.Inspection, error) {
	spec, ok := engine.Lookup(tg.Engine)
	read := reader(spec.Inspect.Catalog)
	if !ok || read == nil {
		return nil, fmt.Errorf("inspecting: unknown engine %q (expected %s)", tg.Engine, engine.List(nil))
	}
	where := tg.Path
	if spec.Server {
		where = tg.DSN
	}
	return read(ctx, where, opt)
}

// reader reads catalog c from a file's path or a server's DSN; nil for
// an engine that cannot be inspected.
func reader(c engine.Catalog) func(context.Context, string, Options) (*result.Inspection, error) {
	switch c {
	case engine.CatalogSQLiteFile:
		return SQLite
	case engine.CatalogDuckDB:
		return DuckDB
	case engine.CatalogPostgres:
		return Postgres
	case engine.CatalogMySQL:
		return MariaDB
	}
	return nil
}
