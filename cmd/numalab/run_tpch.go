package main

import (
	"context"
	"errors"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/dop"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/workload/tpch"
)

// tpchFlags parses the flags into a checked configuration.
func tpchFlags(e *env, args []string) (cfg tpch.RunConfig, dsn, storePath string, threshold dop.Threshold, asJSON, done bool, err error) {
	cfg, threshold = tpch.DefaultRunConfig(), defaultDOPThreshold
	fs, sp, js := runFlagSet(e, "tpch", cfg.Settings(&threshold), "print the cells and the analysis as JSON on stdout at the end (the table goes to stderr)")
	done, bad, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return cfg, "", "", threshold, false, true, err
	}
	if err := errors.Join(append(bad, cfg.Settings(&threshold).Apply(fs, true)...)...); err != nil {
		return cfg, "", "", threshold, false, true, err
	}
	if dsn, err = cfg.Resolve(); err != nil {
		return cfg, "", "", threshold, false, true, err
	}
	return cfg, dsn, *sp, threshold, *js, false, nil
}

// defaultDOPThreshold is where the DOP rule of thumb parallelises unless
// told: a plan worth half a second by the run's own fit of cost against
// time (Chang's proposal, cost 30 at his measured 57 units/s).
var defaultDOPThreshold = dop.Threshold{Seconds: 0.5}

func runTPCH(ctx context.Context, e *env, args []string) error {
	cfg, dsn, storePath, threshold, asJSON, done, err := tpchFlags(e, args)
	if done || err != nil {
		return err
	}
	return runTPCHConfig(ctx, e, cfg, dsn, storePath, threshold, asJSON)
}

// runTPCHConfig runs a checked configuration: cells, store, sweep,
// analysis, render.
func runTPCHConfig(ctx context.Context, e *env, cfg tpch.RunConfig, dsn, storePath string, threshold dop.Threshold, asJSON bool) error {
	specs := []sweep.Spec{cfg.Spec()}
	if len(cfg.Streams) > 0 {
		specs = append(specs, cfg.ThroughputSpec())
	}
	machine, cells, prog, err := startSweep(e, sweepOut{asJSON: asJSON, hog: cfg.Hog}, tpch.WriteRow, specs...)
	if err != nil {
		return err
	}
	defer prog.Done()
	probe := store.LatestIORatio(storePath)
	rec, err := startRun(ctx, e.withArgs(cfg.Argv(threshold)), storePath, pacedKind(tpch.RunKind, cfg.Pacing), cfg)
	if err != nil {
		return err
	}
	w := tpch.NewSweep(cfg, dsn, cells[0].DataNode) // one data node for a server (OneDataNode)
	tpch.WriteRowHeader(prog.table)
	measured, err := sweep.Run(ctx, cfg.Plan(cells), w, rec, prog)
	out := w.Conclude(measured, machine, threshold, probe)
	if len(measured) > 0 {
		err = errors.Join(err, rec.Add(tpch.KindAnalysis.Of(out.Analysis)))
	}
	err = finishRun(e, rec, err, tpch.Headline(cfg, out.Analysis), asJSON, out)
	if !asJSON {
		tpch.WriteAnalysis(prog.table, out.Analysis, out.Storage)
	}
	return err
}
