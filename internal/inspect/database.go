package inspect

import (
	"context"
	"fmt"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
)

// Database inspects the database tg names with its engine's reader
// (SQLite, DuckDB, Postgres or MariaDB).
func Database(ctx context.Context, tg Target, opt Options) (*result.Inspection, error) {
	spec, ok := engine.Lookup(tg.Engine)
	read := readers[spec.Dialect]
	if !ok || read == nil {
		return nil, fmt.Errorf("inspecting: unknown engine %q (expected %s)", tg.Engine, engine.List(nil))
	}
	where := tg.Path
	if spec.Server {
		where = tg.DSN
	}
	return read(ctx, where, opt)
}

// readers are the engines' readers, by the registry's dialect: a file's
// path or a server's DSN in.
var readers = map[engine.Dialect]func(context.Context, string, Options) (*result.Inspection, error){
	engine.SQLite: SQLite, engine.DuckDB: DuckDB, engine.Postgres: Postgres, engine.MariaDB: MariaDB,
}
