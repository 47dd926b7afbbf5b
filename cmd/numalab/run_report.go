package main

import (
	"context"
	"errors"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/workload/transtats"
)

// reportFlags parses run report's command line into a checked
// configuration, and the DSN with its password that the run connects with.
func reportFlags(e *env, args []string) (cfg transtats.RunConfig, dsn, storePath string, asJSON, done bool, err error) {
	cfg = transtats.DefaultRunConfig()
	fs, sp, js := runFlagSet(e, "report", cfg.Settings(), "print the run as JSON on stdout at the end (the table goes to stderr)")
	done, errs, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return cfg, "", "", false, true, err
	}
	errs = append(errs, cfg.Settings().Apply(fs, true)...)
	if err := errors.Join(append(errs, cfg.CheckFlags(fs)...)...); err != nil {
		return cfg, "", "", false, true, err
	}
	if dsn, err = cfg.Resolve(); err != nil {
		return cfg, "", "", false, true, err
	}
	return cfg, dsn, *sp, *js, false, nil
}

func runReport(ctx context.Context, e *env, args []string) error {
	cfg, dsn, storePath, asJSON, done, err := reportFlags(e, args)
	if done || err != nil {
		return err
	}
	if len(cfg.Monitor) > 0 {
		return runReportMonitor(ctx, e, cfg, dsn, storePath, asJSON)
	}
	return runReportConfig(ctx, e, cfg, dsn, storePath, asJSON)
}

// runReportMonitor runs --monitor (runMonitor) on the first query, stream
// count and DOP of cfg.
func runReportMonitor(ctx context.Context, e *env, cfg transtats.RunConfig, dsn, storePath string, asJSON bool) error {
	fs, err := monitor.CheckRequest(ctx, cfg.MonitorRequest(), dsn, cfg.ConnectTimeout)
	if err != nil {
		return err
	}
	_, one, prog, err := startSweep(e, sweepOut{asJSON: asJSON, hog: cfg.Hog}, monitor.WriteRow, cfg.FirstSpec())
	if err != nil {
		return err
	}
	defer prog.Done()
	w := transtats.NewSweep(cfg, dsn, one[0].DataNode)
	return runMonitor(ctx, e, cfg.MonitorJob(fs, one[0], w), cfg.DSN != "", cfg.Argv(), cfg, prog, storePath, asJSON)
}

// runReportConfig runs a checked configuration: plan, store, sweep, render.
func runReportConfig(ctx context.Context, e *env, cfg transtats.RunConfig, dsn, storePath string, asJSON bool) error {
	_, cells, prog, err := startSweep(e, sweepOut{asJSON: asJSON, hog: cfg.Hog}, transtats.WriteRow, cfg.Spec())
	if err != nil {
		return err
	}
	defer prog.Done()
	rec, err := startRun(ctx, e.withArgs(cfg.Argv()), storePath, pacedKind(result.RunQueries, cfg.Pacing), cfg)
	if err != nil {
		return err
	}
	w := transtats.NewSweep(cfg, dsn, cells[0].DataNode) // one data node for a server (OneDataNode)
	transtats.WriteHeader(prog.table)
	measured, err := sweep.Run(ctx, cfg.Plan(cells), w, rec, prog)
	out := w.Conclude(cfg, measured)
	if !asJSON {
		transtats.WriteEstimates(prog.table, out)
	}
	return finishRun(e, rec, err, transtats.Headline(cfg, measured), asJSON, out)
}
