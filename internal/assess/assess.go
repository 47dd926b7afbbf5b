// Package assess draws numalab's conclusions from stored runs, each with
// its own package, for a report to render: the model calibrated to them
// and each engine's cost (calib), the model against the published results
// (published), and the purchase decisions (decide). It renders nothing
// and opens nothing.
package assess

import (
	"slices"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/conclusion"
	"github.com/numalab/numalab/internal/decide"
	"github.com/numalab/numalab/internal/published"
	"github.com/numalab/numalab/internal/result"
)

// Runs is what is concluded from runs, with the model calibrated for engine (its
// OLTP run and measured fit; "": the OLTP run's engine, calib.CalibrateFor).
// Without a memory probe among runs there is no model, and nothing to conclude.
func Runs(engine string, runs []*result.Run) (conclusion.Inputs, error) {
	var in conclusion.Inputs
	if !probed(runs) {
		return in, nil
	}
	c, err := calib.CalibrateFor(engine, runs...)
	if err != nil {
		return in, err
	}
	in.Model = &c.Model
	if in.Engines, err = calib.EngineCosts(runs...); err != nil {
		return in, err
	}
	if in.Published, err = publishedCheck(c); err != nil {
		return in, err
	}
	own, cat := decide.Choose(c, cpuModel(runs))
	in.Purchase, in.Catalogue = own.Conclusion(), cat.Conclusion()
	return in, nil
}

// probed says whether runs hold a memory probe; a nil run, which
// report.Build refuses, leaves nothing to calibrate.
func probed(runs []*result.Run) bool {
	if slices.Contains(runs, nil) {
		return false
	}
	return slices.ContainsFunc(runs, func(r *result.Run) bool { return r.Kind == result.RunProbeMem })
}

// publishedCheck is the model checked against the public audited results
// of internal/published (what 'numalab model validate' prints), at the
// stall share of c's workload; nil when c has no workload.
func publishedCheck(c *calib.Calibration) (*published.Validation, error) {
	if len(c.Table.Rows) == 0 || !(c.StallShare > 0 && c.StallShare < 1) {
		return nil, nil
	}
	res, err := published.BuiltinResults()
	if err != nil {
		return nil, err
	}
	return published.ValidateAt(res, c.StallShare)
}

// cpuModel is the CPU model of the machine the runs describe (the run
// result.MachineRun picks, as the report's machine), "" when none says.
func cpuModel(runs []*result.Run) string {
	if r := result.MachineRun(runs); r != nil && r.Machine != nil {
		return r.Machine.CPUModel
	}
	return ""
}
