package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/workload/insert"
)

// insertFlags parses run insert's command line into a configuration:
// defaults, then the sweep file, then the flags given.
func insertFlags(e *env, args []string) (cfg insert.RunConfig, storePath string, asJSON, done bool, err error) {
	cfg = insert.DefaultRunConfig()
	fs := newFlags(e, "run insert", helpText("run-insert"))
	file := fs.String("f", "", "sweep `file` (TOML); flags given override it")
	fs.String("engine", cfg.Engine, "engine: sqlite, duckdb or postgres")
	fs.String("db", "", "database `file` for sqlite or duckdb (default numalab-insert.db or .duckdb)")
	fs.String("dsn", "", "PostgreSQL `DSN` to use (default: a throwaway server numalab starts and stops)")
	fs.String("method", cfg.Method, "PostgreSQL's load: copy or insert")
	fs.Bool("indexes", false, "PostgreSQL: a primary key and an index on k (default: a heap table alone)")
	fs.Int("batch", cfg.Batch, "rows per batch")
	fs.Int64("max-rows", cfg.MaxRows, "rows one cell may write, all streams together")
	fs.String("streams", "1,2,4", "stream counts to sweep, e.g. 1,2,4,8")
	fs.String("placement", "", "placement selectors separated by ';', e.g. 'node=0;' (default: all CPUs)")
	fs.Bool("spread", cfg.Spread, "pin stream i to the i-th CPU of the placement alone (false: every stream on all of them)")
	fs.Duration("duration", cfg.Duration, "measured window of each cell")
	fs.Duration("warmup", cfg.Warmup, "warm-up before each cell's window, excluded from every figure")
	fs.Int("repeat", cfg.Repeat, "repetitions of every cell")
	fs.Duration("wait-every", cfg.WaitEvery, "PostgreSQL: how often to sample the loaders' wait events")
	fs.Int64("seed", cfg.Seed, "seed for the streams' random numbers")
	sp := storeFlag(fs)
	js := fs.Bool("json", false, "print the cells' load figures as JSON on stdout (the table goes to stderr)")
	if done, err = parseFlags(e, fs, args); done {
		return cfg, "", false, true, err
	}
	if err = noArgs(fs); err != nil {
		return cfg, "", false, true, err
	}
	if *file != "" {
		md, err := toml.DecodeFile(*file, &cfg)
		if err != nil {
			return cfg, "", false, true, fmt.Errorf("-f: reading sweep file %s: %w", *file, err)
		}
		if un := md.Undecoded(); len(un) > 0 {
			return cfg, "", false, true, fmt.Errorf("-f: %s: unknown setting %q (see 'numalab run insert --help' for the names)", *file, un[0].String())
		}
	}
	var ferr error
	fs.Visit(func(f *flag.Flag) {
		v := f.Value.String()
		var err error
		switch f.Name {
		case "engine":
			cfg.Engine = v
		case "db":
			cfg.DB = v
		case "dsn":
			cfg.DSN = v
		case "method":
			cfg.Method = v
		case "indexes":
			cfg.Indexes = v == "true"
		case "batch":
			cfg.Batch, err = strconv.Atoi(v)
		case "max-rows":
			cfg.MaxRows, err = strconv.ParseInt(v, 10, 64)
		case "streams":
			cfg.Streams, err = intList("streams", v, 1)
		case "placement":
			cfg.Placements = strings.Split(v, ";")
		case "spread":
			cfg.Spread = v == "true"
		case "duration":
			cfg.Duration, err = time.ParseDuration(v)
		case "warmup":
			cfg.Warmup, err = time.ParseDuration(v)
		case "repeat":
			cfg.Repeat, err = strconv.Atoi(v)
		case "wait-every":
			cfg.WaitEvery, err = time.ParseDuration(v)
		case "seed":
			cfg.Seed, err = strconv.ParseInt(v, 10, 64)
		}
		if err != nil && ferr == nil {
			ferr = err
		}
	})
	if ferr != nil {
		return cfg, "", false, true, ferr
	}
	return cfg, *sp, *js, false, cfg.Check("/")
}

// insertArgv is the one command line that gives cfg, every setting
// spelled out (the password of a DSN hidden).
func insertArgv(cfg insert.RunConfig) []string {
	a := []string{"run", "insert", "--engine", cfg.Engine}
	if cfg.DB != "" {
		a = append(a, "--db", cfg.DB)
	}
	if cfg.DSN != "" {
		a = append(a, "--dsn", result.Redact(cfg.DSN))
	}
	return append(a, "--method", cfg.Method, "--indexes="+strconv.FormatBool(cfg.Indexes),
		"--batch", strconv.Itoa(cfg.Batch), "--max-rows", strconv.FormatInt(cfg.MaxRows, 10),
		"--streams", intsArg(cfg.Streams), "--placement", strings.Join(cfg.Placements, ";"),
		"--spread="+strconv.FormatBool(cfg.Spread), "--duration", cfg.Duration.String(), "--warmup", cfg.Warmup.String(),
		"--repeat", strconv.Itoa(cfg.Repeat), "--wait-every", cfg.WaitEvery.String(), "--seed", strconv.FormatInt(cfg.Seed, 10))
}

func runInsert(ctx context.Context, e *env, args []string) error {
	cfg, storePath, asJSON, done, err := insertFlags(e, args)
	if done || err != nil {
		return err
	}
	machine, err := topo.FromSysfs("/")
	if err != nil {
		return fmt.Errorf("reading this machine's topology: %w", err)
	}
	cells, notes, err := sweep.Resolve(machine, cfg.Spec(), cfg.Spread)
	if err != nil {
		return err
	}
	prog := &insertRows{progress: newProgress(e.stderr), table: e.stdout}
	if asJSON {
		prog.table = e.stderr
	}
	defer prog.Done()
	for _, n := range notes {
		prog.Note("note: " + n)
	}
	rec, err := startRun(ctx, e.withArgs(insertArgv(cfg)), storePath, insert.RunKind, cfg)
	if err != nil {
		return err
	}
	insert.WriteHeader(prog.table)
	measured, err := sweep.Run(ctx, cfg.Plan(cells), insert.NewSweep(cfg), rec, prog)
	if ferr := rec.Finish(err, insert.Headline(measured)); ferr != nil {
		return errors.Join(err, ferr)
	}
	if asJSON {
		stats := []insert.CellStats{}
		for _, m := range measured {
			stats = append(stats, m.Stats)
		}
		if jerr := writeJSON(e.stdout, stats); jerr != nil {
			return errors.Join(err, jerr)
		}
	}
	return err
}

// insertRows prints a row per cell as it is stored.
type insertRows struct {
	*progress
	table io.Writer
}

func (r *insertRows) Measured(_ sweep.Cell, m *insert.Measured) {
	r.Done()
	insert.WriteRow(r.table, m)
}
