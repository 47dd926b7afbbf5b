package inspect

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
)

// Database inspects the database tg names with its engine's reader
// (SQLite, DuckDB or Postgres).
func Database(ctx context.Context, tg Target, opt Options) (*result.Inspection, error) {
	name := tg.Engine
	switch {
	case name != "":
	case tg.DSN != "":
		name = "postgres"
	default:
		var err error
		name, err = engine.FileEngine(tg.Path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			name = "sqlite" // its reader says the file is missing
		case errors.Is(err, engine.ErrUnknownFile):
			return nil, fmt.Errorf("inspecting %s: cannot tell the engine from the file's first bytes (%w; give --engine to be told more)", tg.Path, engine.ErrUnknownFile)
		case err != nil:
			return nil, fmt.Errorf("inspecting %s: %w", tg.Path, err)
		}
	}
	switch name {
	case "sqlite":
		return SQLite(ctx, tg.Path, opt)
	case "duckdb":
		return DuckDB(ctx, tg.Path, opt)
	case "postgres":
		return Postgres(ctx, tg.DSN, opt)
	}
	return nil, fmt.Errorf("inspecting: unknown engine %q (expected sqlite, duckdb or postgres)", name)
}
