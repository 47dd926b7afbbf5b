package model

import (
	"errors"
	"math"
	"testing"
)

// near reports whether got is within a relative 1e-9 of want.
func near(got, want float64) bool {
	if want == 0 {
		return math.Abs(got) < 1e-12
	}
	return math.Abs(got-want) <= 1e-9*math.Abs(want)
}

func TestCyclesAndTPSPerCore(t *testing.T) {
	w := Default() // I = 1e7, m = 0.05: (1−m)·I = 9.5e6, m·I = 5e5
	tests := []struct {
		name       string
		w          Workload
		ns, ghz    float64
		cycles     float64 // hand arithmetic below
		tpsPerCore float64
	}{
		// L·f = 67·3 = 201 cycles; C = 9.5e6 + 5e5·201 = 9.5e6 + 1.005e8 = 1.1e8;
		// tps = 3e9 / 1.1e8 = 27.2727...
		{"1S 3GHz", w, 67, 3, 1.1e8, 3e9 / 1.1e8},
		// L = (67+125)/2 = 96 ns; 96·3 = 288; C = 9.5e6 + 1.44e8 = 1.535e8; tps = 19.544...
		{"2S 3GHz", w, 96, 3, 1.535e8, 3e9 / 1.535e8},
		// L = (67+3·125)/4 + 15 = 125.5 ns; ·3 = 376.5; C = 9.5e6 + 1.8825e8 = 1.9775e8
		{"4S+buffer 3GHz", w, 125.5, 3, 1.9775e8, 3e9 / 1.9775e8},
		// 67·2 = 134; C = 9.5e6 + 6.7e7 = 7.65e7; tps = 2e9/7.65e7 = 26.14
		{"1S 2GHz", w, 67, 2, 7.65e7, 2e9 / 7.65e7},
		// 67·1 = 67; C = 9.5e6 + 3.35e7 = 4.3e7; tps = 1e9/4.3e7 = 23.26
		{"1S 1GHz", w, 67, 1, 4.3e7, 1e9 / 4.3e7},
		// m = 0: C = I = 1e7 whatever the latency; tps = 3e9/1e7 = 300
		{"no misses", Workload{1e7, 0}, 500, 3, 1e7, 300},
		// m = 1: every instruction waits 100 cycles: C = 1e7·100 = 1e9; tps = 1e9/1e9 = 1
		{"all miss", Workload{1e7, 1}, 100, 1, 1e9, 1},
	}
	for _, tt := range tests {
		if got := CyclesPerTxn(tt.w, tt.ns, tt.ghz); !near(got, tt.cycles) {
			t.Errorf("%s: CyclesPerTxn = %v, want %v", tt.name, got, tt.cycles)
		}
		if got := TPSPerCore(tt.w, tt.ns, tt.ghz); !near(got, tt.tpsPerCore) {
			t.Errorf("%s: TPSPerCore = %v, want %v", tt.name, got, tt.tpsPerCore)
		}
	}
	// 27.27 tps/core is the figure the literature quotes for 3 GHz, 67 ns.
	if got := TPSPerCore(w, 67, 3); math.Abs(got-27.27) > 0.005 {
		t.Errorf("TPSPerCore(67 ns, 3 GHz) = %.4f, want 27.27", got)
	}
	// total = per-core × cores per socket × sockets: 27.27·10·2 = 545.45
	if got := TotalTPS(3e9/1.1e8, 10, 2); !near(got, 20*3e9/1.1e8) {
		t.Errorf("TotalTPS = %v", got)
	}
}

func TestAverageLatency(t *testing.T) {
	tests := []struct {
		local, remote, buffer float64
		sockets               int
		want                  float64
	}{
		{67, 125, 0, 1, 67},              // (67 + 0·125)/1
		{67, 125, 15, 1, 82},             // 67 + 15
		{67, 125, 0, 2, 96},              // (67 + 125)/2 = 192/2
		{67, 125, 15, 4, 125.5},          // (67 + 375)/4 + 15 = 110.5 + 15
		{67, 125, 0, 8, 117.75},          // (67 + 875)/8 = 942/8
		{100, 100, 0, 4, 100},            // uniform memory: no NUMA penalty
		{80, 140, 0, 3, (80 + 280) / 3.}, // = 120
	}
	for _, tt := range tests {
		if got := AverageLatency(tt.local, tt.remote, tt.buffer, tt.sockets); !near(got, tt.want) {
			t.Errorf("AverageLatency(%v, %v, %v, %d) = %v, want %v", tt.local, tt.remote, tt.buffer, tt.sockets, got, tt.want)
		}
	}
	// Locality: 80% local on 2 sockets: 0.8·67 + 0.2·125 = 53.6 + 25 = 78.6.
	if got := LocalityLatency(67, 125, 0, 2, 0.8); !near(got, 78.6) {
		t.Errorf("LocalityLatency 80%% = %v, want 78.6", got)
	}
	// p = 1/S reproduces the no-locality average: 0.25·67 + 0.75·125 + 15 = 125.5.
	if got := LocalityLatency(67, 125, 15, 4, 0.25); !near(got, 125.5) {
		t.Errorf("LocalityLatency 1/S = %v, want 125.5", got)
	}
}

// TestSMT: one thread per core is the base formula; more multiply it by
// the SMT gain, by default the middle of the published band, never the 2×
// of overlapping every wait.
func TestSMT(t *testing.T) {
	w := Default() // at 67 ns, 3 GHz: C = 1.1e8 cycles → 27.27 tps
	g := Grid{}
	if g.Gain(1) != 1 || g.Gain(2) != PublishedSMTGain.Value || g.Gain(4) != PublishedSMTGain.Value {
		t.Errorf("default gains %v, %v, %v; want 1 and %v", g.Gain(1), g.Gain(2), g.Gain(4), PublishedSMTGain.Value)
	}
	if v := PublishedSMTGain; !(v.Value >= v.Low && v.Value <= v.High && v.High < 1.5) {
		t.Errorf("published SMT band %v: want the default inside it and below 1.5", v)
	}
	if got := ThreadTPS(w, 67, 3, Grid{SMTGain: 1.25}.Gain(2)); !near(got, 1.25*3e9/1.1e8) {
		t.Errorf("SMT 2 at a given gain 1.25: %v, want %v", got, 1.25*3e9/1.1e8)
	}
}

func TestLatencyForTPS(t *testing.T) {
	w := Default()
	// Round trip: the latency that gives TPSPerCore(L) is L.
	for _, l := range []float64{5, 67, 96, 125.5, 400} {
		got, err := LatencyForTPS(w, 3, 1, TPSPerCore(w, l, 3))
		if err != nil || !near(got, l) {
			t.Errorf("LatencyForTPS(TPSPerCore(%v)) = %v, %v", l, got, err)
		}
		got, err = LatencyForTPS(w, 3, 1.1, 1.1*TPSPerCore(w, l, 3))
		if err != nil || !near(got, l) {
			t.Errorf("SMT gain 1.1 LatencyForTPS(%v) = %v, %v", l, got, err)
		}
	}
	tests := []struct {
		name    string
		ghz     float64
		sockets int
		perCore float64 // of the S-socket system
		want    float64
	}{
		// 2S at 3 GHz: C2 = 1.535e8, so the 1S cores need C1 = C2/2 = 7.675e7;
		// L·f = (7.675e7 − 9.5e6)/5e5 = 134.5 cycles; L = 134.5/3 = 44.833 ns.
		{"3GHz 2S", 3, 2, 3e9 / 1.535e8, 134.5 / 3},
		// 2.2 GHz, 2S: 96·2.2 = 211.2 cycles; C2 = 9.5e6 + 1.056e8 = 1.151e8;
		// C1 = 5.755e7; (5.755e7 − 9.5e6)/5e5 = 96.1 cycles; L = 96.1/2.2 = 43.68 ns.
		{"2.2GHz 2S", 2.2, 2, 2.2e9 / 1.151e8, 96.1 / 2.2},
		// 2.2 GHz, 4S + 15 ns: 125.5·2.2 = 276.1; C4 = 9.5e6 + 1.3805e8 = 1.4755e8;
		// C1 = C4/4 = 3.68875e7; (3.68875e7 − 9.5e6)/5e5 = 54.775 cycles; L = 24.898 ns.
		{"2.2GHz 4S", 2.2, 4, 2.2e9 / 1.4755e8, 54.775 / 2.2},
		// One socket matches itself.
		{"1S", 3, 1, 3e9 / 1.1e8, 67},
	}
	for _, tt := range tests {
		got, err := MatchingSingleSocketLatency(w, tt.ghz, 1, tt.sockets, tt.perCore)
		if err != nil || !near(got, tt.want) {
			t.Errorf("%s: matching latency = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	// 32 sockets at 125 ns, 3 GHz: C = 9.5e6 + 5e5·375 = 1.97e8; C/32 = 6.16e6 < 9.5e6
	// non-waiting cycles: no latency is low enough.
	if _, err := MatchingSingleSocketLatency(w, 3, 1, 32, 3e9/1.97e8); !errors.Is(err, ErrUnreachable) {
		t.Errorf("32 sockets: err = %v, want ErrUnreachable", err)
	}
	// More than 3e9/A = 315.8 tps needs fewer cycles than A.
	if _, err := LatencyForTPS(w, 3, 1, 316); !errors.Is(err, ErrUnreachable) {
		t.Errorf("above the ceiling: err = %v, want ErrUnreachable", err)
	}
	if _, err := LatencyForTPS(Workload{1e7, 0}, 3, 1, 100); !errors.Is(err, ErrInput) {
		t.Errorf("m = 0: err = %v, want ErrInput", err)
	}
	if _, err := LatencyForTPS(w, 0, 1, 100); !errors.Is(err, ErrInput) {
		t.Errorf("0 GHz: err = %v, want ErrInput", err)
	}
}

func TestWorkloadValidate(t *testing.T) {
	for _, w := range []Workload{{0, 0.05}, {-1, 0.05}, {1e7, -0.01}, {1e7, 1.01}, {1e7, math.NaN()}, {math.Inf(1), 0.1}} {
		if err := w.Validate(); !errors.Is(err, ErrInput) {
			t.Errorf("Validate(%+v) = %v, want ErrInput", w, err)
		}
	}
	for _, w := range []Workload{{1e7, 0}, {1e7, 1}, Default()} {
		if err := w.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v", w, err)
		}
	}
}
