package main

import (
	"context"
	"io"

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

// curveRun is a workload's --curve run: its command line and
// configuration, its load and seed, its first stream count and placement,
// its plan, and how its cells are measured, read and printed.
type curveRun[T any] struct {
	kind   string // curve.RunKind, curve.SQLRunKind
	argv   []string
	config any
	load   sweep.Load
	seed   int64
	repeat int
	spread bool
	first  sweep.Spec
	plan   func([]sweep.Cell) sweep.Plan
	sweep  func(one sweep.Cell) sweep.Workload[T]
	cell   func(T) *result.Cell
	header func(io.Writer)
	row    func(io.Writer, sweep.Cell, T)
}

// runCurve runs --curve: the capacity cell, the paced cells at their
// fractions of it, each stored as it is measured, then the curve and its
// knee, stored and printed.
func runCurve[T any](ctx context.Context, e *env, c curveRun[T], storePath string, asJSON bool) error {
	_, one, prog, err := startSweep(e, sweepOut{asJSON: asJSON, spread: c.spread, machine: true}, c.row, c.first)
	if err != nil {
		return err
	}
	defer prog.Done()
	rec, err := startRun(ctx, e.withArgs(c.argv), storePath, c.kind, c.config)
	if err != nil {
		return err
	}
	plan := c.plan(curve.Plan(one[0], c.load.CurveAt, c.repeat))
	plan.Pace = curve.Pacer(c.load.CurveAt, c.load.Pacing, c.seed)
	prog.Note("--curve: cell 0 is the closed-loop capacity; the others are paced at fractions of it")
	c.header(prog.table)
	out, err := curve.Measure(ctx, plan, c.sweep(one[0]), c.cell, c.load.CurveAt, c.load.KneeFactor, rec, prog, prog.table)
	return finishRun(e, rec, err, curve.Headline(out.Curve), asJSON, out)
}

// runOLTPCurve runs run oltp --curve (runCurve).
func runOLTPCurve(ctx context.Context, e *env, cfg tpcc.RunConfig, storePath string, asJSON bool) error {
	return runCurve(ctx, e, curveRun[*result.Cell]{kind: curve.RunKind, argv: cfg.Argv(), config: cfg, load: cfg.Load, seed: cfg.Seed,
		repeat: cfg.Repeat, spread: cfg.Spread, first: cfg.FirstSpec(), plan: cfg.Plan,
		sweep: func(one sweep.Cell) sweep.Workload[*result.Cell] { return tpcc.NewSweep(cfg, one.DataNode) },
		cell:  func(c *result.Cell) *result.Cell { return c }, header: tpcc.WriteHeader, row: tpcc.WriteRow}, storePath, asJSON)
}
