package monitor

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/numalab/numalab/internal/sweep"
)

// Job is a --monitor run of a workload whose items are V: run oltp's
// (tpcc-ro), run null's (the null transaction) or run report's
// (transtats).
type Job[V any] struct {
	Facilities []Facility
	Kind       string // RunKind, NullRunKind, ReportRunKind or SQLRunKind
	One        sweep.Cell
	Repeat     int
	Window     time.Duration
	// Load is the paced half's fraction of capacity (0: saturation
	// only), Pacing how its calls arrive, Seed their randomness.
	Load   float64
	Pacing sweep.Pacing
	Seed   int64
	Plan   func([]sweep.Cell) sweep.Plan
	Inner  Inner[V]
	// Settings sets what the inner workload's managed server starts with.
	Settings func(map[string]string)
}

// Output is what a --monitor run prints with --json.
type Output struct {
	Cells    []Cell         `json:"cells"`
	Analysis Analysis       `json:"analysis"`
	Paced    *PacedAnalysis `json:"paced,omitempty"`
}

// Run runs j: the facilities' pairs of cells of j.One, each stored with
// rec and told to prog as it is measured, then the cost per facility at
// saturation and, when j.Load is set, at the paced load, each stored; the
// header and the analyses are written to w.
func (j Job[V]) Run(ctx context.Context, rec sweep.Recorder, prog sweep.Progress[Cell], w io.Writer) (Output, error) {
	cells, slots := Plan(j.One, j.Facilities, j.Repeat)
	if j.Load > 0 {
		cells, slots = TwoLoads(j.One, j.Facilities, j.Repeat)
	}
	plan := j.Plan(cells)
	plan.Switch = Switch(slots)
	if j.Load > 0 {
		plan.Pace = Pacer(slots, j.Load, j.Pacing, j.Seed)
	}
	if plan.Trace == 0 {
		plan.Trace = DefaultTrace
	}
	j.Settings(ManagedSettings(j.Facilities))
	WriteHeader(w, j.Kind, j.One, j.Repeat, j.Window)
	measured, err := sweep.Run(ctx, plan, Wrap(j.Inner, slots), rec, prog)
	out := Output{Cells: append([]Cell{}, measured...), Analysis: Analyze(measured)}
	if len(measured) > 0 {
		err = errors.Join(err, rec.Add(KindAnalysis.Of(out.Analysis)))
	}
	WriteAnalysis(w, out.Analysis)
	if j.Load > 0 && len(measured) > len(cells)/2 {
		pa := AnalyzePaced(measured, j.Load)
		out.Paced = &pa
		err = errors.Join(err, rec.Add(KindPacedAnalysis.Of(pa)))
		WritePacedAnalysis(w, pa)
	}
	return out, err
}

// CheckRequest is the facilities of a --monitor request, checked; on a
// user's server (dsn) the server is checked too, connecting within
// timeout, before anything is measured.
func CheckRequest(ctx context.Context, r Request, dsn string, timeout time.Duration) ([]Facility, error) {
	fs, err := Check(r)
	if err != nil {
		return nil, err
	}
	if dsn != "" {
		if err := CheckServer(ctx, dsn, fs, timeout); err != nil {
			return nil, err
		}
	}
	return fs, nil
}
