package model

import (
	"errors"
	"testing"
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
		if got := DRAMClockNS(tt.mts); !near(got, tt.clock) {
			t.Errorf("DRAMClockNS(%v) = %v, want %v", tt.mts, got, tt.clock)
		}
		if got := DRAMAccessNS(tt.mts, tm); !near(got, tt.acces) {
			t.Errorf("DRAMAccessNS(%v, %s) = %v, want %v", tt.mts, tt.timings, got, tt.acces)
		}
	}
	if tm, _ := ParseTimings("40-39-38"); tm != (Timings{CL: 40, RCD: 39, RP: 38}) {
		t.Errorf("ParseTimings order: %+v, want CL 40, tRCD 39, tRP 38", tm)
	}
	for _, bad := range []string{"", "19-19", "19-19-19-43", "19-x-19", "0-19-19", "-19-19-19"} {
		if _, err := ParseTimings(bad); !errors.Is(err, ErrInput) {
			t.Errorf("ParseTimings(%q) = %v, want ErrInput", bad, err)
		}
	}
}

func TestTier(t *testing.T) {
	// S = 10, D = 80, I = 300: x < (80 − 10)/(300 − 10) = 70/290 = 0.2414.
	x, err := TierBreakEven(10, 300, 80)
	if err != nil || !near(x, 70.0/290) {
		t.Fatalf("TierBreakEven = %v, %v; want 0.2414", x, err)
	}
	// At the break-even the two tiers average exactly D:
	// 0.7586·10 + 0.2414·300 = 7.586 + 72.414 = 80.
	if got := TierLatency(10, 300, x); !near(got, 80) {
		t.Errorf("TierLatency at break-even = %v, want 80", got)
	}
	// Fast tier slower than DRAM: (80 − 90)/(300 − 90) = −0.0476 < 0: never wins.
	if x, _ := TierBreakEven(90, 300, 80); !near(x, -10.0/210) {
		t.Errorf("slow fast tier: x = %v", x)
	}
	for _, c := range [][3]float64{{0, 300, 80}, {10, -1, 80}, {10, 300, 0}, {100, 100, 80}, {100, 50, 80}} {
		if _, err := TierBreakEven(c[0], c[1], c[2]); !errors.Is(err, ErrInput) {
			t.Errorf("TierBreakEven%v = %v, want ErrInput", c, err)
		}
	}
}
