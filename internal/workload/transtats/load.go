package transtats

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/workload/meta"
)

// metaTable marks numalab's transtats data: the workload's name is written
// first, the size and load figures as the load goes, and load_complete
// last. A database without load_complete is an interrupted load.
const metaTable = "transtats_meta"

// tables are the tables a load creates, dropped (PostgreSQL, MariaDB:
// inside numalab's own schema or database) before a new load.
var tables = func() []string {
	t := []string{metaTable, "tran_stats", "dimension"}
	for _, d := range Dims() {
		t = append(t, d.Table)
	}
	return t
}()

// tranStatsColumns in the order RowAt's fields are appended.
var tranStatsColumns = []string{"server_config", "users", "cpus", "thread_name", "tran_count",
	"tran_type", "tran_status", "tran_begin", "tran_end", "resultset_size", "filler"}

// Open makes sure the database holds a complete transtats data set of
// cfg.Rows rows at cfg.Rate, loading it when it does not, and opens it for
// running.
//
// A file that exists but is not numalab's transtats data is an error:
// nothing is overwritten that numalab did not create. A numalab file of
// another size, or an incomplete one (a load that was killed), is removed
// and loaded again. On PostgreSQL the tables live in numalab's own schema,
// on MariaDB in numalab's own database (the engine refuses a schema or
// database it did not create); tables of an earlier, different or
// incomplete load there are dropped and loaded again.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	if err := cfg.defaults(); err != nil {
		return nil, fmt.Errorf("opening transtats: %w", err)
	}
	if err := CheckFits(cfg.EngineName, cfg.Engine, cfg.Rows); err != nil {
		return nil, fmt.Errorf("opening transtats: %w", err)
	}
	if specOf(cfg.EngineName).Server {
		return openServer(ctx, cfg)
	}
	return openFile(ctx, cfg)
}

// openFile opens or loads an SQLite or DuckDB file.
func openFile(ctx context.Context, cfg Config) (*DB, error) {
	name := cfg.EngineName
	path := cfg.Engine.Path
	fail := func(err error) (*DB, error) {
		return nil, fmt.Errorf("opening transtats in %s: %w", path, err)
	}
	// Loaders and openers of files in one directory take turns: the
	// second opens the first's finished load.
	say := cfg.Waiting
	if say == nil {
		say = func(string) {}
	}
	unlock, err := engine.LockDir(ctx, filepath.Dir(path), say)
	if err != nil {
		return fail(err)
	}
	defer unlock()
	opt := cfg.Engine
	opt.Create = false
	opt.DataBytes = cfg.Rows * BytesPerRow
	if _, err := os.Stat(path); err == nil {
		eng, err := engine.Open(ctx, name, opt)
		if err != nil {
			return fail(fmt.Errorf("the file exists but %s cannot open it: %w (remove it or choose another --db)", name, err))
		}
		m, merr := meta.Read(ctx, eng.DB(), engine.SQLOf(eng.Name()), metaTable)
		switch judgeMeta(m, cfg.Rows, cfg.Rate) {
		case metaReady:
			st := statsFromMeta(cfg.EngineName, m)
			st.Where = path
			return &DB{cfg: cfg, eng: eng, Load: st}, nil
		case metaForeign:
			eng.Close()
			why := "it has no " + metaTable + " table"
			if merr != nil {
				why = merr.Error()
			}
			return fail(fmt.Errorf("the file exists and is not numalab transtats data (%s): refusing to overwrite it "+
				"(remove it or choose another --db)", why))
		}
		eng.Close()
		cfg.progress(fmt.Sprintf("%s holds an incomplete load or %s rows, not %d: loading again",
			path, m[metaRows], cfg.Rows), 0)
		for _, p := range []string{path, path + ".wal"} {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fail(err)
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fail(err)
	}

	opt.Create = true
	eng, err := engine.Open(ctx, name, opt)
	if err != nil {
		return fail(err)
	}
	st, err := load(ctx, eng, cfg)
	if err != nil {
		if derr := eng.Discard(); derr != nil {
			err = errors.Join(err, derr)
		}
		return fail(err)
	}
	st.Where = path
	if err := eng.Close(); err != nil {
		return fail(err)
	}
	opt.Create = false
	if eng, err = engine.Open(ctx, name, opt); err != nil {
		return fail(err)
	}
	return &DB{cfg: cfg, eng: eng, Load: st}, nil
}

// openServer opens PostgreSQL or MariaDB (a DSN, or a managed server) and
// loads the data unless numalab's schema (MariaDB: database) already holds
// it complete.
func openServer(ctx context.Context, cfg Config) (*DB, error) {
	opt := cfg.Engine
	spec := specOf(cfg.EngineName)
	opt.DataBytes = cfg.Rows*BytesPerRow + layoutOf(spec).cachedBytes
	server := spec.Title
	eng, err := engine.Open(ctx, spec.Name, opt)
	if err != nil {
		return nil, fmt.Errorf("opening transtats on %s: %w", server, err)
	}
	where := "managed " + server + " server"
	if opt.DSN != "" {
		where = result.Redact(opt.DSN)
	} else if inf, err := eng.Describe(ctx); err == nil && inf.Where != "" {
		where = result.Redact(inf.Where)
	}
	fail := func(err error) (*DB, error) {
		eng.Close()
		return nil, fmt.Errorf("opening transtats on %s (%s): %w", server, where, err)
	}
	if m, err := meta.Read(ctx, eng.DB(), engine.SQLOf(eng.Name()), metaTable); err == nil &&
		judgeMeta(m, cfg.Rows, cfg.Rate) == metaReady {
		st := statsFromMeta(cfg.EngineName, m)
		st.Where = where
		return &DB{cfg: cfg, eng: eng, Load: st}, nil
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	for _, t := range tables {
		if _, err := eng.DB().ExecContext(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
			return fail(fmt.Errorf("dropping %s of an earlier load: %w", t, err))
		}
	}
	st, err := load(ctx, eng, cfg)
	if err != nil {
		return fail(err)
	}
	st.Where = where
	return &DB{cfg: cfg, eng: eng, Load: st}, nil
}

// load creates and fills every table in a new database, after refusing a
// load that would leave its filesystem less than 5% free
// (engine.CheckRoom), with the estimate (LoadBytes) and the free space.
func load(ctx context.Context, eng engine.Engine, cfg Config) (LoadStats, error) {
	spec := specOf(eng.Name())
	d, l := spec.SQL, layoutOf(spec)
	st := LoadStats{Engine: spec.Name, Workload: "transtats", Method: spec.BulkMethod, Rows: cfg.Rows, Rate: cfg.Rate}
	if err := engine.CheckRoom(eng, LoadBytes(spec.Name, cfg.Rows)); err != nil {
		return st, fmt.Errorf("loading %d rows: %w", cfg.Rows, err)
	}
	db := eng.DB()
	t0 := time.Now()
	exec := func(q string) error {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("loading: %w\n(statement: %.200s)", err, q)
		}
		return nil
	}
	setMeta := func(k, v string) error {
		if _, err := db.ExecContext(ctx, d.WriteMeta(metaTable, k, v)); err != nil {
			return fmt.Errorf("loading: recording %s: %w", k, err)
		}
		return nil
	}
	if err := exec("CREATE TABLE " + metaTable + " (" + d.Quote("key") +
		" VARCHAR(40) PRIMARY KEY, value VARCHAR(200) NOT NULL)"); err != nil {
		return st, err
	}
	for _, kv := range [][2]string{
		{metaWorkload, "transtats"},
		{metaRows, strconv.FormatInt(cfg.Rows, 10)},
		{metaRate, strconv.FormatInt(cfg.Rate, 10)},
		{metaMethod, st.Method},
	} {
		if err := setMeta(kv[0], kv[1]); err != nil {
			return st, err
		}
	}
	if err := exec(createTranStats(spec)); err != nil {
		return st, err
	}

	cfg.progress("loading tran_stats", 0)
	t1 := time.Now()
	if err := insertRows(ctx, eng, cfg); err != nil {
		return st, err
	}
	st.Insert = time.Since(t1)
	st.RowsPerSecond = float64(cfg.Rows) / st.Insert.Seconds()

	if keys := l.afterInsert; len(keys) > 0 {
		cfg.progress("building tran_stats' primary key (tran_begin, tran_count)", cfg.Rows)
		for _, q := range keys {
			if err := exec(q); err != nil {
				return st, err
			}
		}
	}
	cfg.progress("building the dimension tables and dimension", cfg.Rows)
	for _, q := range dimSQL(spec) {
		if err := exec(q); err != nil {
			return st, err
		}
	}
	if err := checkCounts(ctx, db, cfg.Rows); err != nil {
		return st, err
	}
	cfg.progress("gathering statistics", cfg.Rows)
	if err := exec(d.AnalyzeLoaded(tables[1:]...)); err != nil {
		return st, err
	}
	st.Total = time.Since(t0)
	for _, kv := range [][2]string{
		{metaInsertNS, strconv.FormatInt(int64(st.Insert), 10)},
		{metaTotalNS, strconv.FormatInt(int64(st.Total), 10)},
		{metaComplete, time.Now().UTC().Format(time.RFC3339)},
	} {
		if err := setMeta(kv[0], kv[1]); err != nil {
			return st, err
		}
	}
	if q := d.Checkpoint(); q != "" {
		if err := exec(q); err != nil {
			return st, err
		}
	}
	return st, nil
}

// insertRows writes tran_stats' rows through the engine's bulk path, in
// tran_begin order.
func insertRows(ctx context.Context, eng engine.Engine, cfg Config) error {
	b, err := eng.Bulk(ctx, "tran_stats", tranStatsColumns)
	if err != nil {
		return fmt.Errorf("loading tran_stats: %w", err)
	}
	text := engine.SQLOf(eng.Name()).TextTimes()
	tt := newTimeText()
	const every = 1 << 16
	for i := int64(1); i <= cfg.Rows; i++ {
		r := RowAt(i, cfg.Rate)
		var begin, end any
		if text {
			begin, end = tt.at(r.Begin), tt.at(r.End)
		} else {
			begin, end = TimeAt(r.Begin), TimeAt(r.End)
		}
		if err := b.Append(r.ServerConfig, r.Users, r.CPUs, r.ThreadName, r.TranCount,
			r.TranType, r.TranStatus, begin, end, r.ResultsetSize, r.Filler); err != nil {
			b.Close()
			return fmt.Errorf("loading tran_stats row %d: %w", i, err)
		}
		if i%every == 0 {
			if err := ctx.Err(); err != nil {
				b.Close()
				return fmt.Errorf("loading tran_stats: %w", err)
			}
			cfg.progress("loading tran_stats", i)
		}
	}
	if err := b.Close(); err != nil {
		return fmt.Errorf("loading tran_stats: %w", err)
	}
	if b.Rows() != cfg.Rows {
		return fmt.Errorf("loading tran_stats: wrote %d rows, want %d", b.Rows(), cfg.Rows)
	}
	cfg.progress("loading tran_stats", cfg.Rows)
	return nil
}

// checkCounts checks the row counts of what was loaded.
func checkCounts(ctx context.Context, db *sql.DB, rows int64) error {
	want := map[string]int64{"tran_stats": rows, "dimension": DimensionRows}
	for _, d := range Dims() {
		want[d.Table] = int64(d.Len())
	}
	for _, t := range tables[1:] {
		var n int64
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+t).Scan(&n); err != nil {
			return fmt.Errorf("checking the load: counting %s: %w", t, err)
		}
		if n != want[t] {
			return fmt.Errorf("checking the load: %s has %d rows, want %d", t, n, want[t])
		}
	}
	return nil
}
