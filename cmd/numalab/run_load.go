package main

import (
	"context"

	"github.com/numalab/numalab/internal/curve"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

// pacedKind is the kind a run of kind stores under: kind itself for
// closed loops, kind-paced when p paces the cells, so that no table, fleet
// or model that reads kind's runs as capacity mixes in paced cells, whose
// throughput is their schedule's.
func pacedKind(kind string, p sweep.Pacing) string {
	if p.Paced() {
		return kind + "-paced"
	}
	return kind
}

// runOLTPCurve runs --curve: the capacity cell, the paced cells at their
// fractions of it, each stored as it is measured, then the curve and its
// knee, stored and printed.
func runOLTPCurve(ctx context.Context, e *env, cfg tpcc.RunConfig, storePath string, asJSON bool) error {
	_, one, prog, err := startSweep(e, sweepOut{asJSON: asJSON, spread: cfg.Spread, machine: true}, tpcc.WriteRow, cfg.FirstSpec())
	if err != nil {
		return err
	}
	defer prog.Done()
	rec, err := startRun(ctx, e.withArgs(cfg.Argv()), storePath, curve.RunKind, cfg)
	if err != nil {
		return err
	}
	plan := cfg.Plan(curve.Plan(one[0], cfg.CurveAt, cfg.Repeat))
	plan.Pace = curve.Pacer(cfg.CurveAt, cfg.Pacing, cfg.Seed)
	prog.Note("--curve: cell 0 is the closed-loop capacity; the others are paced at fractions of it")
	tpcc.WriteHeader(prog.table)
	out, err := curve.Measure(ctx, plan, tpcc.NewSweep(cfg, one[0].DataNode), func(c *result.Cell) *result.Cell { return c }, cfg.CurveAt, cfg.KneeFactor, rec, prog, prog.table)
	return finishRun(e, rec, err, curve.Headline(out.Curve), asJSON, out)
}
