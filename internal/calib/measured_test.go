package calib

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sentinel"
)

// measuredFit is a fit of 8 cells, 4 in each of two memories (100 and 200
// ns at 2 GHz), each with its hot runs in the caches (5 ns), made by A =
// 200,000 and M = 500 exactly except cell 4, which is 40% slow and
// followed by a sentinel sample whose core reading is 50% slow (which also
// comes before cell 5). Cell 1 ran at 120 ns, as its own chain timed
// (ChainNS), and the sample after it read the memory reference 50% slow,
// which leaves no cell out. Counters say 500,000 instructions and 800
// misses per cold transaction. From cell 5 on, the machine runs speed
// times as fast, cold and hot runs alike.
func measuredFit(t *testing.T, speed float64) *MeasuredFit {
	t.Helper()
	f := &MeasuredFit{What: "test workload", Method: "by hand", GHz: 2,
		Memory: []FitMemory{{Name: "small", LatencyNS: 100, SamplesNS: []float64{100}},
			{Name: "large", LatencyNS: 200, SamplesNS: []float64{200}},
			{Name: "the caches", Hot: true, LatencyNS: 5, SamplesNS: []float64{5}}}}
	f.Sentinel.Samples = append(f.Sentinel.Samples,
		sentinel.Sample{Label: "start", Took: 10 * time.Millisecond, Mem: 2 * time.Millisecond})
	for k := range 8 {
		mem := k % 2
		ns, chain := f.Memory[mem].LatencyNS, 0.0
		if k == 0 {
			ns, chain = 120, 120
		}
		c := 200_000 + 500*ns*2
		tps := 2e9 / c
		took, mem2 := 10*time.Millisecond, 2*time.Millisecond
		switch k {
		case 3:
			tps *= 0.6
			took = 15 * time.Millisecond
		case 0:
			mem2 = 3 * time.Millisecond
		}
		hot := 2e9 / (200_000 + 500*5*2)
		if k >= 4 {
			tps, hot = tps*speed, hot*speed
		}
		txns := int64(tps)
		label := "cell " + string(rune('1'+k))
		f.Cells = append(f.Cells,
			FitCell{Label: label, Memory: mem, ChainNS: chain, Point: model.Point{GHz: 2, TPSPerCore: tps},
				Txns: txns, Seconds: 1, Before: k, After: k + 1,
				Counters: &CellCounters{Instructions: uint64(txns) * 500_000, LLCMisses: uint64(txns) * 800}},
			FitCell{Label: label + " hot", Memory: 2, Point: model.Point{GHz: 2, TPSPerCore: hot}, Txns: txns, Seconds: 1,
				Before: k, After: k + 1})
		f.Sentinel.Samples = append(f.Sentinel.Samples, sentinel.Sample{Label: "after cell", Took: took, Mem: mem2})
	}
	f.Flag(0.15)
	f.Compute()
	return f
}

func TestMeasuredFitLeavesOutOffCells(t *testing.T) {
	f := measuredFit(t, 1)
	if got := f.OffCells(); !slices.Equal(got, []string{"cell 4", "cell 4 hot", "cell 5", "cell 5 hot"}) {
		t.Fatalf("off cells %q, want the two on either side of the sample whose core reading was 50%% slow "+
			"(not cells 1 and 2, beside the memory reading 50%% slow)", got)
	}
	if f.Fit == nil {
		t.Fatal(f.FitError)
	}
	if f.Fit.Points != 12 || math.Abs(f.Fit.A-200_000) > 1 || math.Abs(f.Fit.M-500) > 1e-3 {
		t.Fatalf("fit over %d cells: A %v, M %v; want 12 cells (6 cold, 6 hot), 200,000 and 500",
			f.Fit.Points, f.Fit.A, f.Fit.M)
	}
	for _, c := range f.Cells {
		want := f.Memory[c.Memory].LatencyNS
		if c.ChainNS > 0 {
			want = c.ChainNS
		}
		if c.LatencyNS != want {
			t.Errorf("%s at %v ns, want %v (its own chain's, else its memory's)", c.Label, c.LatencyNS, want)
		}
	}
	// The held-out check: exact cells predict each other exactly, and so
	// they do when the machine sped up by 30% for the later cells, cold
	// and hot alike: each cold cell is predicted from its own hot runs.
	for _, speed := range []float64{1, 1.3} {
		f := measuredFit(t, speed)
		if len(f.HeldOut) != 2 || f.HeldOutError != "" {
			t.Fatalf("speed %v: held out %+v (%s), want one per memory, none for the caches", speed, f.HeldOut, f.HeldOutError)
		}
		for _, h := range f.HeldOut {
			if math.Abs(h.Error) > 1e-9 || h.Cells != 2 { // 3 kept in each memory: 1 fits, 2 are predicted
				t.Errorf("speed %v: held out %+v: want error 0 over the second half's 2 cells", speed, h)
			}
		}
	}
	c, ok := f.Counted()
	if !ok || c.Cells != 6 || math.Abs(c.InstructionsPerT-500_000) > 1 ||
		math.Abs(c.MissesPerT-800) > 1e-6 || c.CyclesCounted {
		t.Fatalf("counted %+v, %v", c, ok)
	}
	// IPC: 500,000 instructions over C = 300,000 (100 ns), 320,000 (120
	// ns) or 400,000 cycles (200 ns): 5/3 in two kept cells, 1.5625 in
	// one, 1.25 in three; the median of six is the mean of 1.25 and 1.5625.
	if want := (1.5625 + 1.25) / 2; math.Abs(c.IPC-want) > 1e-9 {
		t.Errorf("IPC %v, want %v", c.IPC, want)
	}
	if l := f.CounterLine(); !strings.Contains(l, "IPC 1.41") || !strings.Contains(l, "800 last-level misses") ||
		!strings.Contains(l, "stall share") {
		t.Errorf("counter line %q", l)
	}
	if l := strings.Join(f.Lines(), "\n"); !strings.Contains(l, "cell 4 ") || !strings.Contains(l, "left out") ||
		!strings.Contains(l, "12 of 16 cells kept") {
		t.Errorf("lines %s", l)
	}
}

// TestMeasuredFitNoFitNoHeldOut: cells whose throughput rises with
// latency do not fit, and then no held-out check is made of a fit to
// half of them.
func TestMeasuredFitNoFitNoHeldOut(t *testing.T) {
	f := measuredFit(t, 1)
	for i := range f.Cells {
		if f.Cells[i].Memory == 1 {
			f.Cells[i].TPSPerCore *= 3
		}
	}
	f.Compute()
	if f.Fit != nil || f.FitError == "" || len(f.HeldOut) != 0 || !strings.Contains(f.HeldOutError, "do not fit") {
		t.Fatalf("fit %v (%q), held out %v (%q)", f.Fit, f.FitError, f.HeldOut, f.HeldOutError)
	}
}

func TestMeasuredFitCountersReason(t *testing.T) {
	f := measuredFit(t, 1)
	for i := range f.Cells {
		f.Cells[i].Counters = nil
	}
	f.CountersReason = "instructions: ENOENT (no such file or directory, kernel.perf_event_paranoid 2)"
	if _, ok := f.Counted(); ok {
		t.Fatal("counted without counters")
	}
	if l := f.CounterLine(); l != "hardware counters: not readable here: "+f.CountersReason {
		t.Errorf("counter line %q", l)
	}
}

// TestCalibrateUsesStoredFit: with a RunFit run among the runs, A and M
// come from its fit, not from the OLTP run, and the method says so and
// names the cell left out.
func TestCalibrateUsesStoredFit(t *testing.T) {
	m := oneNode()
	probe := stored(t, 1, result.RunProbeMem, m, memlat.KindSummary.Of(memlat.Summary{GHz: 2, LocalNS: 150}))
	oltp := stored(t, 2, result.RunOLTP, m,
		result.KindCell.Of(result.Cell{Placement: "node=0", CPUs: []int{0}, Cores: 1, Streams: 1, DataNode: -1, TPS: 300}))
	f := measuredFit(t, 1)
	fit := stored(t, 3, RunFit, m, KindMeasuredFit.Of(*f))
	without, err := Calibrate(probe, oltp)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Calibrate(probe, oltp, fit)
	if err != nil {
		t.Fatal(err)
	}
	if c.FitRun != 3 || c.Measured == nil || c.Fit == nil || math.Abs(c.Workload.Core()-200_000) > 1 ||
		math.Abs(c.Workload.Waits()-500) > 1e-3 {
		t.Fatalf("calibration with the fit run: run %d, A %v, M %v", c.FitRun, c.Workload.Core(), c.Workload.Waits())
	}
	if without.Workload == c.Workload || without.Measured != nil {
		t.Error("the OLTP-only calibration has the stored fit's workload")
	}
	if !strings.Contains(c.Method, "fitted to run 3") || !strings.Contains(c.Method, "cell 4") || len(c.Points) != 12 {
		t.Errorf("method %q, %d points", c.Method, len(c.Points))
	}
	if got := strings.Join(c.Checks(), "\n"); !strings.Contains(got, "by the fit to the first half") {
		t.Errorf("checks do not include the stored fit's held-out check: %s", got)
	}
	// One node: one socket's latency is the fit's first memory's (the
	// chain mapped as the OLTP data is), not the probe's 150 ns, and the
	// multi-socket latencies follow it by the published ratios.
	if a, _ := c.Assumption(AssumeOneSocket); c.OneSocketNS != 100 || a.Value != 100 ||
		!strings.Contains(a.Source, "timed next to run 3's cells") ||
		math.Abs(c.LocalNS-100*model.PublishedMultiSocketLocal.Value) > 1e-9 || without.OneSocketNS != 150 {
		t.Errorf(
			"one socket %v ns (%+v), local %v; want 100 from the fit's 4 KiB chain, and the probe's 150 without the fit",
			c.OneSocketNS, a, c.LocalNS)
	}
	if a, _ := c.Assumption(AssumeRemote); math.Abs(a.High-c.LocalNS*model.PublishedRemoteRatio.High) > 1e-9 ||
		a.Value != c.RemoteNS {
		t.Errorf("remote assumption %+v does not follow the local %v", a, c.LocalNS)
	}
	// The stall share follows the fit: M·L·f/C at one socket's 100 ns.
	if want := 500 * 200.0 / (200_000 + 500*200); math.Abs(c.StallShare-want) > 1e-9 {
		t.Errorf("stall share %v, want %v", c.StallShare, want)
	}
	// A fit run whose cells did not fit leaves the OLTP fit, and says so.
	f.Fit, f.FitError = nil, "fitting: too few cells"
	c, err = Calibrate(probe, oltp, stored(t, 3, RunFit, m, KindMeasuredFit.Of(*f)))
	if err != nil {
		t.Fatal(err)
	}
	if c.Measured == nil || c.FitRun != 0 || c.Workload != without.Workload ||
		!strings.Contains(strings.Join(c.Notes, " "), "run 3's cells did not fit (fitting: too few cells)") {
		t.Errorf("unfitted fit run: measured %v, notes %q", c.Measured, c.Notes)
	}
}

// TestCalibrateProbeCutBeforeDRAM: a memory probe cut before its DRAM
// point (its clock alone, eval's at its share of a busy machine's budget)
// takes the one-socket latency from the measured fit's chain, saying so,
// and predicts; without a fit run it still predicts nothing.
func TestCalibrateProbeCutBeforeDRAM(t *testing.T) {
	m := oneNode()
	probe := stored(t, 1, result.RunProbeMem, m, memlat.KindSummary.Of(memlat.Summary{GHz: 2, Cut: true}))
	oltp := stored(t, 2, result.RunOLTP, m,
		result.KindCell.Of(result.Cell{Placement: "node=0", CPUs: []int{0}, Cores: 1, Streams: 1, DataNode: -1, TPS: 300}))
	without, err := Calibrate(probe, oltp)
	if err != nil {
		t.Fatal(err)
	}
	if len(without.Table.Rows) > 0 ||
		!strings.Contains(strings.Join(without.Notes, " "), "run 1 measured no DRAM latency: no prediction") {
		t.Errorf("without a fit run: %d rows, notes %q; want no prediction, saying why",
			len(without.Table.Rows), without.Notes)
	}
	c, err := Calibrate(probe, oltp, stored(t, 3, RunFit, m, KindMeasuredFit.Of(*measuredFit(t, 1))))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := c.Assumption(AssumeOneSocket)
	if c.OneSocketNS != 100 || a.Basis != Measured ||
		!strings.Contains(a.Source, "memory probe run 1 was cut before its DRAM point") || len(c.Table.Rows) == 0 {
		t.Errorf("one socket %v ns (%+v), %d rows; want 100 ns from the fit's chain, said so, and a prediction",
			c.OneSocketNS, a, len(c.Table.Rows))
	}
}

// runMap is a store of runs by id; Latest ignores statuses.
type runMap map[int64]*result.Run

func (m runMap) Get(id int64) (*result.Run, error) {
	if r, ok := m[id]; ok {
		return r, nil
	}
	return nil, fmt.Errorf("no run %d", id)
}

func (m runMap) Latest(kind string, before int64, _ ...string) (int64, error) {
	var id int64
	for k, r := range m {
		if r.Kind == kind && (before == 0 || k < before) && k > id {
			id = k
		}
	}
	return id, nil
}

// TestCalibrateStoredFitChoice: CalibrateStored takes the newest model-fit
// run, or the one named, and says which; with none stored it fits the OLTP
// run alone and says so; a fit run whose cells did not fit is named and
// said not to be used.
func TestCalibrateStoredFitChoice(t *testing.T) {
	m := oneNode()
	st := runMap{
		1: stored(t, 1, result.RunProbeMem, m, memlat.KindSummary.Of(memlat.Summary{GHz: 2, LocalNS: 150})),
		2: stored(t, 2, result.RunOLTP, m,
			result.KindCell.Of(result.Cell{Placement: "node=0", CPUs: []int{0}, Cores: 1, Streams: 1, DataNode: -1, TPS: 300})),
	}
	c, err := CalibrateStored(st, 2, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.FitRun != 0 || c.FitChoice != `no model-fit run of sqlite on host "" in the store ('numalab run pages --engine sqlite' stores one): A and M fitted to OLTP run 2 alone` {
		t.Errorf("no fit run: fit run %d, choice %q", c.FitRun, c.FitChoice)
	}
	f := measuredFit(t, 1)
	st[3] = stored(t, 3, RunFit, m, KindMeasuredFit.Of(*f))
	f.Fit, f.FitError = nil, "fitting: too few cells"
	st[4] = stored(t, 4, RunFit, m, KindMeasuredFit.Of(*f))
	for _, want := range []struct {
		fitID, used int64
		choice      string
	}{
		{0, 0, "model-fit run 4, sqlite's tpcc-ro, the newest of sqlite on this host in the store (--fit-run ID chooses " +
			"another), not used: its cells did not fit (fitting: too few cells), so A and M are fitted to OLTP run 2 alone"},
		{3, 3, "model-fit run 3, sqlite's tpcc-ro, named by --fit-run"},
	} {
		c, err := CalibrateStored(st, 2, 0, want.fitID)
		if err != nil {
			t.Fatal(err)
		}
		if c.FitRun != want.used || c.FitChoice != want.choice {
			t.Errorf("--fit-run %d: fit run %d, choice %q; want %d, %q",
				want.fitID, c.FitRun, c.FitChoice, want.used, want.choice)
		}
	}
	// The newest fit measured on another host is not used unless named:
	// the newest of this host is.
	other := stored(t, 5, RunFit, m, KindMeasuredFit.Of(*measuredFit(t, 1)))
	other.Host = "elsewhere"
	st[5] = other
	delete(st, 4)
	c, err = CalibrateStored(st, 2, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.FitRun != 3 ||
		!strings.HasPrefix(c.FitChoice, "model-fit run 3, sqlite's tpcc-ro, the newest of sqlite on this host") {
		t.Errorf("another host's fit: fit run %d, choice %q; want run 3, this host's", c.FitRun, c.FitChoice)
	}
	delete(st, 3)
	c, err = CalibrateStored(st, 2, 0, 0)
	if want := `not used: 5 (host "elsewhere", not "")`; err != nil || c.FitRun != 0 ||
		!strings.Contains(c.FitChoice, want) {
		t.Errorf("only another host's fit: fit run %d, choice %q (%v); want none used, %q", c.FitRun, c.FitChoice, err, want)
	}
	if c, err = CalibrateStored(st, 2, 0, 5); err != nil || c.FitRun != 5 {
		t.Errorf("another host's fit named by --fit-run: fit run %d (%v); want 5", c.FitRun, err)
	}
	if _, err := CalibrateStored(st, 2, 0, 1); err == nil ||
		!strings.Contains(err.Error(), "-fit-run: run 1 is a probe-mem run, not a model-fit run") {
		t.Errorf("a probe run as --fit-run: %v", err)
	}
}
