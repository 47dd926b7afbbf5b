package main

import (
	"context"
	"time"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/workload/insert"
)

// insertFlags parses run insert's command line into a configuration:
// defaults, then the sweep file, then the flags given.
func insertFlags(e *env, args []string) (cfg insert.RunConfig, storePath string, asJSON, done bool, err error) {
	cfg = insert.DefaultRunConfig()
	fs := cliflag.New(e.stderr, "run insert", helpText("run-insert"))
	file := fs.String("f", "", "sweep `file` (TOML); flags given override it")
	cliflag.EngineFlags(fs, cfg.Engine, "", "numalab-insert.db or .duckdb")
	fs.String("method", cfg.Method, "PostgreSQL's load: copy or insert (MariaDB loads with multi-row INSERTs)")
	fs.Bool("indexes", false, "PostgreSQL: a primary key and an index on k (default: a heap table alone); MariaDB: an index on k")
	fs.String("key", cfg.Key, "the id column: none, stream (a primary key, each stream numbering its own range) or shared (a primary key from one sequence all streams draw on: the hot page)")
	fs.Int("batch", cfg.Batch, "rows per batch")
	fs.Int64("max-rows", cfg.MaxRows, "rows one cell may write, all streams together")
	fs.String("streams", "1,2,4", "stream counts to sweep, e.g. 1,2,4,8")
	fs.String("placement", "", "placement selectors separated by ';', e.g. 'node=0;' (default: all CPUs)")
	fs.Bool("spread", cfg.Spread, "pin stream i to the i-th CPU of the placement alone (false: every stream on all of them)")
	cliflag.RangedDuration(fs, "duration", cfg.Duration, 10*time.Millisecond, 24*time.Hour, "measured window of each cell, 10ms to 24h")
	cliflag.RangedDuration(fs, "warmup", cfg.Warmup, 0, time.Hour, "warm-up before each cell's window, excluded from every figure, up to 1h")
	cliflag.RangedInt(fs, "repeat", cfg.Repeat, 1, 1000, "repetitions of every cell, 1 to 1000")
	cliflag.RangedDuration(fs, "wait-every", cfg.WaitEvery, time.Millisecond, time.Minute, "how often to sample PostgreSQL's wait events, 1ms to 1m, or to read MariaDB's performance_schema wait sums (at least 100ms)")
	fs.Int64("seed", cfg.Seed, "seed for the streams' random numbers")
	definePacingFlags(fs)
	sp := cliflag.Store(fs)
	js := fs.Bool("json", false, "print the cells' load figures as JSON on stdout (the table goes to stderr)")
	if done, err = cliflag.Parse(e.stdout, fs, args); done {
		return cfg, "", false, true, err
	}
	if err = cliflag.NoArgs(fs); err != nil {
		return cfg, "", false, true, err
	}
	if *file != "" {
		if _, err := cliflag.SweepFile("run insert", *file, &cfg); err != nil {
			return cfg, "", false, true, err
		}
	}
	if bad := insertSettings(&cfg).Apply(fs, false); len(bad) > 0 {
		return cfg, "", false, true, bad[0]
	}
	return cfg, *sp, *js, false, cfg.Check("/")
}

// insertSettings are run insert's flags on the fields of cfg.
func insertSettings(cfg *insert.RunConfig) cliflag.Settings {
	ss := cliflag.Settings{cliflag.Str("engine", &cfg.Engine), cliflag.Optional(cliflag.Str("db", &cfg.DB)), cliflag.DSN(&cfg.DSN), cliflag.ConnectTimeoutSetting(&cfg.ConnectTimeout),
		cliflag.Str("method", &cfg.Method), cliflag.Bool("indexes", &cfg.Indexes), cliflag.Str("key", &cfg.Key), cliflag.Int("batch", &cfg.Batch),
		cliflag.Int64("max-rows", &cfg.MaxRows), cliflag.Ints("streams", &cfg.Streams), cliflag.List("placement", ";", &cfg.Placements),
		cliflag.Bool("spread", &cfg.Spread), cliflag.Duration("duration", &cfg.Duration), cliflag.Duration("warmup", &cfg.Warmup),
		cliflag.Int("repeat", &cfg.Repeat), cliflag.Duration("wait-every", &cfg.WaitEvery), cliflag.Int64("seed", &cfg.Seed)}
	return append(ss, pacingSettings(&cfg.Pacing)...)
}

// insertArgv is the one command line that gives cfg, every setting
// spelled out (the password of a DSN hidden).
func insertArgv(cfg insert.RunConfig) []string {
	return insertSettings(&cfg).Argv("run", "insert")
}

func runInsert(ctx context.Context, e *env, args []string) error {
	cfg, storePath, asJSON, done, err := insertFlags(e, args)
	if done || err != nil {
		return err
	}
	_, cells, prog, err := startSweep(e, sweepOut{asJSON: asJSON, spread: cfg.Spread}, insert.WriteRow, cfg.Spec())
	if err != nil {
		return err
	}
	defer prog.Done()
	rec, err := startRun(ctx, e.withArgs(insertArgv(cfg)), storePath, pacedKind(insert.RunKind, cfg.Pacing), cfg)
	if err != nil {
		return err
	}
	insert.WriteHeader(prog.table)
	measured, err := sweep.Run(ctx, cfg.Plan(cells), insert.NewSweep(cfg), rec, prog)
	stats := []insert.CellStats{}
	for _, m := range measured {
		stats = append(stats, m.Stats)
	}
	return finishRun(e, rec, err, insert.Headline(measured), asJSON, stats)
}
