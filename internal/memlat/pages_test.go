package memlat

import (
	"strings"
	"testing"
)

// TestHalfHugeMappingKeepsItsPages builds a probe's results from crafted
// mapping outcomes: a 4 KiB mapping, and a mapping that asked for 2 MiB
// pages but got only 30% huge. The second must stay a "2m" result: the 4
// KiB DRAM figure is the 4 KiB mapping's, and no heading calls the mapping
// "4KiB (100% huge)".
func TestHalfHugeMappingKeepsItsPages(t *testing.T) {
	small := &buffer{PageBytes: smallBytes}
	half := &buffer{PageBytes: smallBytes, HugeFraction: 0.3}
	st := func(v float64) Stat { return Stat{Median: v, Min: v, Max: v, Samples: 3, Window: 50} }
	ladder := func(b *buffer, pages string, ns float64) Ladder {
		l := newLadder(b, pages, Random, DefaultSlotBytes, 0, 3)
		l.Points = []Point{{Bytes: 1 << 30, TouchedBytes: 1 << 28, NS: st(ns), Cycles: 3 * ns}}
		l.Points[0].setBest(3)
		return l
	}
	cfg := DefaultConfig(false)
	rep := &Report{Config: cfg, GHz: 3,
		Ladders: []Ladder{ladder(small, Pages4K, 435), ladder(half, Pages2M, 348)},
		MLP:     newMLP(1<<30, Pages2M, half, 0),
	}
	rep.MLP.Points = []MLPPoint{{Chains: 1, Threads: 1, NSPerLoad: st(348), InFlight: 1}}
	if p := rep.Ladders[1].Pages; p != Pages2M {
		t.Errorf("ladder of a mapping that asked for 2m pages and got 30%% huge: pages %q, want %q", p, Pages2M)
	}
	s := summarize(rep)
	if s.DRAMNS4K != 435 || s.DRAMNS2M != 348 || s.PageBytes2M != smallBytes || s.HugeFraction2M != 0.3 {
		t.Errorf("summary: 4k %.0f ns, 2m %.0f ns (%d B pages, %.1f huge), want 4k 435, 2m 348 (4096 B, 0.3 huge)",
			s.DRAMNS4K, s.DRAMNS2M, s.PageBytes2M, s.HugeFraction2M)
	}
	if h, want := s.Headline(), "DRAM latency 435 ns (the fully random chain's DRAM latency with 4 KiB pages); "+
		"random chain 348 ns (2m pages asked, 4KiB (30% huge) obtained); at 1GiB; 3.00 GHz"; h != want {
		t.Errorf("headline %q\nwant     %q", h, want)
	}
	var b strings.Builder
	if err := WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"Latency ladder, 2m pages asked, 4KiB (30% huge) obtained",
		"random           2m  4KiB (30% huge)  348.0",
		"1GiB working set, 2m pages asked, 4KiB (30% huge) obtained, CPU 0",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "100% huge") {
		t.Errorf("text claims a mapping is 100%% huge:\n%s", text)
	}
}
