package model

import (
	"math"
	"testing"
)

// TestPublishedArithmetic holds the model to the literature's own
// arithmetic, each row with its source and its tolerance: the worked
// examples at their own workload (I = 10,000,000, m = 5%: 91% of the
// cycles stalled at 67 ns and 3 GHz), the SMT band, and Joe Chang's socket
// ratios under his premise that performance goes as 1/latency (A = 0, all
// of the cycles stalled). TestPublishedFigures holds the figures at the
// stall shares workloads have.
func TestPublishedArithmetic(t *testing.T) {
	classic := Default() // I = 10,000,000, m = 0.05
	// memoryBound is Joe Chang's premise for his socket ratios:
	// performance ∝ 1/latency, i.e. A = 0 (the limit of the model).
	memoryBound := FromCycles(0, 1)
	tps := func(w Workload, mc Machine, sockets int, ghz float64) (perCore, total float64) {
		l, err := mc.Latency(sockets)
		if err != nil {
			t.Fatal(err)
		}
		p := TPSPerCore(w, l, ghz)
		return p, TotalTPS(p, 1, sockets)
	}
	chang2016 := Machine{LocalNS: 67, RemoteNS: 125, BufferNS: 15, BufferMinSockets: 4, Locality: -1}
	within := func(v, lo, hi float64) bool { return v >= lo && v <= hi }
	for _, row := range []struct {
		figure, source string
		got            func() float64
		lo, hi         float64 // the tolerance: got must lie in [lo, hi]
	}{
		// Worked examples: exact to the published rounding (±0.005).
		{"27.27 tps per core, 1 socket, 3 GHz, 67 ns", "Joe Chang, Memory Latency and NUMA (2016), worked example",
			func() float64 { p, _ := tps(classic, chang2016, 1, 3); return p }, 27.265, 27.275},
		{"19.54 tps per core, 2 sockets", "same",
			func() float64 { p, _ := tps(classic, chang2016, 2, 3); return p }, 19.535, 19.545},
		{"15.17 tps per core, 4 sockets (+15 ns buffer)", "same",
			func() float64 { p, _ := tps(classic, chang2016, 4, 3); return p }, 15.165, 15.175},
		{"1S → 2S 1.45× at 2.2 GHz", "same, at 2.2 GHz", func() float64 {
			_, a := tps(classic, chang2016, 1, 2.2)
			_, b := tps(classic, chang2016, 2, 2.2)
			return b / a
		}, 1.445, 1.455},
		{"2S → 4S 1.56× at 2.2 GHz", "same", func() float64 {
			_, a := tps(classic, chang2016, 2, 2.2)
			_, b := tps(classic, chang2016, 4, 2.2)
			return b / a
		}, 1.555, 1.565},
		{"1S → 4S 2.26× at 2.2 GHz", "same", func() float64 {
			_, a := tps(classic, chang2016, 1, 2.2)
			_, b := tps(classic, chang2016, 4, 2.2)
			return b / a
		}, 2.255, 2.265},
		{"1S at 43 ns matches 2S at 2.2 GHz (43.7)", "same (\"40 ns\" elsewhere)", func() float64 {
			p, _ := tps(classic, chang2016, 2, 2.2)
			l, _ := MatchingSingleSocketLatency(classic, 2.2, 1, 2, p)
			return l
		}, 43.65, 43.75},
		{"1S at 25 ns matches 4S at 2.2 GHz (24.9)", "same", func() float64 {
			p, _ := tps(classic, chang2016, 4, 2.2)
			l, _ := MatchingSingleSocketLatency(classic, 2.2, 1, 4, p)
			return l
		}, 24.85, 24.95},
		// SMT: the default and its band inside the published gains.
		{"SMT gain, default", "Linchi Shea: read-only OLTP +5% to +19%, a heavier mix about 0",
			func() float64 { return Grid{}.Gain(2) }, 1.0, 1.19},
		{"SMT gain, band's top below 1.5×", "same", func() float64 { return PublishedSMTGain.High }, 1.0, 1.19},
		// Sockets: Chang 2018's latencies, performance ∝ 1/latency.
		{"2S against 1S per core, Xeon SP (76; 89/139 ns)",
			"Joe Chang, Memory Latency - Return to Single Processor (2018): 0.63–0.67×",
			func() float64 {
				mc := Machine{OneSocketNS: 76, LocalNS: 89, RemoteNS: 139, Locality: -1}
				a, _ := tps(memoryBound, mc, 1, 3)
				b, _ := tps(memoryBound, mc, 2, 3)
				return b / a
			}, 0.63, 0.67},
		{"2S against 1S in total, Xeon SP", "same: 1.26–1.35×", func() float64 {
			mc := Machine{OneSocketNS: 76, LocalNS: 89, RemoteNS: 139, Locality: -1}
			_, a := tps(memoryBound, mc, 1, 3)
			_, b := tps(memoryBound, mc, 2, 3)
			return b / a
		}, 1.26, 1.35},
		{"2S against 1S per core, Xeon E5 v4 (76; 93/148 ns)", "same: 0.63–0.67×", func() float64 {
			mc := Machine{OneSocketNS: 76, LocalNS: 93, RemoteNS: 148, Locality: -1}
			a, _ := tps(memoryBound, mc, 1, 3)
			b, _ := tps(memoryBound, mc, 2, 3)
			return b / a
		}, 0.63, 0.67},
		{"2S against 1S in total, the model's defaults from 76 ns",
			"same: 1.26–1.35×, with the published ratios (PublishedMultiSocketLocal, PublishedRemoteRatio)",
			func() float64 {
				local := 76 * PublishedMultiSocketLocal.Value
				mc := Machine{OneSocketNS: 76, LocalNS: local, RemoteNS: local * PublishedRemoteRatio.Value, Locality: -1}
				_, a := tps(memoryBound, mc, 1, 3)
				_, b := tps(memoryBound, mc, 2, 3)
				return b / a
			}, 1.26, 1.35},
	} {
		if got := row.got(); !within(got, row.lo, row.hi) || math.IsNaN(got) {
			t.Errorf("%s (%s): model gives %.4f, want %g to %g", row.figure, row.source, got, row.lo, row.hi)
		}
	}
}
