package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/workload/null"
)

// nullFlags parses run null's command line into a checked configuration:
// the defaults, then the flags.
func nullFlags(e *env, args []string) (cfg null.RunConfig, storePath string, asJSON, done bool, err error) {
	cfg = null.DefaultRunConfig()
	fs := cliflag.New(e.stderr, "run null", helpText("run-null"))
	fs.String("engine", cfg.Engine, "engine: postgres, mariadb or sqlite")
	fs.String("dsn", "", "PostgreSQL or MariaDB/MySQL `DSN` to use (default: a throwaway server numalab starts)")
	fs.String("transport", strings.Join(cfg.Transports, ","), "server transports: unix, tcp or unix,tcp")
	fs.String("pairing", strings.Join(cfg.Pairings, ","), "client/backend pairings to run")
	fs.String("protocol", cfg.Protocol, "server call: prepared or simple")
	fs.String("streams", cliflag.FormatInts(cfg.Streams), "stream counts to sweep, e.g. 1,2,4")
	fs.Duration("duration", cfg.Duration, "measured window of each cell")
	fs.Duration("warmup", cfg.Warmup, "warm-up before each cell's window, excluded from every figure")
	fs.Int("repeat", cfg.Repeat, "repetitions of every cell, interleaved")
	definePacingFlags(fs)
	sp := cliflag.Store(fs)
	js := fs.Bool("json", false, "print the cells as JSON on stdout at the end (the table goes to stderr)")
	if done, err = cliflag.ParseNoArgs(e.stdout, fs, args); done {
		return cfg, "", false, true, err
	}
	errs := nullSettings(&cfg).Apply(fs, true)
	if cfg.DSN != "" && !cliflag.Given(fs, "transport") {
		cfg.Transports = []string{null.DSNTransport(cfg.Engine, cfg.DSN)}
	}
	if cfg.Engine == "sqlite" {
		cfg.Transports = nil
	}
	if err := errors.Join(append(errs, cfg.Check())...); err != nil {
		return cfg, "", false, true, err
	}
	return cfg, *sp, *js, false, nil
}

// nullSettings are run null's flags on the fields of cfg; a server's
// transport, pairing and protocol are spelled out for it alone.
func nullSettings(cfg *null.RunConfig) cliflag.Settings {
	pg := func() bool { return cfg.Engine != "sqlite" }
	ss := cliflag.Settings{cliflag.Str("engine", &cfg.Engine), cliflag.DSN(&cfg.DSN),
		cliflag.When(cliflag.List("transport", ",", &cfg.Transports), pg), cliflag.When(cliflag.List("pairing", ",", &cfg.Pairings), pg),
		cliflag.When(cliflag.Str("protocol", &cfg.Protocol), pg), cliflag.Ints("streams", &cfg.Streams),
		cliflag.Duration("duration", &cfg.Duration), cliflag.Duration("warmup", &cfg.Warmup), cliflag.Int("repeat", &cfg.Repeat)}
	return append(ss, pacingSettings(&cfg.Pacing)...)
}

// nullArgv is the one command line that gives cfg, every setting spelled
// out (the password of a DSN is hidden).
func nullArgv(cfg null.RunConfig) []string {
	return nullSettings(&cfg).Argv("run", "null")
}

func runNull(ctx context.Context, e *env, args []string) error {
	cfg, storePath, asJSON, done, err := nullFlags(e, args)
	if done || err != nil {
		return err
	}
	return runNullConfig(ctx, e, cfg, storePath, asJSON)
}

// runNullConfig runs a checked configuration: cells, store, sweep, render.
func runNullConfig(ctx context.Context, e *env, cfg null.RunConfig, storePath string, asJSON bool) error {
	machine, err := topo.FromSysfs("/")
	if err != nil {
		return fmt.Errorf("reading this machine's topology: %w", err)
	}
	cells, layout, matrix := cfg.Cells(machine)
	if len(cells) == 0 {
		var why []string
		for _, p := range null.Select(matrix, cfg.Pairings) {
			why = append(why, p.String())
		}
		return fmt.Errorf("-pairing: this machine offers none of %s (%s)", strings.Join(cfg.Pairings, ", "), strings.Join(why, "; "))
	}
	prog := newRows(e, asJSON, null.WriteRow)
	defer prog.Done()
	rec, err := startRun(ctx, e.withArgs(nullArgv(cfg)), storePath, pacedKind(null.RunKind, cfg.Pacing), cfg)
	if err != nil {
		return err
	}
	null.WriteHeader(prog.table)
	measured, err := sweep.Run(ctx, cfg.Plan(cells), null.NewSweep(cfg, layout, matrix), rec, prog)
	return finishRun(e, rec, err, null.Headline(measured), asJSON, append([]*null.Cell{}, measured...))
}
