package model

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/result"
)

// stored is a run as the store returns it: each entry marshalled under its
// kind, in order.
func stored(t *testing.T, id int64, kind string, machine *result.Topology, entries ...result.Entry) *result.Run {
	t.Helper()
	r := &result.Run{ID: id, Kind: kind, Machine: machine}
	for i, e := range entries {
		b, err := json.Marshal(e.Body())
		if err != nil {
			t.Fatal(err)
		}
		r.Results = append(r.Results, result.Item{Seq: i + 1, Kind: e.Kind(), Body: b})
	}
	return r
}

func TestReadProbeRule(t *testing.T) {
	clock := func(g float64) result.Entry { return memlat.KindClock.Of(memlat.Clock{GHz: memlat.Stat{Median: g}}) }
	for _, c := range []struct {
		name              string
		entries           []result.Entry
		ghz, local, remot float64
		what              string
	}{
		{"matrix", []result.Entry{memlat.KindSummary.Of(memlat.Summary{GHz: 3, LocalNS: 90, RemoteNS: 140, DRAMNS4K: 100, DRAMNS2M: 80})},
			3, 90, 140, "the NUMA matrix's local latency"},
		{"4k chain", []result.Entry{memlat.KindSummary.Of(memlat.Summary{GHz: 3, DRAMNS4K: 100, DRAMNS2M: 80})},
			3, 100, 0, "the fully random chain's DRAM latency with 4 KiB pages"},
		{"2m chain", []result.Entry{memlat.KindSummary.Of(memlat.Summary{GHz: 3, DRAMNS2M: 80})},
			3, 80, 0, "the fully random chain's DRAM latency with 2 MiB pages"},
		{"clock from clocks", []result.Entry{clock(2), clock(4), clock(2.5), memlat.KindSummary.Of(memlat.Summary{LocalNS: 90})},
			2.5, 90, 0, "the NUMA matrix's local latency"},
		{"interrupted before the summary", []result.Entry{clock(2), clock(3)}, 2.5, 0, 0, ""},
	} {
		p, err := ReadProbe(stored(t, 1, result.RunProbeMem, nil, c.entries...))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if p.GHz != c.ghz || p.LocalNS != c.local || p.RemoteNS != c.remot || p.LocalWhat != c.what {
			t.Errorf("%s: ReadProbe = %g GHz, local %g (%q), remote %g; want %g, %g (%q), %g",
				c.name, p.GHz, p.LocalNS, p.LocalWhat, p.RemoteNS, c.ghz, c.local, c.what, c.remot)
		}
	}
}

// oneNode is a machine of one package with two cores of two threads.
func oneNode() *result.Topology {
	t := &result.Topology{Source: "test"}
	for i := range 4 {
		t.CPUs = append(t.CPUs, result.CPU{ID: i, Core: i / 2, Node: 0})
	}
	t.Cores = []result.Core{{ID: 0, CPUs: []int{0, 1}}, {ID: 1, CPUs: []int{2, 3}}}
	t.Packages = []result.Package{{ID: 0, CPUs: []int{0, 1, 2, 3}}}
	t.Nodes = []result.Node{{ID: 0, CPUs: []int{0, 1, 2, 3}}}
	return t
}

// TestCalibrateOnePoint fits I from the median of the one-stream repeats
// of the fastest local series, by hand: 3 GHz / 300 tps = 1e7 cycles per
// transaction = I·(0.95 + 0.05·100 ns·3 GHz) → I = 1e7/15.95.
func TestCalibrateOnePoint(t *testing.T) {
	m := oneNode()
	probe := stored(t, 1, result.RunProbeMem, m, memlat.KindSummary.Of(memlat.Summary{GHz: 3, LocalNS: 100}))
	cell := func(placement string, streams int, tps float64) result.Entry {
		return result.KindCell.Of(result.Cell{Placement: placement, CPUs: []int{0}, Cores: 1, Streams: streams, DataNode: -1, TPS: tps})
	}
	oltp := stored(t, 2, result.RunOLTP, m, cell("smt=off", 1, 250), cell("smt=off", 2, 900),
		cell("node=0", 1, 200), cell("node=0", 1, 400), cell("node=0", 1, 300), cell("smt=off", 1, 260))
	c, err := Calibrate(probe, oltp)
	if err != nil {
		t.Fatal(err)
	}
	if c.OLTPRun != 2 || len(c.Points) != 1 || c.Points[0].TPSPerCore != 300 || c.Fit != nil {
		t.Fatalf("Calibrate: OLTP run %d, points %+v, fit %v; want run 2, one point at 300 tps (node=0's median)", c.OLTPRun, c.Points, c.Fit)
	}
	if want := 1e7 / 15.95; math.Abs(c.Workload.Instructions-want) > 1e-6*want || c.Workload.Miss != DefaultMiss {
		t.Errorf("workload %+v, want I = %.1f, m = %g", c.Workload, want, DefaultMiss)
	}
	if !c.RemoteAssumed || c.RemoteNS != 100*AssumedRemoteRatio || c.CoresPerSocket != 2 {
		t.Errorf("remote %g (assumed %v), cores per socket %d; want assumed %g, 2", c.RemoteNS, c.RemoteAssumed, c.CoresPerSocket, 100*AssumedRemoteRatio)
	}
	if n := len(c.Table.Rows); n != len(PredictSockets)*2 {
		t.Errorf("%d predicted rows, want %d sockets × SMT 1 and 2", n, len(PredictSockets))
	}
	if !strings.Contains(c.Method, "one stream on node=0 gave 300 tps") {
		t.Errorf("method %q does not name the series and its tps", c.Method)
	}
}

func TestCalibrateWithoutProbe(t *testing.T) {
	if _, err := Calibrate(stored(t, 2, result.RunOLTP, nil)); !errors.Is(err, ErrNoProbe) {
		t.Errorf("Calibrate(oltp alone) = %v, want ErrNoProbe", err)
	}
	c, err := Calibrate(stored(t, 1, result.RunProbeMem, nil))
	if err != nil || len(c.Table.Rows) != 0 || len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "no memlat.Summary") {
		t.Errorf("Calibrate(probe without summary) = %+v, %v; want a note and no prediction", c, err)
	}
}
