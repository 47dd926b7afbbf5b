package tpch

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/workload/meta"
)

// metaTable marks numalab's tpch data: "workload" = "tpch", the scale
// factor and seed are written before the load, "load_complete" after it.
// Data without load_complete is an interrupted load.
const metaTable = "tpch_meta"

// ErrForeign is wrapped by the refusal of a file or schema that holds
// tpch tables numalab did not make: it is left untouched.
var ErrForeign = errors.New("not numalab's tpch data")

// OpenConfig says which data a run wants.
type OpenConfig struct {
	Engine  string         // "sqlite", "duckdb", "postgres" or "mariadb"
	Options engine.Options // Path (SQLite, DuckDB), DSN or a managed server (PostgreSQL, MariaDB)
	SF      float64
	Seed    int64
	Say     func(step string) // progress; may be nil
}

// DB is a tpch data set opened for running.
type DB struct {
	Eng    engine.Engine
	SF     float64
	Seed   int64
	Reused bool      // found complete from an earlier load
	Stats  LoadStats // this load's (zero when Reused)
	Where  string    // file, or server with the password hidden
}

// Close closes the engine (and stops a managed server).
func (db *DB) Close() error { return db.Eng.Close() }

// Open makes sure the engine holds a complete numalab tpch load of cfg.SF
// and cfg.Seed, loading it when it does not, after checking the space
// (EstimatedBytes, engine.CheckRoom) before anything is written.
//
// A file, or tables in numalab's PostgreSQL schema (MariaDB database),
// that hold tpch tables without numalab's tpch_meta marker are refused and
// left untouched (ErrForeign). numalab's own load of another size or seed, or an
// interrupted one, is removed and loaded again.
func Open(ctx context.Context, cfg OpenConfig) (*DB, error) {
	need, err := EstimatedBytes(cfg.SF, cfg.Engine)
	if err != nil {
		return nil, err
	}
	if cfg.Say == nil {
		cfg.Say = func(string) {}
	}
	opt := cfg.Options
	opt.DataBytes = need
	if spec, _ := engine.Lookup(cfg.Engine); spec.Server {
		return openServer(ctx, cfg, opt, need)
	}
	return openFile(ctx, cfg, opt, need)
}

func openFile(ctx context.Context, cfg OpenConfig, opt engine.Options, need int64) (*DB, error) {
	path := opt.Path
	fail := func(err error) (*DB, error) { return nil, fmt.Errorf("opening tpch in %s: %w", path, err) }
	// Loaders and openers of files in one directory take turns (as
	// transtats' and tpcc-ro's do): the second opens the first's finished
	// load, and no text-file directory an older numalab's load left is in
	// use while this one holds the directory.
	unlock, err := engine.LockDir(ctx, filepath.Dir(path), cfg.Say)
	if err != nil {
		return fail(err)
	}
	defer unlock()
	if err := removeLeftLoads(path); err != nil {
		return fail(err)
	}
	opt.Create = false
	if _, err := os.Stat(path); err == nil {
		eng, err := engine.Open(ctx, cfg.Engine, opt)
		if err != nil {
			return fail(
				fmt.Errorf("the file exists but %s cannot open it: %w (remove it or choose another --db)", cfg.Engine, err))
		}
		m, merr := meta.Read(ctx, eng.DB(), engine.SQLOf(cfg.Engine), metaTable)
		switch {
		case merr != nil || m["workload"] != "tpch":
			eng.Close()
			return fail(
				fmt.Errorf("%w: the file exists and has no %s marker: refusing to touch it (remove it or choose another --db)",
					ErrForeign, metaTable))
		case ready(m, cfg):
			return &DB{Eng: eng, SF: cfg.SF, Seed: cfg.Seed, Reused: true, Where: path}, nil
		}
		eng.Close()
		cfg.Say(fmt.Sprintf("%s holds numalab's tpch at SF %s seed %s (complete: %v), not SF %g seed %d: loading again",
			path, m["sf"], m["seed"], m["load_complete"] != "", cfg.SF, cfg.Seed))
		for _, p := range []string{path, path + ".wal"} {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fail(err)
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fail(err)
	}
	opt.Create = true
	eng, err := engine.Open(ctx, cfg.Engine, opt)
	if err != nil {
		return fail(err)
	}
	st, err := loadMarked(ctx, eng, cfg, need)
	if err != nil {
		if derr := eng.Discard(); derr != nil {
			err = errors.Join(err, derr)
		}
		return fail(err)
	}
	if err := eng.Close(); err != nil {
		return fail(err)
	}
	opt.Create = false
	if eng, err = engine.Open(ctx, cfg.Engine, opt); err != nil {
		return fail(err)
	}
	return &DB{Eng: eng, SF: cfg.SF, Seed: cfg.Seed, Stats: st, Where: path}, nil
}

// removeLeftLoads removes the text-file directories ("FILE.load-*") that
// a DuckDB load of path by an older numalab (which loaded through text
// files and DuckDB's CSV reader) left beside it when it was killed before
// its cleanup. The caller holds the directory's lock, so none is in use.
func removeLeftLoads(path string) error {
	left, err := filepath.Glob(path + ".load-*")
	if err != nil {
		return err
	}
	for _, dir := range left {
		if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("removing %s, left by a killed load: %w", dir, err)
		}
	}
	return nil
}

func openServer(ctx context.Context, cfg OpenConfig, opt engine.Options, need int64) (*DB, error) {
	spec, _ := engine.Lookup(cfg.Engine)
	server := spec.Title
	if opt.DSN == "" {
		cfg.Say("starting a throwaway " + server + " server")
	}
	eng, err := engine.Open(ctx, cfg.Engine, opt)
	if err != nil {
		return nil, fmt.Errorf("opening tpch on %s: %w", server, err)
	}
	where := "managed " + server + " server"
	if opt.DSN != "" {
		where = result.Redact(opt.DSN)
	}
	fail := func(err error) (*DB, error) {
		eng.Close()
		return nil, fmt.Errorf("opening tpch on %s (%s): %w", server, where, err)
	}
	m, merr := meta.Read(ctx, eng.DB(), engine.SQLOf(cfg.Engine), metaTable)
	switch {
	case merr == nil && ready(m, cfg):
		return &DB{Eng: eng, SF: cfg.SF, Seed: cfg.Seed, Reused: true, Where: where}, nil
	case merr == nil && m["workload"] == "tpch":
		cfg.Say(fmt.Sprintf("numalab's tpch at SF %s seed %s (complete: %v) is there, not SF %g seed %d: loading again",
			m["sf"], m["seed"], m["load_complete"] != "", cfg.SF, cfg.Seed))
		for _, t := range append(tableNames(), metaTable) {
			if _, err := eng.DB().ExecContext(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
				return fail(fmt.Errorf("dropping %s of numalab's earlier load: %w", t, err))
			}
		}
	default:
		for _, t := range append(tableNames(), metaTable) {
			var n int
			if err := eng.DB().QueryRowContext(ctx, engine.SQLOf(cfg.Engine).TableCount(), t).Scan(&n); err != nil {
				return fail(err)
			}
			if n > 0 {
				return fail(fmt.Errorf("%w: table %s exists without a complete %s marker: refusing to touch it",
					ErrForeign, t, metaTable))
			}
		}
	}
	st, err := loadMarked(ctx, eng, cfg, need)
	if err != nil {
		if _, derr := eng.DB().ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+metaTable); derr != nil {
			err = errors.Join(err, derr)
		}
		return fail(err)
	}
	return &DB{Eng: eng, SF: cfg.SF, Seed: cfg.Seed, Stats: st, Where: where}, nil
}

// loadMarked checks the room, writes the marker, loads, and marks the
// load complete.
func loadMarked(ctx context.Context, eng engine.Engine, cfg OpenConfig, need int64) (LoadStats, error) {
	if err := engine.CheckRoom(eng, need); err != nil {
		return LoadStats{}, fmt.Errorf("SF %g: %w", cfg.SF, err)
	}
	db := eng.DB()
	d := engine.SQLOf(cfg.Engine)
	if _, err := db.ExecContext(ctx, d.CreateMeta(metaTable)); err != nil {
		return LoadStats{}, fmt.Errorf("creating %s: %w", metaTable, err)
	}
	if err := putMeta(ctx, db, d, map[string]string{"workload": "tpch", "sf": strconv.FormatFloat(cfg.SF, 'g', -1, 64),
		"seed": strconv.FormatInt(cfg.Seed, 10)}); err != nil {
		return LoadStats{}, err
	}
	cfg.Say(fmt.Sprintf("loading tpch SF %g into %s", cfg.SF, cfg.Engine))
	st, err := Load(ctx, eng, Config{SF: cfg.SF, Seed: cfg.Seed})
	if err != nil {
		return st, err
	}
	return st, putMeta(ctx, db, d, map[string]string{"load_complete": "1"})
}

func putMeta(ctx context.Context, db *sql.DB, d engine.SQL, kv map[string]string) error {
	for k, v := range kv {
		if _, err := db.ExecContext(ctx, d.WriteMeta(metaTable, k, v)); err != nil {
			return fmt.Errorf("writing %s: %w", metaTable, err)
		}
	}
	return nil
}

// ready says m marks a complete load of cfg's SF and seed.
func ready(m map[string]string, cfg OpenConfig) bool {
	sf, err := strconv.ParseFloat(m["sf"], 64)
	return m["workload"] == "tpch" && m["load_complete"] != "" && err == nil && sf == cfg.SF &&
		m["seed"] == strconv.FormatInt(cfg.Seed, 10)
}

func tableNames() []string {
	var out []string
	for _, t := range tables {
		out = append(out, t.name)
	}
	return out
}
