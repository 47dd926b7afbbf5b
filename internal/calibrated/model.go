package calibrated

import (
	"cmp"
	"fmt"

	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
)

// PredictSockets are the socket counts a calibration predicts: those the
// published figures cover.
var PredictSockets = []int{1, 2, 4}

// Model is the model calibrated to stored runs (calib.Calibrate): the
// probe's clock and latencies, the transaction's A and M fitted to the
// OLTP run (or a workload assumed without one), the SMT gain, and the
// prediction for PredictSockets sockets of the probed CPU.
type Model struct {
	ProbeRun int64   `json:"probe_run"`
	OLTPRun  int64   `json:"oltp_run,omitempty"`
	GHz      float64 `json:"ghz"`
	// OneSocketNS is one socket's memory latency, LocalNS a multi-socket
	// server's local latency and RemoteNS its remote latency; each
	// measured or assumed (Assumptions says which).
	OneSocketNS    float64 `json:"one_socket_ns"`
	LocalNS        float64 `json:"local_ns"`
	RemoteNS       float64 `json:"remote_ns"`
	RemoteAssumed  bool    `json:"remote_assumed"` // true: one node measured, remote latency assumed
	CoresPerSocket int     `json:"cores_per_socket"`
	// SMT is the gain of a core's second hardware thread: measured from
	// smt=on and smt=off cells (Low = High = Value) or PublishedSMTGain.
	SMT         model.Range `json:"smt_gain"`
	SMTMeasured bool        `json:"smt_measured"`
	// Method says in words how A and M were obtained.
	Method string `json:"method"`
	// Engine is the engine whose A and M these are: the OLTP (or script)
	// run's, "sqlite" without one; a measured fit is taken only of it.
	Engine   string         `json:"engine"`
	Workload model.Workload `json:"workload"`         // A and M in the classic form
	Points   []model.Point  `json:"points,omitempty"` // the measurements fitted
	// two or more latencies: the fit and its quality (R², residuals, intervals)
	Fit *model.Fit `json:"fit,omitempty"`
	// StallShare is M·L·f/C at the one-socket latency: the share of
	// cycles waiting for memory.
	StallShare float64     `json:"stall_share"`
	Table      model.Table `json:"table"`
	// Assumptions are every input of the prediction with its value and
	// source; Residuals each fitted cell's measured and predicted
	// throughput; Flags fitted parameters outside their plausible range.
	Assumptions []Assumption     `json:"assumptions,omitempty"`
	Residuals   []model.Residual `json:"residuals,omitempty"`
	Flags       []string         `json:"flags,omitempty"`
	// HeldOut predicts cells the fit did not see (see holdOut); nil
	// without such cells.
	HeldOut *HeldOut `json:"held_out,omitempty"`
	// Other is the held-out point at another latency: the OLTP run's
	// pairs of neighbour and control cells, predicted by whichever fit
	// the calibration rests on (see other); nil without pairs.
	Other *OtherLatency `json:"other_latency,omitempty"`
	// Measured is the stored measured fit (kind RunFit) among the runs:
	// cells at two or more latencies, bracketed by the speed sentinel.
	// FitRun is its run when A and M come from it; 0 when its cells did
	// not fit (Notes says why).
	Measured *MeasuredFit `json:"measured,omitempty"`
	FitRun   int64        `json:"fit_run,omitempty"`
	// FitChoice says which RunFit run a stored calibration took and why,
	// or that the store had none (CalibrateStored).
	FitChoice string   `json:"fit_choice,omitempty"`
	Notes     []string `json:"notes,omitempty"`
	// OLTPLabel names OLTPRun's kind in words (RunLabel).
	OLTPLabel string `json:"-"`
}

// RestsOn says what A and M come from without a measured fit.
func (m *Model) RestsOn() string {
	if m.OLTPRun != 0 {
		return fmt.Sprintf("%s %d", m.OLTPRunLabel(), m.OLTPRun)
	}
	return "the default transaction"
}

// Machine is the uniform machine of the calibration's latencies.
func (m *Model) Machine() model.Machine {
	return model.Machine{Source: fmt.Sprintf("run %d", m.ProbeRun), LocalNS: m.LocalNS, RemoteNS: m.RemoteNS,
		OneSocketNS: m.OneSocketNS, CoresPerSocket: m.CoresPerSocket, Locality: -1}
}

// ThreadsPerCore is the most hardware threads per core the prediction
// covers: the machine's threads per core (1 without one).
func (m *Model) ThreadsPerCore() int {
	k := 1
	for _, r := range m.Table.Rows {
		k = max(k, r.SMT)
	}
	return k
}

// For names the workload and engine the calibration's A and M are for:
// "tpcc-ro on postgres" (FitChoice and Method say what they rest on).
func (m *Model) For() string {
	what := LegacyWorkload
	if m.OLTPLabel == RunLabel(result.RunSQL) {
		what = "your scripts"
	}
	if m.Measured != nil && m.FitRun != 0 {
		what = m.Measured.FitWorkload()
	}
	return what + " on " + m.Engine
}

// OLTPRunLabel names OLTPRun's kind in words: "OLTP run", "script run".
func (m *Model) OLTPRunLabel() string {
	return cmp.Or(m.OLTPLabel, RunLabel(result.RunOLTP))
}

// RunLabel names a run the model is fitted to by its kind, in words: "OLTP
// run" (run oltp), "script run" (run sql, the user's scripts).
func RunLabel(kind string) string {
	if kind == result.RunSQL {
		return "script run"
	}
	return "OLTP run"
}

// LegacyEngine and LegacyWorkload are what a fit stored without them
// measured: SQLite's tpcc-ro, the only fit numalab made then.
const (
	LegacyEngine   = "sqlite"
	LegacyWorkload = "tpcc-ro"
)
