package memlat

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/golden"
	"github.com/numalab/numalab/internal/units"
)

// goldenReport is a small report with every section, built from synthetic
// numbers so the rendering can be compared byte for byte.
func goldenReport() *Report {
	cfg := DefaultConfig(false)
	cfg.Pages = []string{Pages2M}
	st := func(v float64) Stat { return Stat{Median: v, Min: v * 0.98, Max: v * 1.05, Samples: 3, Window: 52} }
	bytes, ns := synthetic(1<<30/4, zenCaches, zenLat)
	l := Ladder{Chain: TLBLocal, Pages: Pages2M, PageBytes: 2 << 20, HugeFraction: 1, SlotBytes: 256,
		WindowBytes: 256 << 10, GHz: 3.6}
	for i := 0; i < len(bytes); i += 2 {
		l.Points = append(l.Points, Point{Bytes: bytes[i] * 4, TouchedBytes: bytes[i], NS: st(ns[i]), Cycles: ns[i] * 3.6})
	}
	l.label(zenCaches, nil)
	l.Points[len(l.Points)-1].Repeats = []Stat{st(ns[len(ns)-1] * 1.01), st(ns[len(ns)-1] * 0.99)}
	l.Points[len(l.Points)-1].setBest(3.6)
	r := Ladder{Chain: Random, Pages: Pages2M, PageBytes: 2 << 20, HugeFraction: 1, SlotBytes: 256,
		WindowBytes: 1 << 30, GHz: 3.6,
		Points: []Point{{Bytes: 1 << 30, TouchedBytes: 1 << 28, NS: st(160), Cycles: 576, Repeats: []Stat{st(170), st(150)}}}}
	r.Points[0].setBest(3.6)
	noisy := st(30)
	noisy.Noisy = true
	return &Report{
		Config:  cfg,
		Clocks:  []Clock{{When: "start", GHz: st(3.6)}, {When: "end", GHz: st(3.62)}},
		GHz:     3.61,
		Ladders: []Ladder{l, r},
		MLP: &MLP{Bytes: 1 << 30, Pages: Pages2M, PageBytes: 2 << 20, HugeFraction: 1, Points: []MLPPoint{
			{Chains: 1, Threads: 1, NSPerLoad: st(160), InFlight: 1}, {Chains: 8, Threads: 1, NSPerLoad: noisy, InFlight: 5.33},
			{Chains: 16, Threads: 1, NSPerLoad: st(8), InFlight: 20}}, // more than its chains: marked
			Note: "no SMT: each core runs one hardware thread, so chains cannot be split across siblings"},
		Bandwidth: &Bandwidth{Bytes: 1 << 30, CPU: 0, Kernel: "AVX2 (256-bit loads, non-temporal stores)",
			Pages: Pages2M, PageBytes: 2 << 20, HugeFraction: 1,
			Read: []BWPoint{{Threads: 1, CPUs: []int{0}, GBps: 32.1, RegionBytes: 64 << 20},
				{Threads: 2, CPUs: []int{0, 1}, GBps: 53.2, RegionBytes: 64 << 20, Preempted: 1}},
			Write: []BWPoint{{Threads: 1, CPUs: []int{0}, GBps: 20.4, RegionBytes: 64 << 20, Preempted: 1},
				{Threads: 2, CPUs: []int{0, 1}, GBps: 38.9, RegionBytes: 64 << 20}},
			Copy: []BWPoint{{Threads: 1, CPUs: []int{0}, GBps: 30.2, RegionBytes: 64 << 20}},
			Nodes: []BWNodePoint{{CPUNode: 0, MemNode: 0, Point: BWPoint{Threads: 8, GBps: 60.5}},
				{CPUNode: 0, MemNode: 1, Point: BWPoint{Threads: 8, GBps: 40.1}},
				{CPUNode: 1, MemNode: 1, Point: BWPoint{Threads: 8, GBps: 61.1, Preempted: 2}}},
			Loaded: []LoadedPoint{{Streamers: 0, NS: st(160)}, {Streamers: 1, NS: st(190), GBps: 30.5}}},
		Matrix: &Matrix{CPUNodes: []int{0, 1}, MemNodes: []int{0, 1}, CPUs: []int{0, 8}, Bytes: 1 << 30, Chain: Random,
			Pages: Pages2M, PageBytes: 2 << 20, HugeFraction: 1,
			NS:       [][]Stat{{st(100), st(150)}, {st(152), st(101)}},
			Relative: [][]float64{{1, 1.5}, {1.52, 1.01}}},
		C2C: &C2C{GHz: 3.6, Missing: []string{PairOtherLLC}, Pairs: []C2CPair{
			{Class: PairSMT, CPUs: [2]int{0, 16}, RoundTripNS: st(40), BestNS: 39.2, OneWayNS: 19.6, Cycles: 141},
			{Class: PairSameLLC, CPUs: [2]int{0, 1}, RoundTripNS: st(110), BestNS: 107.8, OneWayNS: 53.9, Cycles: 388},
			{Class: PairOtherNode, CPUs: [2]int{0, 8}, RoundTripNS: st(300), BestNS: 294, OneWayNS: 147, Cycles: 1058},
			newC2CPair(PairOtherCore, [2]int{0, 4}, summarise([]float64{101, 450, 460, 900, 470}, nil, 5, 2), 3.6, "KVM")}},
		Notes:   []string{"a note"},
		Elapsed: 61.2,
	}
}

func TestWriteTextGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, goldenReport()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/report.golden", b.Bytes())
}

// TestWriteTextCut: a probe cut at any point renders: a matrix whose rows
// stopped at different cells (eval's probe, cut inside its NUMA matrix on
// a four-node guest, panicked here on a row with cells and no relative
// figures), a ladder that did not reach its largest working set (not
// read as DRAM), no summary.
func TestWriteTextCut(t *testing.T) {
	st := Stat{Median: 100, Min: 98, Max: 104, Samples: 3, Window: 50}
	for _, rows := range [][][]Stat{{{st, st}, {}}, {{st}, {}}, {{}, {}}, {{st, st, st, st}, {st}}} {
		r := goldenReport()
		r.Summary = Summary{}
		r.Ladders[1].Points = r.Ladders[0].Points[:1]
		r.Ladders[1].Cut = true
		m := &Matrix{CPUNodes: []int{0, 1}, MemNodes: []int{0, 1, 2, 3}, CPUs: []int{0, 8}, Bytes: 1 << 30, Chain: Random,
			Pages: Pages2M, NS: rows}
		m.finish()
		r.Matrix = m
		var b bytes.Buffer
		if err := WriteText(&b, r); err != nil {
			t.Fatal(err)
		}
		cells := 0
		for _, row := range rows {
			cells += len(row)
		}
		if want := fmt.Sprintf("(cut: the probe stopped after %d of the 8 cells; - was not measured)", cells); !m.Cut ||
			!strings.Contains(b.String(), want) {
			t.Errorf("matrix %d cells: cut %v, want %q in\n%s", cells, m.Cut, want, b.String())
		}
		// As the probe held it when the stop came, before finish.
		m.Relative = nil
		if err := WriteText(&b, r); err != nil {
			t.Fatal(err)
		}
		if s := summarize(r); s.DRAMNS2M != 0 {
			t.Errorf("the cut random ladder's last point (%s) read as DRAM: %v ns",
				units.Bytes(r.Ladders[1].Last().Bytes), s.DRAMNS2M)
		}
	}
}
