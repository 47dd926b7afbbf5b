package calib

import (
	"math"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/stats"
)

// Pairs matches an OLTP run's one-stream neighbour cells with the control
// cells of the same repeat, in the order of their repeats; a cell without
// its other half is left out. A run stored before control cells existed
// gives none.
func Pairs(nc []memlat.NeighbourCell) []NeighbourPair {
	type half struct{ nb, ctl *memlat.NeighbourCell }
	by := map[int]*half{}
	var order []int
	for i := range nc {
		c := &nc[i]
		if c.Cell.Streams != 1 || !(c.Cell.TPS > 0) {
			continue
		}
		h := by[c.Cell.Repeat]
		if h == nil {
			h = &half{}
			by[c.Cell.Repeat] = h
			order = append(order, c.Cell.Repeat)
		}
		if c.Control {
			h.ctl = c
		} else {
			h.nb = c
		}
	}
	var out []NeighbourPair
	for _, r := range order {
		h := by[r]
		if h.nb == nil || h.ctl == nil {
			continue
		}
		out = append(out, NeighbourPair{Repeat: r, Neighbour: h.nb.Cell.TPS, Control: h.ctl.Cell.TPS,
			LoadedNS: h.nb.LoadedNS.Median, ControlNS: h.ctl.LoadedNS.Median, GBps: h.nb.GBps})
	}
	return out
}

// PredictOther predicts pairs by workload w at baseNS and ghz, and
// measures how far the point lies from the fitted latencies (none: no
// distance known, and not another latency).
func PredictOther(pairs []NeighbourPair, w model.Workload, baseNS, ghz float64, fitted []float64) OtherLatency {
	var ratio, added, ctl, gbps []float64
	for _, p := range pairs {
		ratio, added, ctl, gbps = append(ratio, p.Ratio()), append(added, p.AddedNS()), append(ctl, p.Control),
			append(gbps, p.GBps)
	}
	o := OtherLatency{Pairs: pairs, BaseNS: baseNS, AddedNS: stats.Median(added), Workload: w, GHz: ghz,
		MeasuredRatio: stats.Median(ratio), ControlTPS: stats.Median(ctl), GBps: stats.Median(gbps)}
	o.LatencyNS = baseNS + o.AddedNS
	o.PredictedRatio = model.TPSPerCore(w, o.LatencyNS, ghz) / model.TPSPerCore(w, baseNS, ghz)
	o.Error = o.PredictedRatio/o.MeasuredRatio - 1
	for _, l := range fitted {
		if d := (o.LatencyNS - l) / l; l > 0 && (o.NearestNS == 0 || math.Abs(d) < math.Abs(o.Distance)) {
			o.NearestNS, o.Distance = l, d
		}
	}
	o.Another = o.NearestNS > 0 && math.Abs(o.Distance) >= AnotherLatency
	return o
}
