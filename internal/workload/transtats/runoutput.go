package transtats

import (
	"fmt"
	"io"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/estimate"
	"github.com/numalab/numalab/internal/result"
)

// Output is what a run report prints with --json: its load, engine, the
// cells measured, the plan findings and the optimizer's estimates.
type Output struct {
	Load     *result.BulkLoad      `json:"load,omitempty"`
	Engine   *engine.Info          `json:"engine,omitempty"`
	Cells    []*result.QueryCell   `json:"cells"`
	Findings []*result.PlanFinding `json:"findings"`
	// Estimates set the optimizer's estimated speedup beside the measured
	// one (PostgreSQL; NoEstimate says why not on another engine).
	Estimates  []estimate.Row `json:"estimates"`
	NoEstimate string         `json:"no_estimate,omitempty"`
}

// Conclude is the output of a run of w on cfg that measured cells, every
// list empty rather than absent.
func (w *Sweep) Conclude(cfg RunConfig, cells []*result.QueryCell) Output {
	out := Output{Cells: cells, Findings: w.Findings(), Load: w.Load(), Engine: w.Info(),
		Estimates: Estimates(cells), NoEstimate: NoEstimate(cfg.Engine, cfg.DOP)}
	if out.Cells == nil {
		out.Cells = []*result.QueryCell{}
	}
	if out.Findings == nil {
		out.Findings = []*result.PlanFinding{}
	}
	if out.Estimates == nil {
		out.Estimates = []estimate.Row{}
	}
	return out
}

// WriteEstimates prints out's estimates beside the measured speedups, or
// why there are none.
func WriteEstimates(w io.Writer, out Output) {
	estimate.WriteTable(w, out.Estimates)
	if out.NoEstimate != "" {
		fmt.Fprintf(w, "\n%s\n", out.NoEstimate)
	}
}
