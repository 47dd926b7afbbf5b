package calib

import (
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/result"
)

// TestHeldOutNeighbour: one node, 3 GHz, local 100 ns, one-stream cells of
// median 300 tps, so C = 3e9/300 = 1e7 cycles = I·(0.95 + 0.05·300) and
// I = 1e7/15.95. The neighbour added 40, 50 and 30 ns to the chain (median
// 40), so the held-out latency is 140 ns = 420 cycles and the model
// predicts 3e9/(I·(0.95 + 0.05·420)) = 300·15.95/21.95 = 217.995 tps;
// the neighbour cells measured 200, 230 and 210 (median 210): error
// 217.995/210 − 1 = +3.81%. The neighbour cells do not enter the fit. A
// run stored before control cells existed has these alone: predicted as
// then, saying they had no control.
func TestHeldOutNeighbour(t *testing.T) {
	m := oneNode()
	probe := stored(t, 1, result.RunProbeMem, m, memlat.KindSummary.Of(memlat.Summary{GHz: 3, LocalNS: 100}))
	cell := func(tps float64) result.Entry {
		return result.KindCell.Of(result.Cell{Placement: "", CPUs: []int{0}, Cores: 1, Streams: 1, DataNode: -1, TPS: tps})
	}
	nb := func(tps, alone, loaded float64) result.Entry {
		return memlat.KindNeighbourCell.Of(
			memlat.NeighbourCell{Cell: result.Cell{CPUs: []int{0}, Cores: 1, Streams: 1, DataNode: -1, TPS: tps},
				Neighbour: []int{1, 2, 3}, AloneNS: memlat.Stat{Median: alone}, LoadedNS: memlat.Stat{Median: loaded}, GBps: 10})
	}
	oltp := stored(t, 2, result.RunOLTP, m, cell(290), nb(200, 100, 140), cell(300), nb(230, 102, 152),
		cell(310), nb(210, 98, 128))
	c, err := Calibrate(probe, oltp)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Points) != 3 || c.Points[1].TPSPerCore != 300 {
		t.Fatalf("points %+v: want the three plain cells, the neighbour cells left out", c.Points)
	}
	h := c.HeldOut
	if h == nil {
		t.Fatalf("no held-out prediction; notes %q", c.Notes)
	}
	// Median 300 tps at 100 ns, 3 GHz: C = 1e7, A = 4e6, M = 2e4 (stall
	// share 0.6); the neighbour added a median 40 ns: 140 ns, 420 cycles.
	want := 3e9 / (4e6 + 2e4*420)
	if h.LatencyNS != 140 || !near(h.PredictedTPS, want) || h.MeasuredTPS != 210 || h.Cells != 3 ||
		!near(h.Error, want/210-1) {
		t.Errorf("held out %+v; want 140 ns, predicted %.3f, measured 210 over 3 cells, error %+.4f", *h, want, want/210-1)
	}
	s := strings.Join(c.Statements(), "\n")
	if c.Other != nil {
		t.Errorf("a run without control cells has a point at another latency: %+v", *c.Other)
	}
	for _, w := range []string{"held-out prediction of run 2's one-stream cells with a memory-bandwidth neighbour " +
		"(10.0 GB/s; no control cells beside them",
		"at 140.0 ns",
		"the local 100.0 ns plus the 40.0 ns the neighbour added to a 100.0 ns DRAM chain",
		"model 242 tps per core, measured 210 (median of 3 cells), error +15.2%"} {
		if !strings.Contains(s, w) {
			t.Errorf("statements do not say %q:\n%s", w, s)
		}
	}
}

// TestHeldOutRemote: two nodes, 3 GHz, local 100 ns, remote 150 ns. The
// local series (300 tps) alone fits I = 1e7/15.95 with m = 0.05; at 150 ns
// = 450 cycles it predicts 300·15.95/23.45 = 204.051 tps against the
// remote series' 200: error +2.03%. The calibration itself still fits
// both points.
func TestHeldOutRemote(t *testing.T) {
	m := &result.Topology{Source: "test",
		CPUs:     []result.CPU{{ID: 0, Core: 0, Node: 0}, {ID: 1, Core: 1, Node: 1}},
		Cores:    []result.Core{{ID: 0, CPUs: []int{0}}, {ID: 1, CPUs: []int{1}}},
		Packages: []result.Package{{ID: 0, CPUs: []int{0}}, {ID: 1, CPUs: []int{1}}},
		Nodes:    []result.Node{{ID: 0, CPUs: []int{0}}, {ID: 1, CPUs: []int{1}}}}
	probe := stored(t, 1, result.RunProbeMem, m,
		memlat.KindSummary.Of(memlat.Summary{GHz: 3, LocalNS: 100, RemoteNS: 150}))
	cell := func(placement string, cpu int, tps float64) result.Entry {
		return result.KindCell.Of(
			result.Cell{Placement: placement, CPUs: []int{cpu}, Cores: 1, Streams: 1, DataNode: 0, TPS: tps})
	}
	oltp := stored(t, 2, result.RunOLTP, m, cell("node=0,data=node0", 0, 300), cell("node=1,data=node0", 1, 200))
	c, err := Calibrate(probe, oltp)
	if err != nil {
		t.Fatal(err)
	}
	if c.Fit == nil || len(c.Points) != 2 {
		t.Fatalf("fit %v, points %+v: want both points fitted", c.Fit, c.Points)
	}
	h := c.HeldOut
	if h == nil {
		t.Fatalf("no held-out prediction; notes %q", c.Notes)
	}
	// The local 300 tps at 100 ns alone, at the published stall share:
	// A = 4e6, M = 2e4; at 150 ns (450 cycles) C = 1.3e7.
	want := 3e9 / 1.3e7
	if h.LatencyNS != 150 || !near(h.PredictedTPS, want) || h.MeasuredTPS != 200 || h.Cells != 1 ||
		!near(h.Error, want/200-1) ||
		!near(h.Workload.Core(), 4e6) || !strings.Contains(h.What, "fitted to node=0") {
		t.Errorf(
			"held out %+v; want 150 ns, predicted %.3f by A = 4e6 fitted to the local series, measured 200, error %+.4f",
			*h, want, want/200-1)
	}
}

// TestHeldOutNone: without neighbour or remote cells there is no
// held-out prediction.
func TestHeldOutNone(t *testing.T) {
	m := oneNode()
	probe := stored(t, 1, result.RunProbeMem, m, memlat.KindSummary.Of(memlat.Summary{GHz: 3, LocalNS: 100}))
	oltp := stored(t, 2, result.RunOLTP, m,
		result.KindCell.Of(result.Cell{CPUs: []int{0}, Cores: 1, Streams: 1, DataNode: -1, TPS: 300}))
	c, err := Calibrate(probe, oltp)
	if err != nil {
		t.Fatal(err)
	}
	if c.HeldOut != nil || len(c.Points) != 1 {
		t.Errorf("held out %+v, points %+v; want none, and the one point fitted", c.HeldOut, c.Points)
	}
}
