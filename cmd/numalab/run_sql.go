package main

import (
	"context"
	"errors"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/pgscript"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/workload/sqlscript"
)

// sqlFlags parses run sql's command line into a checked configuration,
// with every script parsed before anything connects.
func sqlFlags(e *env, args []string) (cfg sqlscript.RunConfig, w *sqlscript.Sweep, storePath string, asJSON, done bool, err error) {
	cfg = sqlscript.DefaultRunConfig()
	fs, sp, js := runFlagSet(e, "sql", cfg.Settings(), "print the cells as JSON on stdout at the end (the tables go to stderr)")
	done, errs, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return cfg, nil, "", false, true, err
	}
	errs = append(errs, cfg.Settings().Apply(fs, true)...)
	if err := errors.Join(append(errs, cfg.CheckFlags()...)...); err != nil {
		return cfg, nil, "", false, true, err
	}
	scripts, stored, err := cfg.Load()
	var init *pgscript.Script
	if err == nil {
		init, err = cfg.LoadInit()
	}
	if err == nil {
		err = cliflag.CheckFileEngine(cfg.Engine, cfg.DB)
	}
	if err != nil {
		return cfg, nil, "", false, true, err
	}
	return cfg, sqlscript.NewSweep(cfg, scripts, stored, init), *sp, *js, false, nil
}

func runSQL(ctx context.Context, e *env, args []string) error {
	cfg, w, storePath, asJSON, done, err := sqlFlags(e, args)
	if done || err != nil {
		return err
	}
	_, cells, prog, err := startSweep(e, sweepOut{asJSON: asJSON, spread: cfg.Spread, machine: true}, sqlscript.WriteRow, cfg.Spec())
	if err != nil {
		return err
	}
	defer prog.Done()
	rec, err := startRun(ctx, e.withArgs(cfg.Argv()), storePath, pacedKind(sqlscript.RunKind, cfg.Pacing), cfg)
	if err != nil {
		return err
	}
	sqlscript.WriteHeader(prog.table)
	measured, err := sweep.Run(ctx, cfg.Plan(cells), w, rec, prog)
	if len(measured) > 0 {
		sqlscript.WriteStatements(prog.table, measured[len(measured)-1])
	}
	return finishRun(e, rec, err, sqlscript.Headline(measured), asJSON, append([]*sqlscript.Cell{}, measured...))
}
