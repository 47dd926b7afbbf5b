package calib

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/numalab/numalab/internal/calibrated"
	"github.com/numalab/numalab/internal/pgscript"
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

// ScriptsWorkload is the workload of the user's scripts, as a fit of them
// names it and a run of them is matched to its fit: each --script's file
// name without its directory and each --builtin as "builtin:NAME", a
// weight other than 1 after @, joined by " + " in the order given
// ("bank.sql", "bank.sql@3 + builtin:select-only"). A spec that does not
// parse is named as given. Two files of one name in two directories are
// one workload to it.
func ScriptsWorkload(scripts, builtins []string) string {
	var names []string
	for i, spec := range append(append([]string{}, scripts...), builtins...) {
		file, w, err := pgscript.ParseSpec(spec)
		switch {
		case err != nil:
			names = append(names, spec)
			continue
		case i < len(scripts):
			file = filepath.Base(file)
		default:
			file = "builtin:" + file
		}
		if w != 1 {
			file += fmt.Sprintf("@%d", w)
		}
		names = append(names, file)
	}
	return strings.Join(names, " + ")
}

// RunWorkload is the workload of a stored OLTP run (tpcc-ro) or run of
// the user's scripts (result.RunSQL: ScriptsWorkload, from its
// configuration); "" for a run of another kind.
func RunWorkload(run *result.Run) string {
	switch {
	case run.Kind == result.RunOLTP:
		return calibrated.LegacyWorkload
	case run.Kind != result.RunSQL || len(run.Config) == 0:
		return ""
	}
	var c struct {
		Scripts  []string `json:"scripts"`
		Builtins []string `json:"builtins"`
	}
	if json.Unmarshal(run.Config, &c) != nil {
		return ""
	}
	return ScriptsWorkload(c.Scripts, c.Builtins)
}

// engineFit is, of the RunFit runs fits, the last whose cells ran on
// engine, and of those the last of workload (the model's run's,
// RunWorkload; "" for any); nil and a note naming the others when none ran
// on engine, and a note saying so when the fit taken is not of workload.
func engineFit(fits []*result.Run, engine, workload string) (*result.Run, string, error) {
	var others []string
	var newest *result.Run
	var newestWorkload string
	for i := len(fits) - 1; i >= 0; i-- {
		f, err := KindMeasuredFit.Last(fits[i])
		if err != nil {
			return nil, "", err
		}
		if f == nil {
			continue
		}
		switch {
		case f.FitEngine() != engine:
			others = append(others, fmt.Sprintf("run %d (%s, %s)", fits[i].ID, f.FitEngine(), f.FitWorkload()))
		case workload == "" || f.FitWorkload() == workload:
			return fits[i], "", nil
		case newest == nil:
			newest, newestWorkload = fits[i], f.FitWorkload()
		}
	}
	if newest != nil {
		return newest, fmt.Sprintf("no measured fit of %s's %s among the runs: A and M are run %d's, %s's %s, not %s's "+
			"('numalab run pages --engine %s' measures it, with --script for scripts)",
			engine, workload, newest.ID, engine, newestWorkload, workload, engine), nil
	}
	if len(others) == 0 {
		return nil, "", nil
	}
	return nil,
		fmt.Sprintf("no measured fit of %s among the runs, only of other engines (%s), whose A and M are theirs, not %s's",
			engine, strings.Join(others, ", "), engine), nil
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
