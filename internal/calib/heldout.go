package calib

import (
	"fmt"
	"strconv"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

// PredictHeldOut predicts one core's throughput of workload w at latencyNS
// and ghz (TPSPerCore) against measured tps per core.
func PredictHeldOut(w model.Workload, latencyNS, ghz, measured float64) HeldOut {
	p := model.TPSPerCore(w, latencyNS, ghz)
	return HeldOut{LatencyNS: latencyNS, Workload: w, PredictedTPS: p, MeasuredTPS: measured,
		Error: (p - measured) / measured}
}

// fitOne is the workload one point fits at the published stall share.
func fitOne(tps, latencyNS, ghz float64) model.Workload {
	return model.FromCycles(
		model.CyclesAtShare(ghz*1e9/tps, model.LatencyCycles(latencyNS, ghz), model.PublishedStallShare.Value))
}

func aloneNS(nc []memlat.NeighbourCell) []float64 {
	var v []float64
	for _, c := range nc {
		v = append(v, c.AloneNS.Median)
	}
	return v
}

// holdOut predicts OLTP run's cells the calibration did not see. With
// remote data measured (several nodes), the remote one-stream series is
// predicted by the workload fitted to the local series alone. Otherwise,
// where the run paired its neighbour cells with control cells, the pairs
// are kept for Other (see other) and HeldOut stays nil. A run stored
// before control cells existed has neighbour cells alone
// (memlat.NeighbourCell: one stream while a bandwidth neighbour reads):
// they are predicted as then, by the calibrated workload at the local
// latency plus what the neighbour added to a DRAM chain on the cell's CPU
// (median over the cells), against the cells' median tps, and HeldOut
// says they had no control. Without either, HeldOut stays nil.
func (m *Calibration) holdOut(run *result.Run, local, remote *seriesTPS) error {
	if remote != nil && !m.RemoteAssumed {
		h := PredictHeldOut(fitOne(local.tps, m.LocalNS, m.GHz), m.RemoteNS, m.GHz, remote.tps)
		h.What = fmt.Sprintf("run %d's one-stream cells of %s by a workload fitted to %s alone",
			run.ID, remote.label, local.label)
		h.Latency, h.Cells = "the measured remote latency", remote.cells()
		m.HeldOut = &h
		return nil
	}
	nc, err := memlat.KindNeighbourCell.All(run)
	if err != nil {
		return err
	}
	if p := Pairs(nc); len(p) > 0 {
		m.pairs, m.pairsRun = p, run.ID
		return nil
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
	h.What = fmt.Sprintf(
		"run %d's one-stream cells with a memory-bandwidth neighbour (%s GB/s; no control cells beside them, "+
			"so what the neighbour does besides loading memory, such as taking the other CPU, is in this error too)",
		run.ID, model.Fixed(gbps, 1))
	h.Latency = fmt.Sprintf("the local %s ns plus the %s ns the neighbour added to a %s ns DRAM chain on the cell's CPU",
		model.Fixed(m.OneSocketNS, 1), model.Fixed(add, 1), strconv.FormatFloat(stats.Median(aloneNS(nc)), 'f', 1, 64))
	h.Cells = len(tps)
	m.HeldOut = &h
	return nil
}

// other predicts the OLTP run's neighbour pairs (PredictOther) by the
// workload the calibration rests on, at L: with a measured fit, the
// latency of its first cold memory (4 KiB pages in eval's page-size
// points: tpcc-ro's data is the page cache's, mapped in 4 KiB pages, and
// so is the neighbour's chain); else the latency the OLTP fit's points
// are at. nil without pairs or a fitted workload.
func (m *Calibration) other() *OtherLatency {
	if len(m.pairs) == 0 || len(m.Points) == 0 {
		return nil
	}
	base, where := m.Points[0].LatencyNS, fmt.Sprintf("the latency %s %d's fitted cells are at",
		m.OLTPRunLabel(), m.OLTPRun)
	if f := m.Measured; f != nil && m.FitRun != 0 && len(f.Memory) > 0 && !f.Memory[0].Hot && f.Memory[0].LatencyNS > 0 {
		base, where = f.Memory[0].LatencyNS, fmt.Sprintf(
			"the page-size fit's %s, run %d's random chain in memory mapped as the OLTP data is", f.Memory[0].Name, m.FitRun)
	}
	var fitted []float64
	for _, p := range m.Points {
		fitted = append(fitted, p.LatencyNS)
	}
	o := PredictOther(m.pairs, m.Workload, base, m.GHz, fitted)
	o.Base = where
	o.What = fmt.Sprintf("run %d's %s of one-stream cells, each with a memory-bandwidth neighbour (%s GB/s) and "+
		"with a control neighbour (as busy, no memory traffic) on the same CPUs",
		m.pairsRun, plural(len(m.pairs), "pair"), model.Fixed(o.GBps, 1))
	return &o
}
