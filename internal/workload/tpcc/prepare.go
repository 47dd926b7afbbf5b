package tpcc

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/numalab/numalab/internal/engine"
)

// Source is a TPC-C database to run, and what to load where it is missing.
type Source struct {
	// Engine is "sqlite", "duckdb", "postgres" or "mariadb".
	Engine string
	// Where says where the database is: Path for SQLite and DuckDB, DSN
	// (empty: a managed server) and PG for PostgreSQL. Prepare sets Create
	// for a load, and DataBytes from the warehouses when it is 0.
	Where engine.Options
	// Load is what to load where the database is missing. Its Warehouses
	// is also what an existing database must hold.
	Load LoadConfig
	// Run chooses the workload's variant.
	Run Options
	// Opened, if not nil, is told which database was opened (the engine's
	// Info), before any load.
	Opened func(engine.Info)
}

// WarehousesError is Prepare's refusal of a file that holds another number
// of warehouses than Source.Load asks for.
type WarehousesError struct {
	Path       string
	Have, Want int
}

func (e *WarehousesError) Error() string {
	return fmt.Sprintf("%s holds %d warehouses, not %d", e.Path, e.Have, e.Want)
}

// Prepare opens src's TPC-C database for a run, loading it first where
// needed: a file that does not exist, or a PostgreSQL schema without a
// complete load of src.Load.Warehouses (which is then replaced). An
// existing file that is not a complete numalab TPC-C database of that many
// warehouses is refused (ErrNotTPCC, *WarehousesError), never overwritten;
// a failed load removes the file it created. loaded is nil when nothing was
// loaded. The caller closes w.Engine() when done (which stops a managed
// server).
func Prepare(ctx context.Context, src Source) (w *Workload, loaded *LoadStats, err error) {
	if err := CheckFits(src.Engine, src.Where, src.Load.Warehouses); err != nil {
		return nil, nil, err
	}
	opt := src.Where
	opt.Create = false
	if opt.DataBytes == 0 {
		opt.DataBytes = EstimatedBytes(src.Load.Warehouses)
	}
	if isServer(src.Engine) {
		return prepareServer(ctx, src, opt)
	}
	_, statErr := os.Stat(opt.Path)
	if statErr != nil && !errors.Is(statErr, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("opening %s: %w", opt.Path, statErr)
	}
	if statErr != nil {
		st, err := loadFile(ctx, src, opt)
		if err != nil {
			return nil, nil, err
		}
		loaded = &st
	}
	eng, err := engine.Open(ctx, src.Engine, opt)
	if err != nil {
		return nil, nil, err
	}
	if loaded == nil {
		opened(ctx, src, eng)
	}
	if w, err = Open(ctx, eng, src.Run); err == nil && w.meta.Warehouses != src.Load.Warehouses {
		err = &WarehousesError{Path: opt.Path, Have: w.meta.Warehouses, Want: src.Load.Warehouses}
	}
	if err != nil {
		eng.Close()
		return nil, nil, err
	}
	return w, loaded, nil
}

// loadFile creates opt.Path and loads it, removing it again on error.
func loadFile(ctx context.Context, src Source, opt engine.Options) (LoadStats, error) {
	opt.Create = true
	eng, err := engine.Open(ctx, src.Engine, opt)
	if err != nil {
		return LoadStats{}, err
	}
	opened(ctx, src, eng)
	st, err := Load(ctx, eng, src.Load)
	if err != nil {
		eng.Discard()
		if errors.Is(err, engine.ErrDiskFull) {
			return st, fmt.Errorf("loading %s: %w (free space or load elsewhere; the partial file was removed)", opt.Path, err)
		}
		return st, fmt.Errorf("loading %s: %w (the partial file was removed)", opt.Path, err)
	}
	if err := eng.Close(); err != nil {
		return st, fmt.Errorf("loading tpcc into %s: %w", opt.Path, err)
	}
	return st, nil
}

// prepareServer opens PostgreSQL or MariaDB and loads it unless it holds
// a complete load of the warehouses asked for.
func prepareServer(ctx context.Context, src Source, opt engine.Options) (*Workload, *LoadStats, error) {
	eng, err := engine.Open(ctx, src.Engine, opt)
	if err != nil {
		return nil, nil, err
	}
	opened(ctx, src, eng)
	w, err := Open(ctx, eng, src.Run)
	if err == nil && w.meta.Warehouses == src.Load.Warehouses {
		return w, nil, nil
	}
	st, err := Load(ctx, eng, src.Load)
	if err == nil {
		w, err = Open(ctx, eng, src.Run)
	}
	if err != nil {
		eng.Close()
		return nil, nil, err
	}
	return w, &st, nil
}

// opened tells src.Opened about eng.
func opened(ctx context.Context, src Source, eng engine.Engine) {
	if src.Opened == nil {
		return
	}
	info, err := eng.Describe(ctx)
	if err != nil {
		info = engine.Info{Engine: eng.Name(), Where: eng.Path()}
	}
	src.Opened(info)
}
