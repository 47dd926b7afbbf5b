package calibrated

import (
	"github.com/numalab/numalab/internal/model"
)

// EngineCost is one engine's measured fit on this machine and what memory
// latency costs it: A and M with their intervals, R², the held-out
// check's median error, the stall share at one socket's latency, and the
// throughput per core the model predicts at each of PredictSockets
// sockets of this machine's cores (one thread per core).
type EngineCost struct {
	Engine   string `json:"engine"`
	Workload string `json:"workload"`
	FitRun   int64  `json:"fit_run"`
	// NoFit says why the engine's fit run gave no A and M ("" when it did).
	NoFit      string          `json:"no_fit,omitempty"`
	A, M       float64         `json:"-"`
	AInterval  *model.Interval `json:"a_interval,omitempty"`
	MInterval  *model.Interval `json:"m_interval,omitempty"`
	R2         float64         `json:"r2"`
	HeldOut    *float64        `json:"held_out_error,omitempty"`
	StallShare float64         `json:"stall_share"`
	// TPSPerCore are per PredictSockets, at SocketNS; VsOne each over one
	// socket's.
	TPSPerCore []float64 `json:"tps_per_core"`
	VsOne      []float64 `json:"vs_one_socket"`
	SocketNS   []float64 `json:"socket_latency_ns"`
	// Left is the share of its throughput per core with no memory wait
	// the engine keeps at each of CurveNS: A / (A + M·L·f).
	Left []float64 `json:"left"`
}

// CurveNS are the latencies EngineCost.Left is given at: 0 to 500 ns.
var CurveNS = []float64{0, 25, 50, 75, 100, 125, 150, 175, 200, 250, 300, 350, 400, 450, 500}
