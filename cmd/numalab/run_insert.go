package main

import (
	"context"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/workload/insert"
)

// insertFlags parses run insert's command line into a configuration:
// defaults, then the sweep file, then the flags given.
func insertFlags(e *env, args []string) (cfg insert.RunConfig, storePath string, asJSON, done bool, err error) {
	cfg = insert.DefaultRunConfig()
	fs, sp, js := runFlagSet(e, "insert", cfg.Settings(), "print the cells' load figures as JSON on stdout (the table goes to stderr)")
	file := fs.String("f", "", "sweep `file` (TOML); flags given override it")
	if done, err = cliflag.ParseNoArgs(e.stdout, fs, args); done {
		return cfg, "", false, true, err
	}
	if _, err := cliflag.SweepFile("run insert", *file, &cfg); err != nil {
		return cfg, "", false, true, err
	}
	if bad := cfg.Settings().Apply(fs, false); len(bad) > 0 {
		return cfg, "", false, true, bad[0]
	}
	return cfg, *sp, *js, false, cfg.Check("/")
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
	rec, err := startRun(ctx, e.withArgs(cfg.Argv()), storePath, pacedKind(insert.RunKind, cfg.Pacing), cfg)
	if err != nil {
		return err
	}
	insert.WriteHeader(prog.table)
	measured, err := sweep.Run(ctx, cfg.Plan(cells), insert.NewSweep(cfg), rec, prog)
	return finishRun(e, rec, err, insert.Headline(measured), asJSON, insert.Stats(measured))
}
