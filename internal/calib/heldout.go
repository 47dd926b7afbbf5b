package calib

import (
	"fmt"

	"github.com/numalab/numalab/internal/memlat"
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

// PredictHeldOut predicts one core's throughput of workload w at latencyNS
// and ghz (TPSPerCore) against measured tps per core.
func PredictHeldOut(w model.Workload, latencyNS, ghz, measured float64) HeldOut {
	p := model.TPSPerCore(w, latencyNS, ghz)
	return HeldOut{LatencyNS: latencyNS, Workload: w, PredictedTPS: p, MeasuredTPS: measured, Error: (p - measured) / measured}
}

// String is the prediction in one line.
func (h HeldOut) String() string {
	return fmt.Sprintf("held-out prediction of %s at %s ns (%s): model %s tps per core, measured %s (median of %d cells), error %+.1f%%",
		h.What, model.Fixed(h.LatencyNS, 1), h.Latency, model.Fixed(h.PredictedTPS, 0), model.Fixed(h.MeasuredTPS, 0), h.Cells, 100*h.Error)
}

// fitOne is the workload one point fits at the published stall share.
func fitOne(tps, latencyNS, ghz float64) model.Workload {
	return model.FromCycles(model.CyclesAtShare(ghz*1e9/tps, model.LatencyCycles(latencyNS, ghz), model.PublishedStallShare.Value))
}

func aloneNS(nc []memlat.NeighbourCell) []float64 {
	var v []float64
	for _, c := range nc {
		v = append(v, c.AloneNS.Median)
	}
	return v
}
