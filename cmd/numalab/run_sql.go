package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/curve"
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/pgscript"
	"github.com/numalab/numalab/internal/result"
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
	errs = append(errs, cfg.Settings().Apply(fs, false)...)
	if err := errors.Join(append(errs, cfg.CheckFlags(fs)...)...); err != nil {
		return cfg, nil, "", false, true, err
	}
	scripts, stored, err := cfg.ParseScripts()
	var init *pgscript.Script
	if err == nil {
		init, err = cfg.ParseInit()
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
	switch {
	case len(cfg.Monitor) > 0:
		return runSQLMonitor(ctx, e, cfg, w, storePath, asJSON)
	case cfg.Curve:
		return runSQLCurve(ctx, e, cfg, w, storePath, asJSON)
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
	if line := sqlscript.Speed(measured); line != "" {
		fmt.Fprintln(prog.table, line)
	}
	return finishRun(e, rec, err, sqlscript.Headline(measured), asJSON, append([]*sqlscript.Cell{}, measured...))
}

// runSQLMonitor runs --monitor on the first stream count, DOP and
// placement (monitorFirst).
func runSQLMonitor(ctx context.Context, e *env, cfg sqlscript.RunConfig, w *sqlscript.Sweep, storePath string, asJSON bool) error {
	job := func(fs []monitor.Facility, one sweep.Cell) monitor.Job[sqlscript.Cell] {
		return cfg.MonitorJob(fs, one, w)
	}
	return monitorFirst(ctx, e, cfg.MonitorRequest(), cfg.DSN, cfg.ConnectTimeout, cfg.Spread, cfg.FirstSpec(), job, cfg.Argv(), cfg, storePath, asJSON)
}

// runSQLCurve runs run sql --curve (runCurve).
func runSQLCurve(ctx context.Context, e *env, cfg sqlscript.RunConfig, w *sqlscript.Sweep, storePath string, asJSON bool) error {
	return runCurve(ctx, e, curveRun[*sqlscript.Cell]{kind: curve.SQLRunKind, argv: cfg.Argv(), config: cfg, load: cfg.Load, seed: cfg.Seed,
		repeat: cfg.Repeat, spread: cfg.Spread, first: cfg.FirstSpec(), plan: cfg.Plan,
		sweep: func(sweep.Cell) sweep.Workload[*sqlscript.Cell] { return w },
		cell:  func(c *sqlscript.Cell) *result.Cell { return &c.Cell }, header: sqlscript.WriteHeader, row: sqlscript.WriteRow}, storePath, asJSON)
}
