package model

import (
	"fmt"
	"strconv"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

// HeldOut is a prediction of cells the calibration was not fitted to,
// against what they measured.
type HeldOut struct {
	What string `json:"what"` // the held-out cells, in words
	// Latency is where LatencyNS comes from, in words.
	Latency   string   `json:"latency"`
	LatencyNS float64  `json:"latency_ns"`
	Workload  Workload `json:"workload"` // the workload predicted with
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
func PredictHeldOut(w Workload, latencyNS, ghz, measured float64) HeldOut {
	p := TPSPerCore(w, latencyNS, ghz)
	return HeldOut{LatencyNS: latencyNS, Workload: w, PredictedTPS: p, MeasuredTPS: measured, Error: (p - measured) / measured}
}

// String is the prediction in one line.
func (h HeldOut) String() string {
	return fmt.Sprintf("held-out prediction of %s at %s ns (%s): model %s tps per core, measured %s (median of %d cells), error %+.1f%%",
		h.What, fmtF(h.LatencyNS, 1), h.Latency, fmtF(h.PredictedTPS, 0), fmtF(h.MeasuredTPS, 0), h.Cells, 100*h.Error)
}

// fitOne is the workload one point fits at the published stall share.
func fitOne(tps, latencyNS, ghz float64) Workload {
	return FromCycles(CyclesAtShare(ghz*1e9/tps, LatencyCycles(latencyNS, ghz), PublishedStallShare.Value))
}

// holdOut predicts OLTP run's cells the calibration did not see. With
// remote data measured (several nodes), the remote one-stream series is
// predicted by the workload fitted to the local series alone. Otherwise
// the run's neighbour cells (memlat.NeighbourCell: one stream while a
// bandwidth neighbour reads) are predicted by the calibrated workload at
// the local latency plus what the neighbour added to a DRAM chain on the
// cell's CPU (median over the cells); the cells' tps is their median.
// Without either, HeldOut stays nil.
func (m *Calibration) holdOut(run *result.Run, local, remote *seriesTPS) error {
	if remote != nil && !m.RemoteAssumed {
		h := PredictHeldOut(fitOne(local.tps, m.LocalNS, m.GHz), m.RemoteNS, m.GHz, remote.tps)
		h.What = fmt.Sprintf("run %d's one-stream cells of %s by a workload fitted to %s alone", run.ID, remote.label, local.label)
		h.Latency, h.Cells = "the measured remote latency", remote.cells()
		m.HeldOut = &h
		return nil
	}
	nc, err := memlat.KindNeighbourCell.All(run)
	if err != nil {
		return err
	}
	var tps, added []float64
	var gbps float64
	for _, c := range nc {
		if c.Cell.Streams == 1 && c.Cell.TPS > 0 {
			tps, added = append(tps, c.Cell.TPS), append(added, c.AddedNS())
			gbps += c.GBps
		}
	}
	if len(tps) == 0 {
		return nil
	}
	gbps /= float64(len(tps))
	add := stats.Median(added)
	h := PredictHeldOut(m.Workload, m.OneSocketNS+add, m.GHz, stats.Median(tps))
	h.What = fmt.Sprintf("run %d's one-stream cells with a memory-bandwidth neighbour (%s GB/s)", run.ID, fmtF(gbps, 1))
	h.Latency = fmt.Sprintf("the local %s ns plus the %s ns the neighbour added to a %s ns DRAM chain on the cell's CPU",
		fmtF(m.OneSocketNS, 1), fmtF(add, 1), strconv.FormatFloat(stats.Median(aloneNS(nc)), 'f', 1, 64))
	h.Cells = len(tps)
	m.HeldOut = &h
	return nil
}

func aloneNS(nc []memlat.NeighbourCell) []float64 {
	var v []float64
	for _, c := range nc {
		v = append(v, c.AloneNS.Median)
	}
	return v
}
