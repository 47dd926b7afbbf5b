package main

import (
	"context"
	"errors"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

// oltpFlags parses run oltp's command line into a configuration: defaults,
// then the sweep file, then the flags given.
func oltpFlags(e *env, args []string) (cfg tpcc.RunConfig, storePath string, asJSON, done bool, err error) {
	cfg = tpcc.DefaultRunConfig()
	fs, sp, js := runFlagSet(e, "oltp", cfg.Settings(), "print the cells as JSON on stdout (the table goes to stderr)")
	file := fs.String("f", "", "sweep `file` (TOML); flags given override it")
	done, bad, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return cfg, "", false, true, err
	}
	md, err := cliflag.SweepFile("run oltp", *file, &cfg)
	if err != nil {
		return cfg, "", false, true, err
	}
	bad = append(bad, cfg.Settings().Apply(fs, false)...)
	bad = append(bad, cfg.CheckFlags(func(flag, key string) bool { return md.IsDefined(key) || cliflag.Given(fs, flag) })...)
	if err := errors.Join(bad...); err != nil {
		return cfg, "", false, true, err
	}
	return cfg, *sp, *js, false, cliflag.CheckFileEngine(cfg.Engine, cfg.DB)
}

func runOLTP(ctx context.Context, e *env, args []string) error {
	cfg, storePath, asJSON, done, err := oltpFlags(e, args)
	if done || err != nil {
		return err
	}
	if len(cfg.Monitor) > 0 {
		return runOLTPMonitor(ctx, e, cfg, storePath, asJSON)
	}
	if cfg.Curve {
		return runOLTPCurve(ctx, e, cfg, storePath, asJSON)
	}
	return runOLTPConfig(ctx, e, cfg, storePath, asJSON)
}

// runOLTPConfig runs a checked configuration: plan, store, sweep, render.
func runOLTPConfig(ctx context.Context, e *env, cfg tpcc.RunConfig, storePath string, asJSON bool) error {
	_, cells, prog, err := startSweep(e, sweepOut{asJSON: asJSON, spread: cfg.Spread, machine: true}, tpcc.WriteRow, cfg.Spec())
	if err != nil {
		return err
	}
	defer prog.Done()
	rec, err := startRun(ctx, e.withArgs(cfg.Argv()), storePath, pacedKind(result.RunOLTP, cfg.Pacing), cfg)
	if err != nil {
		return err
	}
	tpcc.WriteHeader(prog.table)
	measured, err := sweep.Run(ctx, cfg.Plan(cells), tpcc.NewSweep(cfg, cells[0].DataNode), rec, prog)
	return finishRun(e, rec, err, tpcc.Headline(measured), asJSON, append([]*result.Cell{}, measured...))
}

// runOLTPMonitor runs --monitor on the first stream count and placement
// (monitorFirst).
func runOLTPMonitor(ctx context.Context, e *env, cfg tpcc.RunConfig, storePath string, asJSON bool) error {
	job := func(fs []monitor.Facility, one sweep.Cell) monitor.Job[result.Cell] {
		return cfg.MonitorJob(fs, one, tpcc.NewSweep(cfg, one.DataNode))
	}
	return monitorFirst(ctx, e, cfg.MonitorRequest(), cfg.DSN, cfg.ConnectTimeout, cfg.Spread, cfg.FirstSpec(), job, cfg.Argv(), cfg, storePath, asJSON)
}
