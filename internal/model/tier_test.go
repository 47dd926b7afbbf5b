package model

import (
	"errors"
	"testing"
)

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
