package calib

import (
	"slices"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/result"
)

// neighbourCell is a stored one-stream neighbour (or control) cell of
// repeat r at tps, its chain at loaded ns with the neighbour running.
func neighbourCell(r int, control bool, tps, loaded float64) result.Entry {
	gbps := 10.0
	if control {
		gbps = 0
	}
	return memlat.KindNeighbourCell.Of(
		memlat.NeighbourCell{Cell: result.Cell{CPUs: []int{0}, Cores: 1, Streams: 1, DataNode: -1, Repeat: r, TPS: tps},
			Neighbour: []int{1, 2, 3}, Control: control, AloneNS: memlat.Stat{Median: 100},
			LoadedNS: memlat.Stat{Median: loaded}, GBps: gbps})
}

// TestPairs: each repeat's neighbour cell is paired with that repeat's
// control, whichever ran first; a repeat with one half, a cell of two
// streams and one that measured nothing are left out.
func TestPairs(t *testing.T) {
	var nc []memlat.NeighbourCell
	for _, e := range []result.Entry{
		neighbourCell(0, false, 200, 180), neighbourCell(0, true, 250, 110),
		neighbourCell(1, true, 260, 105), neighbourCell(1, false, 210, 170),
		neighbourCell(2, false, 190, 175),                                 // its control was cut: no pair
		neighbourCell(3, true, 0, 100), neighbourCell(3, false, 220, 160), // the control measured nothing
	} {
		nc = append(nc, e.Body().(memlat.NeighbourCell))
	}
	two := nc[0]
	two.Cell.Streams, two.Cell.Repeat = 2, 4
	nc = append(nc, two, nc[1])
	nc[len(nc)-1].Cell.Repeat = 4
	got := Pairs(nc)
	want := []NeighbourPair{{Repeat: 0, Neighbour: 200, Control: 250, LoadedNS: 180, ControlNS: 110, GBps: 10},
		{Repeat: 1, Neighbour: 210, Control: 260, LoadedNS: 170, ControlNS: 105, GBps: 10}}
	if !slices.Equal(got, want) {
		t.Fatalf("pairs %+v, want %+v", got, want)
	}
	if r, a := got[1].Ratio(), got[1].AddedNS(); !near(r, 210.0/260) || a != 65 {
		t.Errorf("pair 1: ratio %v, added %v; want 210/260 and 65 ns", r, a)
	}
}

// TestOtherLatencyOLTP: one node, 3 GHz, local 100 ns, plain one-stream
// cells of median 300 tps fit A = 4e6, M = 2e4 at the published stall
// share (C = 1e7 cycles at 300 cycles). Three pairs: tps 200/250, 210/260,
// 190/240 (ratios 0.8, 0.8077, 0.7917: median 0.8), chains 180/110,
// 170/105, 175/100 ns (added 70, 65, 75: median 70). The point is at
// 100 + 70 = 170 ns = 510 cycles, +70% from the fitted 100 ns: another
// latency. Predicted ratio C(100)/C(170) = 1e7/(4e6 + 2e4·510) = 1/1.42
// = 0.70423; error 0.70423/0.8 − 1 = −11.97%. The old held-out of
// neighbour cells alone is not computed for a run with pairs.
func TestOtherLatencyOLTP(t *testing.T) {
	m := oneNode()
	probe := stored(t, 1, result.RunProbeMem, m, memlat.KindSummary.Of(memlat.Summary{GHz: 3, LocalNS: 100}))
	cell := func(tps float64) result.Entry {
		return result.KindCell.Of(result.Cell{CPUs: []int{0}, Cores: 1, Streams: 1, DataNode: -1, TPS: tps})
	}
	oltp := stored(t, 2, result.RunOLTP, m, cell(290), neighbourCell(0, false, 200, 180), neighbourCell(0, true, 250, 110),
		cell(300), neighbourCell(1, true, 260, 105), neighbourCell(1, false, 210, 170),
		cell(310), neighbourCell(2, false, 190, 175), neighbourCell(2, true, 240, 100))
	c, err := Calibrate(probe, oltp)
	if err != nil {
		t.Fatal(err)
	}
	if c.HeldOut != nil || len(c.Points) != 3 {
		t.Fatalf("held out %+v, %d points: want no neighbour-alone held-out and the three plain cells fitted",
			c.HeldOut, len(c.Points))
	}
	o := c.Other
	if o == nil {
		t.Fatalf("no held-out point at another latency; notes %q", c.Notes)
	}
	pred := 1e7 / (4e6 + 2e4*510)
	if o.BaseNS != 100 || o.AddedNS != 70 || o.LatencyNS != 170 || !near(o.PredictedRatio, pred) ||
		o.MeasuredRatio != 0.8 || !near(o.Error, pred/0.8-1) || o.NearestNS != 100 || !near(o.Distance, 0.7) ||
		!o.Another || len(o.Pairs) != 3 || o.ControlTPS != 250 {
		t.Errorf("other latency %+v; want 100 + 70 = 170 ns, ratio %.5f against 0.8, error %+.4f, +70%% from 100 ns",
			*o, pred, pred/0.8-1)
	}
	if !near(o.PredictedTPS(), pred*250) || !near((o.PredictedTPS()-o.MeasuredTPS())/o.MeasuredTPS(), o.Error) {
		t.Errorf("tps at the control's median: predicted %v, measured %v: their error is not the ratio's %v",
			o.PredictedTPS(), o.MeasuredTPS(), o.Error)
	}
	s := strings.Join(c.Checks(), "\n")
	for _, w := range []string{"held-out point at another latency: run 2's 3 pairs of one-stream cells, each " +
		"with a memory-bandwidth neighbour (10.0 GB/s) and with a control neighbour",
		"100.0 + 70.0 = 170.0 ns (L: the latency OLTP run 2's fitted cells are at), +70% from the nearest " +
			"fitted point's 100.0 ns",
		"model tps ratio neighbour/control 0.704, measured 0.800 (median of 3 pairs), error -12.0%"} {
		if !strings.Contains(s, w) {
			t.Errorf("checks do not say %q:\n%s", w, s)
		}
	}
	if strings.Contains(s, "not another latency") {
		t.Errorf("a point 70%% away called not another latency:\n%s", s)
	}
}

// TestOtherLatencyPageSizeFit: with a stored page-size fit (A = 200,000,
// M = 500 at 2 GHz; first memory 100 ns), the pairs are predicted by that
// fit at L = 100 ns. Added 40 ns: 140 ns, +16.7% from the nearest fitted
// cell's 120 ns, which is not another latency, and the line says so.
// Predicted ratio (200,000 + 500·200)/(200,000 + 500·280) = 0.88235.
func TestOtherLatencyPageSizeFit(t *testing.T) {
	m := oneNode()
	probe := stored(t, 1, result.RunProbeMem, m, memlat.KindSummary.Of(memlat.Summary{GHz: 2, LocalNS: 150}))
	oltp := stored(t, 2, result.RunOLTP, m,
		result.KindCell.Of(result.Cell{CPUs: []int{0}, Cores: 1, Streams: 1, DataNode: -1, TPS: 300}),
		neighbourCell(0, false, 180, 150), neighbourCell(0, true, 200, 110))
	fit := stored(t, 3, RunFit, m, KindMeasuredFit.Of(*measuredFit(t, 1)))
	c, err := Calibrate(probe, oltp, fit)
	if err != nil {
		t.Fatal(err)
	}
	o := c.Other
	if c.FitRun != 3 || o == nil {
		t.Fatalf("fit run %d, other %v: want the pairs predicted by run 3's fit", c.FitRun, o)
	}
	pred := 300_000.0 / 340_000
	if o.BaseNS != 100 || o.LatencyNS != 140 || !near(o.PredictedRatio, pred) || !near(o.MeasuredRatio, 0.9) ||
		o.NearestNS != 120 || o.Another {
		t.Errorf(
			"other latency %+v; want 100 + 40 = 140 ns, ratio %.5f against 0.9, nearest fitted 120 ns, not another latency",
			*o, pred)
	}
	s := o.String()
	for _, w := range []string{"L: the page-size fit's small, run 3's random chain",
		"+17% from the nearest fitted point's 120.0 ns: not another latency, less than 25% from a fitted one",
		"error -2.0%"} {
		if !strings.Contains(s, w) {
			t.Errorf("line does not say %q: %s", w, s)
		}
	}
}
