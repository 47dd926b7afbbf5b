package main

import (
	"context"
	"errors"
	"time"

	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/sweep"
)

// monitorFacilities are the facilities of a --monitor request, checked;
// on a user's server (dsn) the server is checked too, before anything is
// measured.
func monitorFacilities(ctx context.Context, r monitor.Request, dsn string, timeout time.Duration) ([]monitor.Facility, error) {
	fs, err := monitor.Check(r)
	if err != nil {
		return nil, err
	}
	if dsn != "" {
		if err := monitor.CheckServer(ctx, dsn, fs, timeout); err != nil {
			return nil, err
		}
	}
	return fs, nil
}

// monitorJob is a --monitor run of a workload whose items are V:
// run oltp's (tpcc-ro), run null's (the null transaction) or run
// report's (transtats).
type monitorJob[V any] struct {
	fs     []monitor.Facility
	dsn    bool     // a user's server (--dsn)
	kind   string   // monitor.RunKind, NullRunKind or ReportRunKind
	argv   []string // the command line stored with the run
	config any      // the configuration stored with the run
	one    sweep.Cell
	repeat int
	window time.Duration
	// load is the paced half's fraction of capacity (0: saturation
	// only), pacing how its calls arrive, seed their randomness.
	load   float64
	pacing sweep.Pacing
	seed   int64
	plan   func([]sweep.Cell) sweep.Plan
	inner  monitor.Inner[V]
	// settings sets what the inner workload's managed server starts with.
	settings func(map[string]string)
}

// runMonitor runs j: what will be set printed, then the facilities' pairs
// of cells of j.one, each cell's row as it is stored, and the cost per
// facility (at saturation, and at the paced load when j.load is set).
func runMonitor[V any](ctx context.Context, e *env, j monitorJob[V], prog *rows[monitor.Cell], storePath string, asJSON bool) error {
	for _, n := range monitor.Changes(j.fs, j.dsn) {
		prog.Note("--monitor: " + n)
	}
	rec, err := startRun(ctx, e.withArgs(j.argv), storePath, j.kind, j.config)
	if err != nil {
		return err
	}
	cells, slots := monitor.Plan(j.one, j.fs, j.repeat)
	if j.load > 0 {
		cells, slots = monitor.TwoLoads(j.one, j.fs, j.repeat)
	}
	plan := j.plan(cells)
	plan.Switch = monitor.Switch(slots)
	if j.load > 0 {
		plan.Pace = monitor.Pacer(slots, j.load, j.pacing, j.seed)
	}
	if plan.Trace == 0 {
		plan.Trace = monitor.DefaultTrace
	}
	j.settings(monitor.ManagedSettings(j.fs))
	monitor.WriteHeader(prog.table, j.kind, j.one, j.repeat, j.window)
	measured, err := sweep.Run(ctx, plan, monitor.Wrap(j.inner, slots), rec, prog)
	an := monitor.Analyze(measured)
	if len(measured) > 0 {
		err = errors.Join(err, rec.Add(monitor.KindAnalysis.Of(an)))
	}
	monitor.WriteAnalysis(prog.table, an)
	var paced *monitor.PacedAnalysis
	if j.load > 0 && len(measured) > len(cells)/2 {
		pa := monitor.AnalyzePaced(measured, j.load)
		paced = &pa
		err = errors.Join(err, rec.Add(monitor.KindPacedAnalysis.Of(pa)))
		monitor.WritePacedAnalysis(prog.table, pa)
	}
	return finishRun(e, rec, err, monitor.Headline(an), asJSON, struct {
		Cells    []monitor.Cell         `json:"cells"`
		Analysis monitor.Analysis       `json:"analysis"`
		Paced    *monitor.PacedAnalysis `json:"paced,omitempty"`
	}{append([]monitor.Cell{}, measured...), an, paced})
}
