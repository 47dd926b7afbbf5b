package model

import (
	"fmt"
	"strings"

	"github.com/numalab/numalab/internal/result"
)

// Stored is what the model reads from a results store (store.Store has it).
type Stored interface {
	Get(id int64) (*result.Run, error)
	Latest(kind string, before int64, statuses ...string) (int64, error)
}

// CalibrateStored calibrates the model to the stored OLTP run runID and a
// memory probe: run probeID, or with 0 the latest probe stored before the
// OLTP run (complete, interrupted or still running). Runs of other kinds,
// and a calibration with no point to fit, are refused.
func CalibrateStored(st Stored, runID, probeID int64) (*Calibration, error) {
	oltp, err := st.Get(runID)
	if err != nil {
		return nil, err
	}
	if oltp.Kind != result.RunOLTP {
		return nil, fmt.Errorf("-run: run %d is a %s run, not an OLTP run (try 'numalab runs')", runID, oltp.Kind)
	}
	if probeID == 0 {
		probeID, err = st.Latest(result.RunProbeMem, runID, result.StatusComplete, result.StatusInterrupted, result.StatusRunning)
		if err != nil {
			return nil, err
		}
		if probeID == 0 {
			return nil, fmt.Errorf("-run: no memory probe stored before run %d to give its latency (run 'numalab probe mem', or give --probe-run)", runID)
		}
	}
	probe, err := st.Get(probeID)
	if err != nil {
		return nil, err
	}
	if probe.Kind != result.RunProbeMem {
		return nil, fmt.Errorf("-probe-run: run %d is a %s run, not a memory probe", probeID, probe.Kind)
	}
	c, err := Calibrate(probe, oltp)
	if err != nil {
		return nil, err
	}
	if len(c.Points) == 0 {
		return nil, fmt.Errorf("fitting run %d with probe %d: nothing to fit: %s", runID, probeID, strings.Join(c.Notes, "; "))
	}
	return c, nil
}

// StoredMachine is what the stored run id offers the model (RunMachine),
// for --from-run.
func StoredMachine(st Stored, id int64) (*result.Topology, *ProbeLatency, error) {
	r, err := st.Get(id)
	if err != nil {
		return nil, nil, fmt.Errorf("-from-run: %w", err)
	}
	t, p, err := RunMachine(r)
	if err != nil {
		return nil, nil, fmt.Errorf("-from-run: %w", err)
	}
	return t, p, nil
}
