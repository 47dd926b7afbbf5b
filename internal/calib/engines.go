package calib

import (
	"cmp"
	"encoding/json"
	"fmt"
	"github.com/numalab/numalab/internal/calibrated"
	"strings"

	"github.com/numalab/numalab/internal/result"
)

// Each engine has its own A and M: a row store reached over a socket, an
// embedded B-tree read in place and a vectorised column store wait for
// memory in different shares of their cycles. A measured fit (RunFit)
// says which engine and workload its cells ran, and a calibration of an
// OLTP or script run takes only its own engine's fit.

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
	return cmp.Or(c.Engine, calibrated.LegacyEngine)
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
