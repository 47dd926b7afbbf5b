package calib

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/setting"
)

// Stored is what the model reads from a results store (store.Store has it).
type Stored interface {
	Get(id int64) (*result.Run, error)
	Latest(kind string, before int64, statuses ...string) (int64, error)
}

// CalibrateStored calibrates the model to the stored OLTP run runID, a
// memory probe (run probeID, or with 0 the latest probe stored before the
// OLTP run: complete, interrupted or still running) and a measured fit:
// run fitID, or with 0 the newest complete RunFit run in the store (eval
// stores one); with none stored, A and M come from the OLTP run alone.
// FitChoice says which. Runs of other kinds, and a calibration with no
// point to fit, are refused.
func CalibrateStored(st Stored, runID, probeID, fitID int64) (*Calibration, error) {
	oltp, err := st.Get(runID)
	if err != nil {
		return nil, err
	}
	if oltp.Kind != result.RunOLTP && oltp.Kind != result.RunSQL {
		return nil, setting.Errorf("run",
			"run %d is a %s run, not an OLTP run or a run of your scripts (try 'numalab runs --kind oltp' or '--kind sql')",
			runID, oltp.Kind)
	}
	if probeID == 0 {
		probeID, err = st.Latest(result.RunProbeMem, runID, result.StatusComplete, result.StatusInterrupted,
			result.StatusRunning)
		if err != nil {
			return nil, err
		}
		if probeID == 0 {
			return nil, setting.Errorf("run",
				"no memory probe stored before run %d to give its latency (run 'numalab probe mem', or give --probe-run)", runID)
		}
	}
	probe, err := st.Get(probeID)
	if err != nil {
		return nil, err
	}
	if probe.Kind != result.RunProbeMem {
		return nil, setting.Errorf("probe-run", "run %d is a %s run, not a memory probe", probeID, probe.Kind)
	}
	runs, choice, err := storedFit(st, oltp, fitID)
	if err != nil {
		return nil, err
	}
	c, err := Calibrate(append([]*result.Run{probe, oltp}, runs...)...)
	if err != nil {
		return nil, err
	}
	c.FitChoice = choice
	switch {
	case len(runs) == 0 || c.FitRun != 0:
	case c.Measured != nil:
		c.FitChoice += fmt.Sprintf(", not used: its cells did not fit (%s), so A and M are fitted to %s %d alone",
			c.Measured.FitError, RunLabel(oltp.Kind), runID)
	default:
		c.FitChoice += fmt.Sprintf(", not used: it stored no measured fit, so A and M are fitted to %s %d alone",
			RunLabel(oltp.Kind), runID)
	}
	if len(c.Points) == 0 {
		return nil, fmt.Errorf("fitting run %d with probe %d: nothing to fit: %s",
			runID, probeID, strings.Join(c.Notes, "; "))
	}
	return c, nil
}

// storedFit is the RunFit run a stored calibration of oltp uses, as
// CalibrateStored chooses it, and the choice in words; no run without one
// stored. Unnamed, the newest is used of those measured on oltp's engine
// and host: a fit is one engine's A and M on one machine, and of those the
// newest of the run's workload (RunWorkload: tpcc-ro, or the user's
// scripts), else the engine's newest, saying it is not the run's. Named, a
// fit of another engine is refused.
func storedFit(st Stored, oltp *result.Run, fitID int64) ([]*result.Run, string, error) {
	engine, workload := RunEngine(oltp), RunWorkload(oltp)
	theirs := engine + "'s " + workload
	scripts := oltp.Kind == result.RunSQL
	noun, how := "workload", fmt.Sprintf("'numalab run pages --engine %s'", engine)
	if scripts {
		noun, how = "scripts", fmt.Sprintf("'numalab run pages --engine %s --script FILE'", engine)
	}
	// notTheirs says, of a fit of engine in words, that it is not of the
	// run's workload; "" when it is.
	notTheirs := func(what string) string {
		if what == theirs {
			return ""
		}
		return fmt.Sprintf(", not this run's %s (%s)", noun, workload)
	}
	if fitID != 0 {
		run, err := st.Get(fitID)
		if err != nil {
			return nil, "", err
		}
		if run.Kind != RunFit {
			return nil, "", setting.Errorf("fit-run",
				"run %d is a %s run, not a %s run (try 'numalab runs --kind %s')", fitID, run.Kind, RunFit, RunFit)
		}
		what, err := fitEngineOf(run)
		if err != nil {
			return nil, "", err
		}
		if what != "" && !strings.HasPrefix(what, engine+"'s ") {
			return nil, "", setting.Errorf("fit-run", "run %d fitted %s, and %s %d ran on %s: one engine's A and M "+
				"are not another's (numalab run pages --engine %s stores %s's)",
				fitID, what, RunLabel(oltp.Kind), oltp.ID, engine, engine, engine)
		}
		return []*result.Run{run}, fmt.Sprintf("%s run %d, %s%s, named by --fit-run",
			RunFit, fitID, what, notTheirs(what)), nil
	}
	var skipped []string
	var newest *result.Run // of engine on this host, when no fit of the run's scripts is found
	var newestWhat string
	for id := int64(0); ; {
		var err error
		if id, err = st.Latest(RunFit, id, result.StatusComplete); err != nil {
			return nil, "", err
		}
		if id == 0 {
			break
		}
		run, err := st.Get(id)
		if err != nil {
			return nil, "", err
		}
		what, err := fitEngineOf(run)
		switch {
		case err != nil:
			return nil, "", err
		case what == "" || !strings.HasPrefix(what, engine+"'s "):
			skipped = append(skipped, fmt.Sprintf("%d (%s)", id, cmp.Or(what, "no fit stored")))
		case run.Host != oltp.Host:
			skipped = append(skipped, fmt.Sprintf("%d (host %q, not %q)", id, run.Host, oltp.Host))
		case what == theirs && scripts:
			return []*result.Run{run}, fmt.Sprintf("%s run %d, %s, this run's scripts, "+
				"the newest of them on %s on this host in the store (--fit-run ID chooses another)", RunFit, id, what, engine), nil
		case what == theirs:
			return []*result.Run{run},
				fmt.Sprintf("%s run %d, %s, the newest of %s on this host in the store (--fit-run ID chooses another)",
					RunFit, id, what, engine), nil
		case newest == nil:
			newest, newestWhat = run, what
		}
	}
	if newest != nil {
		return []*result.Run{newest}, fmt.Sprintf("%s run %d, %s%s: no fit of %s on %s on this host in the store "+
			"(%s stores one), so the newest of %s on this host (--fit-run ID chooses another)",
			RunFit, newest.ID, newestWhat, notTheirs(newestWhat), workload, engine, how, engine), nil
	}
	none := fmt.Sprintf("no %s run of %s on host %q in the store ('numalab run pages --engine %s' stores one)",
		RunFit, engine, oltp.Host, engine)
	if n := len(skipped); n > 3 {
		skipped = append(skipped[:3], fmt.Sprintf("%d more", n-3))
	}
	if len(skipped) > 0 {
		none += "; not used: " + strings.Join(skipped, ", ")
	}
	return nil, fmt.Sprintf("%s: A and M fitted to %s %d alone", none, RunLabel(oltp.Kind), oltp.ID), nil
}

// StoredMachine is what the stored run id offers the model (RunMachine),
// for --from-run.
func StoredMachine(st Stored, id int64) (*result.Topology, *ProbeLatency, error) {
	r, err := st.Get(id)
	if err != nil {
		return nil, nil, setting.Wrap("from-run", err)
	}
	t, p, err := RunMachine(r)
	if err != nil {
		return nil, nil, setting.Wrap("from-run", err)
	}
	return t, p, nil
}

// StoredSMTGain is the SMT gain the stored OLTP run id measured (its best
// smt=on median over its best smt=off median on the same cores), for
// --smt-run; a run with no such pair is refused, saying what would do.
func StoredSMTGain(st Stored, id int64) (model.Range, error) {
	r, err := st.Get(id)
	if err != nil {
		return model.Range{}, setting.Wrap("smt-run", err)
	}
	if r.Kind != result.RunOLTP {
		return model.Range{}, setting.Errorf("smt-run",
			"run %d is a %s run, not an OLTP run (try 'numalab runs --kind %s')", id, r.Kind, result.RunOLTP)
	}
	var c Calibration
	if err := c.measureSMT(r); err != nil {
		return model.Range{}, setting.Wrap("smt-run", err)
	}
	if !c.SMTMeasured {
		return model.Range{},
			setting.Errorf("smt-run", "OLTP run %d has no smt=on and smt=off cells on the same cores of a machine with "+
				"SMT: it measured no SMT gain (eval's SMT step, or 'numalab run oltp' with both placements, measures one)", id)
	}
	return c.SMT, nil
}
