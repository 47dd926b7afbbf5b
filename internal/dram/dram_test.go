package dram

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/model"
)

func TestDRAM(t *testing.T) {
	tests := []struct {
		mts          float64
		timings      string
		clock, acces float64
	}{
		// DDR4-2666 19-19-19: period 2000/2666 = 0.7502 ns; (19+19+19)·0.7502 = 57·0.7502 = 42.76 ns
		{2666, "19-19-19", 2000.0 / 2666, 57 * 2000.0 / 2666},
		// DDR4-3200 22-22-22: period 0.625 ns; 66·0.625 = 41.25 ns
		{3200, "22-22-22", 0.625, 41.25},
		// DDR5-4800 40-39-39: period 0.41667 ns; 118·0.41667 = 49.17 ns
		{4800, "40-39-39", 2000.0 / 4800, 118 * 2000.0 / 4800},
		// DDR3-1600 11-11-11: period 1.25 ns; 33·1.25 = 41.25 ns
		{1600, " 11-11-11 ", 1.25, 41.25},
	}
	for _, tt := range tests {
		tm, err := ParseTimings(tt.timings)
		if err != nil {
			t.Fatalf("ParseTimings(%q): %v", tt.timings, err)
		}
		if got := ClockNS(tt.mts); !near(got, tt.clock) {
			t.Errorf("ClockNS(%v) = %v, want %v", tt.mts, got, tt.clock)
		}
		if got := AccessNS(tt.mts, tm); !near(got, tt.acces) {
			t.Errorf("AccessNS(%v, %s) = %v, want %v", tt.mts, tt.timings, got, tt.acces)
		}
	}
	if tm, _ := ParseTimings("40-39-38"); tm != (Timings{CL: 40, RCD: 39, RP: 38}) {
		t.Errorf("ParseTimings order: %+v, want CL 40, tRCD 39, tRP 38", tm)
	}
	for _, bad := range []string{"", "19-19", "19-19-19-43", "19-x-19", "0-19-19", "-19-19-19"} {
		if _, err := ParseTimings(bad); !errors.Is(err, model.ErrInput) {
			t.Errorf("ParseTimings(%q) = %v, want ErrInput", bad, err)
		}
	}
}

// TestRowCycle checks tRC against Chang's examples (published-figures.md):
// DDR4-3200 45.75 ns and DDR4-2933 46.32 ns are tRAS 32 ns + tRP (22 ×
// 0.625 = 13.75 ns; 21 × 0.6819 = 14.32 ns), RLDRAM3 6.67 ns is 8 clocks
// of 0.8333 ns (a 1200 MHz clock, 2400 MT/s), and DDR4-2666 19-19-19 is
// "tRC ≈ 46 ns" (32 + 19 × 0.75 = 46.25) against its 42.75 ns.
func TestRowCycle(t *testing.T) {
	for _, tt := range []struct {
		mts     float64
		timings string
		tras    float64
		want    float64
	}{
		{3200, "22-22-22", 32, 45.75},
		{2933, "21-21-21", 32, 46.32},
		{2666, "19-19-19", 32, 46.25},
	} {
		tm, err := ParseTimings(tt.timings)
		if err != nil {
			t.Fatal(err)
		}
		rc := RowCycleFromRAS(tt.mts, tt.tras, tm)
		if math.Abs(rc.NS-tt.want) > 0.005 {
			t.Errorf("DDR4-%v %s tRAS %v ns: tRC %.4f ns, want %v", tt.mts, tt.timings, tt.tras, rc.NS, tt.want)
		}
		a := Compute(tt.mts, &tm, &rc, 3)
		if a.RowCycle.NS <= a.AccessNS-1e-9 {
			t.Errorf("DDR4-%v: tRC %.2f ns below tRP+tRCD+CL %.2f ns", tt.mts, a.RowCycle.NS, a.AccessNS)
		}
		if !near(a.RowCycleCoreCycles, rc.NS*3) {
			t.Errorf("DDR4-%v: tRC in core cycles %v, want %v", tt.mts, a.RowCycleCoreCycles, rc.NS*3)
		}
	}
	rl, err := ParseRowCycle("8clk", 2400)
	if err != nil || math.Abs(rl.NS-6.67) > 0.005 || rl.Clocks != 8 {
		t.Errorf("RLDRAM3 8clk at 2400 MT/s = %+v, %v; want 6.67 ns", rl, err)
	}
	ns, err := ParseRowCycle(" 45.75ns ", 3200)
	if err != nil || ns.NS != 45.75 || ns.Clocks != 0 {
		t.Errorf("45.75ns = %+v, %v; want 45.75 ns as given", ns, err)
	}
	for _, bad := range []string{"", "8", "45.75", "ns", "-1ns", "0clk", "8 cycles", "x clk"} {
		if _, err := ParseRowCycle(bad, 3200); !errors.Is(err, model.ErrInput) {
			t.Errorf("ParseRowCycle(%q) = %v, want ErrInput", bad, err)
		}
	}
	var b strings.Builder
	if err := Write(&b, Compute(2400, nil, &rl, 0)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tRC 6.67 ns", "random access by row cycle (tRC)  6.667 ns  8 clocks × 0.833 ns"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("Write without timings: no %q in\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "CAS") {
		t.Errorf("Write without timings printed a CAS line:\n%s", b.String())
	}
}

// near reports whether got is within a relative 1e-9 of want.
func near(got, want float64) bool {
	if want == 0 {
		return math.Abs(got) < 1e-12
	}
	return math.Abs(got-want) <= 1e-9*math.Abs(want)
}
