package calib

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/model"
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
		{"matrix", []result.Entry{
			memlat.KindSummary.Of(memlat.Summary{GHz: 3, LocalNS: 90, RemoteNS: 140, DRAMNS4K: 100, DRAMNS2M: 80})},
			3, 90, 140, "the NUMA matrix's local latency"},
		{"4k chain", []result.Entry{memlat.KindSummary.Of(memlat.Summary{GHz: 3, DRAMNS4K: 100, DRAMNS2M: 80})},
			3, 100, 0, "the fully random chain's DRAM latency with 4 KiB pages"},
		{"2m chain", []result.Entry{memlat.KindSummary.Of(memlat.Summary{GHz: 3, DRAMNS2M: 80})},
			3, 80, 0, "the fully random chain's DRAM latency with 2 MiB pages"},
		{"clock from clocks",
			[]result.Entry{clock(2), clock(4), clock(2.5), memlat.KindSummary.Of(memlat.Summary{LocalNS: 90})},
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
		return result.KindCell.Of(
			result.Cell{Placement: placement, CPUs: []int{0}, Cores: 1, Streams: streams, DataNode: -1, TPS: tps})
	}
	oltp := stored(t, 2, result.RunOLTP, m, cell("smt=off", 1, 250), cell("smt=off", 2, 900),
		cell("node=0", 1, 200), cell("node=0", 1, 400), cell("node=0", 1, 300), cell("smt=off", 1, 260))
	c, err := Calibrate(probe, oltp)
	if err != nil {
		t.Fatal(err)
	}
	if c.OLTPRun != 2 || len(c.Points) != 3 || c.Points[1].TPSPerCore != 400 || c.Fit != nil {
		t.Fatalf("Calibrate: OLTP run %d, points %+v, fit %v; want run 2, node=0's three cells at one latency",
			c.OLTPRun, c.Points, c.Fit)
	}
	// The median 300 tps at 3 GHz is C = 1e7 cycles; at 100 ns (300
	// cycles) and the published stall share 0.6: A = 4e6, M = 6e6/300.
	if w := c.Workload; math.Abs(w.Core()-4e6) > 1e-3 || math.Abs(w.Waits()-2e4) > 1e-6 {
		t.Errorf("workload A = %v, M = %v; want 4e6, 2e4", w.Core(), w.Waits())
	}
	if !c.RemoteAssumed || c.RemoteNS != 100*model.PublishedMultiSocketLocal.Value*model.PublishedRemoteRatio.Value ||
		c.CoresPerSocket != 2 {
		t.Errorf("remote %g (assumed %v), cores per socket %d; want assumed %g, 2", c.RemoteNS, c.RemoteAssumed,
			c.CoresPerSocket, 100*model.PublishedMultiSocketLocal.Value*model.PublishedRemoteRatio.Value)
	}
	if n := len(c.Table.Rows); n != len(PredictSockets)*2 {
		t.Errorf("%d predicted rows, want %d sockets × SMT 1 and 2", n, len(PredictSockets))
	}
	if !strings.Contains(c.Method, "one stream on node=0, median of 3 cells: 300 tps at 100.0 ns") {
		t.Errorf("method %q does not name the series and its tps", c.Method)
	}
}

// TestCalibrateScriptRun: a run of the user's scripts is fitted as an OLTP
// run is, and named as what it is; beside numalab's own OLTP run, the
// OLTP run is taken, whichever came first.
func TestCalibrateScriptRun(t *testing.T) {
	m := oneNode()
	probe := stored(t, 1, result.RunProbeMem, m, memlat.KindSummary.Of(memlat.Summary{GHz: 3, LocalNS: 100}))
	cell := func(tps float64) result.Entry {
		return result.KindCell.Of(
			result.Cell{Placement: "cpus=0", CPUs: []int{0}, Cores: 1, Streams: 1, DataNode: -1, TPS: tps})
	}
	script := stored(t, 2, result.RunSQL, m, cell(300))
	c, err := Calibrate(probe, script)
	if err != nil {
		t.Fatal(err)
	}
	if w := c.Workload; c.OLTPRun != 2 || math.Abs(w.Core()-4e6) > 1e-3 ||
		!strings.HasPrefix(c.Method, "fitted to script run 2: one stream on cpus=0") {
		t.Errorf(
			"script run: fitted run %d, A = %v, method %q; want run 2's 300 tps at 100 ns (A = 4e6), named a script run",
			c.OLTPRun, w.Core(), c.Method)
	}
	oltp := stored(t, 3, result.RunOLTP, m, cell(600))
	for _, runs := range [][]*result.Run{{probe, script, oltp}, {probe, oltp, script}} {
		c, err := Calibrate(runs...)
		if err != nil {
			t.Fatal(err)
		}
		if c.OLTPRun != 3 {
			t.Errorf("runs %d, %d, %d: fitted to run %d, want the OLTP run 3", runs[0].ID, runs[1].ID, runs[2].ID, c.OLTPRun)
		}
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

// TestCalibrateNoNUMAEffect: a stored probe of two nodes whose matrix read
// remote no slower than local (memlat flagged it) is used as one node: the
// local latency only, the remote latency assumed and said to be.
func TestCalibrateNoNUMAEffect(t *testing.T) {
	s := memlat.Summary{GHz: 3, Nodes: []int{0, 1}, CPUNodes: []int{0, 1}, MatrixNS: [][]float64{{100, 98}, {99, 101}},
		LocalNS: 100.5, RemoteNS: 98.5, NoNUMAEffect: true}
	probe := stored(t, 1, result.RunProbeMem, nil, memlat.KindSummary.Of(s))
	p, err := ReadProbe(probe)
	if err != nil {
		t.Fatal(err)
	}
	if p.RemoteNS != 0 || !p.NoNUMAEffect || p.LocalNS != 100.5 {
		t.Errorf("ReadProbe = remote %g, no NUMA effect %v, local %g; want 0, true, 100.5",
			p.RemoteNS, p.NoNUMAEffect, p.LocalNS)
	}
	c, err := Calibrate(probe)
	if err != nil {
		t.Fatal(err)
	}
	if !c.RemoteAssumed || c.RemoteNS != 100.5*model.PublishedMultiSocketLocal.Value*model.PublishedRemoteRatio.Value {
		t.Errorf("remote %g (assumed %v), want %g assumed",
			c.RemoteNS, c.RemoteAssumed, 100.5*model.PublishedMultiSocketLocal.Value*model.PublishedRemoteRatio.Value)
	}
	a, ok := c.Assumption(AssumeRemote)
	l, _ := c.Assumption(AssumeLocal)
	if !ok || a.Basis != Assumed || !strings.Contains(l.Source, "no NUMA effect") ||
		!strings.Contains(a.String(), "remote latency 187.9 ns (172.1 ns to 201 ns) (assumed: 1.562×") {
		t.Errorf("remote assumption %q, want it assumed with its value and the matrix's flag as the reason", a.String())
	}
	// Unflagged, the same matrix's remote latency is measured.
	s.NoNUMAEffect, s.RemoteNS = false, 140
	c, err = Calibrate(stored(t, 1, result.RunProbeMem, nil, memlat.KindSummary.Of(s)))
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := c.Assumption(AssumeRemote); c.RemoteAssumed || a.Basis != Measured || a.Value != 140 {
		t.Errorf("unflagged matrix: remote %+v, want 140 measured", a)
	}
}

// TestCalibrateStatesAndFlags uses the numbers of a one-node guest: 9,566
// tps on one stream at 207.5 ns and 3.61 GHz. C = 3.61e9/9566 = 377,378
// cycles; L·f = 207.5·3.61 = 749.075 cycles; with one latency the
// published stall share 0.6 gives A = 0.4·C = 150,951 and
// M = 0.6·C/749.075 = 302.3 waits.
func TestCalibrateStatesAndFlags(t *testing.T) {
	m := oneNode()
	probe := stored(t, 1, result.RunProbeMem, m, memlat.KindSummary.Of(memlat.Summary{GHz: 3.61, LocalNS: 207.5}))
	oltp := stored(t, 2, result.RunOLTP, m,
		result.KindCell.Of(result.Cell{Placement: "smt=off", CPUs: []int{0}, Cores: 1, Streams: 1, DataNode: -1, TPS: 9566}))
	c, err := Calibrate(probe, oltp)
	if err != nil {
		t.Fatal(err)
	}
	if a, mm := c.Workload.Core(), c.Workload.Waits(); math.Round(a) != 150951 || math.Round(mm*10) != 3023 {
		t.Fatalf("A = %g, M = %g, want 150,951 and 302.3", a, mm)
	}
	var names []string
	for _, a := range c.Assumptions {
		names = append(names, a.Name)
	}
	want := []string{AssumeClock, AssumeOneSocket, AssumeLocal, AssumeRemote, AssumeBuffer, AssumeA, AssumeM, AssumeSMT}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("assumptions %q, want %q", names, want)
	}
	if a, _ := c.Assumption(AssumeM); a.Basis != Assumed || !a.Banded() ||
		!strings.Contains(a.Source, "two latency points would fit it") {
		t.Errorf("M's assumption %+v, want it assumed with a band, and why", a)
	}
	if a, _ := c.Assumption(AssumeSMT); a.Basis != Assumed || a.Value != model.PublishedSMTGain.Value ||
		!strings.Contains(a.Source, "Linchi Shea") {
		t.Errorf("SMT assumption %+v, want the published gain with its source", a)
	}
	if len(c.Residuals) != 1 || math.Abs(c.Residuals[0].RelativeErrorTPS) > 1e-12 ||
		!strings.Contains(c.Residuals[0].Cell, "run 2's smt=off") {
		t.Errorf("residuals %+v, want one exact, naming its cells", c.Residuals)
	}
	st := strings.Join(c.Statements(), "\n")
	for _, w := range []string{"clock 3.61 GHz (measured: the core clock memory probe run 1 measured)",
		"one-socket latency 207.5 ns (measured:",
		"remote latency 388 ns (355.3 ns to 414.9 ns) (assumed:", "error +0.00% (one latency:"} {
		if !strings.Contains(st, w) {
			t.Errorf("statements lack %q:\n%s", w, st)
		}
	}
	if d := c.Derived(); !strings.Contains(d, "A = 150,951 core cycles and M = 302 memory waits per transaction") ||
		!strings.Contains(d, "60% of them waiting") {
		t.Errorf("derived %q", d)
	}
}

// TestCalibrateTwoLatencies: every one-stream cell on local and on remote
// data is a point; A and M come back with 95% intervals that hold the
// workload the cells were made from.
func TestCalibrateTwoLatencies(t *testing.T) {
	topo := &result.Topology{Source: "test"}
	for i := range 2 {
		topo.CPUs = append(topo.CPUs, result.CPU{ID: i, Core: i, Node: i, Package: i})
		topo.Cores = append(topo.Cores, result.Core{ID: i, Package: i, CPUs: []int{i}})
		topo.Nodes = append(topo.Nodes, result.Node{ID: i, CPUs: []int{i}})
		topo.Packages = append(topo.Packages, result.Package{ID: i, CPUs: []int{i}})
	}
	s := memlat.Summary{GHz: 3, Nodes: []int{0, 1}, CPUNodes: []int{0, 1}, MatrixNS: [][]float64{{100, 150}, {150, 100}},
		LocalNS: 100, RemoteNS: 150}
	probe := stored(t, 1, result.RunProbeMem, topo, memlat.KindSummary.Of(s))
	w := model.FromCycles(2e5, 500)
	var cells []result.Entry
	for i, e := range []float64{1.01, 0.99, 1.02, 0.98} {
		cells = append(cells,
			result.KindCell.Of(result.Cell{Placement: "node=0,data=node0", CPUs: []int{0}, Cores: 1, Streams: 1, DataNode: 0,
				Repeat: i, TPS: model.TPSPerCore(w, 100, 3) * e}),
			result.KindCell.Of(result.Cell{Placement: "node=1,data=node0", CPUs: []int{1}, Cores: 1, Streams: 1, DataNode: 0,
				Repeat: i, TPS: model.TPSPerCore(w, 150, 3) * e}))
	}
	c, err := Calibrate(probe, stored(t, 2, result.RunOLTP, topo, cells...))
	if err != nil {
		t.Fatal(err)
	}
	f := c.Fit
	if f == nil || f.Points != 8 || f.AInterval == nil || f.MInterval == nil {
		t.Fatalf("fit %+v, want 8 points with intervals", f)
	}
	if !(f.AInterval.Low <= 2e5 && 2e5 <= f.AInterval.High && f.MInterval.Low <= 500 && 500 <= f.MInterval.High) {
		t.Errorf("A %v (%v), M %v (%v): the intervals miss A = 200,000, M = 500", f.A, f.AInterval, f.M, f.MInterval)
	}
	if b := CalibrationBand(c); len(b.Variants) != 2 || !strings.Contains(b.Text, "95% interval over 8 points") {
		t.Errorf("band %+v, want the two ends of M's interval", b)
	}
}

// TestMachineSpecNoNUMAEffect: 'numalab model --from-run' on a probe whose
// two-node matrix showed no NUMA effect does not use the matrix: it models
// one node's local latency and needs --remote-ns for more sockets.
func TestMachineSpecNoNUMAEffect(t *testing.T) {
	topo := &result.Topology{Source: "test"}
	for i := range 2 {
		topo.CPUs = append(topo.CPUs, result.CPU{ID: i, Core: i, Node: i})
		topo.Cores = append(topo.Cores, result.Core{ID: i, CPUs: []int{i}})
		topo.Nodes = append(topo.Nodes, result.Node{ID: i, CPUs: []int{i}})
	}
	topo.Packages = []result.Package{{ID: 0, CPUs: []int{0, 1}}}
	s := memlat.Summary{GHz: 3, Nodes: []int{0, 1}, CPUNodes: []int{0, 1}, MatrixNS: [][]float64{{100, 98}, {99, 101}},
		LocalNS: 100.5, RemoteNS: 98.5, NoNUMAEffect: true}
	p, err := ReadProbe(stored(t, 1, result.RunProbeMem, topo, memlat.KindSummary.Of(s)))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := (MachineSpec{Probe: &p, Topology: topo}).Build(2); err == nil ||
		!strings.Contains(err.Error(), "-remote-ns: missing") {
		t.Errorf("Build(2) without --remote-ns: %v, want it to ask for the remote latency", err)
	}
	mc, lim, _, err := MachineSpec{Probe: &p, Topology: topo, RemoteNS: 140}.Build(2)
	if err != nil {
		t.Fatal(err)
	}
	if lim != nil || mc.LocalNS != 100.5 || mc.RemoteNS != 140 || mc.Matrix != nil ||
		!strings.Contains(mc.Source, "no NUMA effect") {
		t.Errorf(
			"machine %+v (topology limit %v), want local 100.5, remote 140 from the flag, no matrix, the reason in its source",
			mc, lim)
	}
}

// TestCalibrateSMTOnNodes: eval on a machine of several nodes places its
// OLTP cells "node=N,data=node0,smt=on" and "…,smt=off"; the SMT gain is
// measured from the pair with the same rest whose smt=on is fastest (the
// local one), where it used to be assumed (only bare "smt=on" matched).
func TestCalibrateSMTOnNodes(t *testing.T) {
	m := oneNode()
	probe := stored(t, 1, result.RunProbeMem, m, memlat.KindSummary.Of(memlat.Summary{GHz: 3, LocalNS: 100}))
	cell := func(placement string, streams int, tps float64) result.Entry {
		return result.KindCell.Of(
			result.Cell{Placement: placement, CPUs: []int{0, 1}, Cores: 2, Streams: streams, DataNode: 0, TPS: tps})
	}
	oltp := stored(t, 2, result.RunOLTP, m,
		cell("node=0,data=node0,smt=on", 1, 300), cell("node=0,data=node0,smt=on", 4, 720),
		cell("node=0,data=node0,smt=off", 1, 310), cell("node=0,data=node0,smt=off", 2, 600),
		cell("node=1,data=node0,smt=on", 4, 500), cell("node=1,data=node0,smt=off", 2, 250))
	c, err := Calibrate(probe, oltp)
	if err != nil {
		t.Fatal(err)
	}
	if !c.SMTMeasured || c.SMT.Value != 1.2 || !strings.Contains(c.SMT.Source, "(node=0,data=node0)") {
		t.Errorf("SMT gain %+v, measured %v; want 720/600 = 1.2 from node=0,data=node0", c.SMT, c.SMTMeasured)
	}
}

// TestStoredSMTGain: --smt-run's gain is the stored OLTP run's measured
// one (720/600 = 1.2, above the published band, which a measurement may
// be); a run with no smt=on and smt=off pair, or of another kind, is
// refused, saying what would measure one.
func TestStoredSMTGain(t *testing.T) {
	m := oneNode()
	cell := func(placement string, streams int, tps float64) result.Entry {
		return result.KindCell.Of(
			result.Cell{Placement: placement, CPUs: []int{0, 1}, Cores: 2, Streams: streams, DataNode: 0, TPS: tps})
	}
	st := runMap{
		1: stored(t, 1, result.RunProbeMem, m, memlat.KindSummary.Of(memlat.Summary{GHz: 3, LocalNS: 100})),
		2: stored(t, 2, result.RunOLTP, m, cell("node=0,data=node0,smt=on", 4, 720),
			cell("node=0,data=node0,smt=off", 2, 600)),
		3: stored(t, 3, result.RunOLTP, m, cell("node=0", 1, 300)),
	}
	r, err := StoredSMTGain(st, 2)
	if err != nil || r.Value != 1.2 || r.Low != 1.2 || !strings.HasPrefix(r.Source, "measured: OLTP run 2's") {
		t.Errorf("StoredSMTGain(2) = %+v, %v; want 1.2 measured by run 2", r, err)
	}
	for id, want := range map[int64]string{1: "-smt-run: run 1 is a probe-mem run, not an OLTP run",
		3: "-smt-run: OLTP run 3 has no smt=on and smt=off cells"} {
		if _, err := StoredSMTGain(st, id); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("StoredSMTGain(%d) = %v, want %q", id, err, want)
		}
	}
}

// near reports whether got is within a relative 1e-9 of want.
func near(got, want float64) bool {
	if want == 0 {
		return math.Abs(got) < 1e-12
	}
	return math.Abs(got-want) <= 1e-9*math.Abs(want)
}
