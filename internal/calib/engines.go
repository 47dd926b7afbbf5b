package calib

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/numalab/numalab/internal/result"
)

// Each engine has its own A and M: a row store reached over a socket, an
// embedded B-tree read in place and a vectorised column store wait for
// memory in different shares of their cycles. A measured fit (RunFit)
// says which engine and workload its cells ran, and a calibration of an
// OLTP or script run takes only its own engine's fit.

// MinSpread is how far apart, as a fraction of the lower, the kept cells'
// lowest and highest latencies must be for a fit: closer, the slope M is
// the noise of the rates, not their dependence on latency.
const MinSpread = 0.15

// legacyEngine and legacyWorkload are what a fit stored without them
// measured: SQLite's tpcc-ro, the only fit numalab made then.
const (
	legacyEngine   = "sqlite"
	legacyWorkload = "tpcc-ro"
)

// FitEngine is the engine f's cells ran on.
func (f *MeasuredFit) FitEngine() string { return cmp.Or(f.Engine, legacyEngine) }

// FitWorkload is the workload f's cells ran.
func (f *MeasuredFit) FitWorkload() string { return cmp.Or(f.Workload, legacyWorkload) }

// RunEngine is the engine a stored OLTP or script run ran on, as its
// configuration records it; "sqlite" (run oltp's default) when it records
// none.
func RunEngine(run *result.Run) string {
	var c struct {
		Engine string `json:"engine"`
	}
	if len(run.Config) > 0 {
		_ = json.Unmarshal(run.Config, &c) // unreadable: the default, as for none
	}
	return cmp.Or(c.Engine, legacyEngine)
}

// spreadError says why latencies lats cannot fit A and M ("" when they
// can): fewer than two, or the highest less than MinSpread above the
// lowest.
func spreadError(lats []float64) string {
	if len(lats) == 0 {
		return "no kept cell to fit"
	}
	lo, hi := lats[0], lats[0]
	for _, l := range lats {
		lo, hi = min(lo, l), max(hi, l)
	}
	if hi < lo*(1+MinSpread) {
		return fmt.Sprintf("the kept cells' latencies span %.1f to %.1f ns, %.0f%% apart: a fit needs two at least %.0f%% apart, so M is not fitted (the published stall share is assumed instead)",
			lo, hi, 100*(hi/lo-1), 100*MinSpread)
	}
	return ""
}

// engineFit is, of the RunFit runs fits, the last whose cells ran on
// engine; nil and a note naming the others when none did.
func engineFit(fits []*result.Run, engine string) (*result.Run, string, error) {
	var others []string
	for i := len(fits) - 1; i >= 0; i-- {
		f, err := KindMeasuredFit.Last(fits[i])
		if err != nil {
			return nil, "", err
		}
		if f == nil {
			continue
		}
		if f.FitEngine() == engine {
			return fits[i], "", nil
		}
		others = append(others, fmt.Sprintf("run %d (%s, %s)", fits[i].ID, f.FitEngine(), f.FitWorkload()))
	}
	if len(others) == 0 {
		return nil, "", nil
	}
	return nil, fmt.Sprintf("no measured fit of %s among the runs, only of other engines (%s), whose A and M are theirs, not %s's", engine, strings.Join(others, ", "), engine), nil
}

// fitEngineOf is the engine and workload of the measured fit in run, in
// words ("postgres's tpcc-ro"); "" when run holds none.
func fitEngineOf(run *result.Run) (string, error) {
	f, err := KindMeasuredFit.Last(run)
	if err != nil || f == nil {
		return "", err
	}
	return f.FitEngine() + "'s " + f.FitWorkload(), nil
}

// For names the workload and engine the calibration's A and M are for:
// "tpcc-ro on postgres" (FitChoice and Method say what they rest on).
func (m *Calibration) For() string {
	what := legacyWorkload
	if m.oltpLabel == RunLabel(result.RunSQL) {
		what = "your scripts"
	}
	if m.Measured != nil && m.FitRun != 0 {
		what = m.Measured.FitWorkload()
	}
	return what + " on " + m.Engine
}
