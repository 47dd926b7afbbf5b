package calibrated

import (
	"fmt"

	"github.com/numalab/numalab/internal/model"
)

// HeldOut is a prediction of cells the calibration was not fitted to,
// against what they measured.
type HeldOut struct {
	What string `json:"what"` // the held-out cells, in words
	// Latency is where LatencyNS comes from, in words.
	Latency   string         `json:"latency"`
	LatencyNS float64        `json:"latency_ns"`
	Workload  model.Workload `json:"workload"` // the workload predicted with
	// PredictedTPS and MeasuredTPS are per core: the cells run one
	// stream; MeasuredTPS is the median over Cells cells.
	PredictedTPS float64 `json:"predicted_tps_per_core"`
	MeasuredTPS  float64 `json:"measured_tps_per_core"`
	Cells        int     `json:"cells"`
	// Error is (predicted − measured) / measured.
	Error float64 `json:"relative_error"`
}

// String is the prediction in one line.
func (h HeldOut) String() string {
	return fmt.Sprintf(
		"held-out prediction of %s at %s ns (%s): model %s tps per core, measured %s (median of %d cells), error %+.1f%%",
		h.What, model.Fixed(h.LatencyNS, 1), h.Latency, model.Fixed(h.PredictedTPS, 0), model.Fixed(h.MeasuredTPS, 0),
		h.Cells, 100*h.Error)
}

// AnotherLatency is how far, relative to the nearest fitted point's
// latency, a held-out point's latency must lie to test the model at a
// latency it was not fitted at.
const AnotherLatency = 0.25

// NeighbourPair is one repeat's pair of one-stream neighbour cells: the
// same stream with a memory-bandwidth neighbour and with a control
// neighbour (busy, no memory traffic) on the same other CPUs.
type NeighbourPair struct {
	Repeat    int     `json:"repeat"`
	Neighbour float64 `json:"neighbour_tps"`
	Control   float64 `json:"control_tps"`
	// LoadedNS and ControlNS are the DRAM chain's latency on the stream's
	// CPU with each neighbour running (medians of the chain's windows).
	LoadedNS  float64 `json:"loaded_ns"`
	ControlNS float64 `json:"control_ns"`
	GBps      float64 `json:"gb_per_s"` // what the bandwidth neighbour read
}

// Ratio is the pair's tps with the bandwidth neighbour over the control's.
func (p NeighbourPair) Ratio() float64 { return p.Neighbour / p.Control }

// AddedNS is the latency the bandwidth neighbour added over the control.
func (p NeighbourPair) AddedNS() float64 { return p.LoadedNS - p.ControlNS }

// OtherLatency is the held-out point at another latency: pairs of cells
// of one stream, each with a memory-bandwidth neighbour and beside it a
// control neighbour that keeps the same CPUs as busy without memory
// traffic, so that what the neighbour does besides loading memory (taking
// the CPUs, the host's share of them) is in both and cancels in their
// ratio. The model, not refitted, predicts that ratio from the latency the
// bandwidth neighbour added over the control:
//
//	predicted = TPSPerCore(w, L + added) / TPSPerCore(w, L)
//	measured  = median over pairs of tps(neighbour) / tps(control)
//	error     = predicted / measured − 1
//
// with w and L the workload and latency the model rests on and added the
// median over pairs of the chain's latency with the bandwidth neighbour
// minus with the control.
type OtherLatency struct {
	What  string          `json:"what"` // the pairs, in words
	Pairs []NeighbourPair `json:"pairs"`
	// BaseNS is L, Base where it comes from; AddedNS the median added;
	// LatencyNS = BaseNS + AddedNS, the point's latency.
	BaseNS    float64 `json:"base_ns"`
	Base      string  `json:"base"`
	AddedNS   float64 `json:"added_ns"`
	LatencyNS float64 `json:"latency_ns"`
	// NearestNS is the fitted point's latency nearest LatencyNS, Distance
	// (LatencyNS − NearestNS) / NearestNS; Another is |Distance| ≥
	// AnotherLatency: the point lies at a latency the fit did not see.
	NearestNS float64        `json:"nearest_fitted_ns"`
	Distance  float64        `json:"distance"`
	Another   bool           `json:"another_latency"`
	Workload  model.Workload `json:"workload"`
	GHz       float64        `json:"ghz"`
	// PredictedRatio and MeasuredRatio are tps with the neighbour over
	// tps with the control; Error is PredictedRatio/MeasuredRatio − 1.
	PredictedRatio float64 `json:"predicted_ratio"`
	MeasuredRatio  float64 `json:"measured_ratio"`
	Error          float64 `json:"relative_error"`
	// ControlTPS is the control cells' median tps (one stream: per
	// core), the scale at which a chart shows the ratios as tps.
	ControlTPS float64 `json:"control_tps"`
	GBps       float64 `json:"gb_per_s"` // the bandwidth neighbour's, median over pairs
}

// MeasuredTPS and PredictedTPS are the ratios at the control's median
// tps: their error is Error.
func (o OtherLatency) MeasuredTPS() float64 { return o.MeasuredRatio * o.ControlTPS }

func (o OtherLatency) PredictedTPS() float64 { return o.PredictedRatio * o.ControlTPS }

// Where says how far the point lies from the fitted latencies, and
// plainly when that is not another latency.
func (o OtherLatency) Where() string {
	if o.NearestNS == 0 {
		return "no fitted point's latency to set it against"
	}
	s := fmt.Sprintf("%+.0f%% from the nearest fitted point's %s ns", 100*o.Distance, model.Fixed(o.NearestNS, 1))
	if !o.Another {
		s += fmt.Sprintf(": not another latency, less than %.0f%% from a fitted one", 100*AnotherLatency)
	}
	return s
}

// String is the point in one line.
func (o OtherLatency) String() string {
	return fmt.Sprintf("held-out point at another latency: %s; the neighbour added %s ns over the control to "+
		"a DRAM chain on the stream's CPU (median over pairs), so %s + %s = %s ns (L: %s), %s; model tps "+
		"ratio neighbour/control %s, measured %s (median of %d pairs), error %+.1f%%",
		o.What, model.Fixed(o.AddedNS, 1), model.Fixed(o.BaseNS, 1), model.Fixed(o.AddedNS, 1),
		model.Fixed(o.LatencyNS, 1), o.Base, o.Where(),
		model.Fixed(o.PredictedRatio, 3), model.Fixed(o.MeasuredRatio, 3), len(o.Pairs), 100*o.Error)
}
