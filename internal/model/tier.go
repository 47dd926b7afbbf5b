package model

import (
	"fmt"
)

// TierBreakEven is the largest fraction x of accesses that may miss a fast
// memory tier (latency fastNS) and go to a slow tier (slowNS) while the pair
// still beats conventional memory (dramNS): x < (D − S)/(I − S). A result
// ≤ 0 means the fast tier is no faster than DRAM (two tiers never win); ≥ 1
// means the slow tier is no slower than DRAM (they always win).
func TierBreakEven(fastNS, slowNS, dramNS float64) (float64, error) {
	for _, v := range []struct {
		name string
		ns   float64
	}{{"fast-tier", fastNS}, {"slow-tier", slowNS}, {"DRAM", dramNS}} {
		if !(v.ns > 0) {
			return 0, fmt.Errorf("%s latency %v ns: want a positive latency: %w", v.name, v.ns, ErrInput)
		}
	}
	if !(slowNS > fastNS) {
		return 0, fmt.Errorf("slow-tier latency %v ns is not above the fast tier's %v ns: %w", slowNS, fastNS, ErrInput)
	}
	return (dramNS - fastNS) / (slowNS - fastNS), nil
}

// TierLatency is the average latency when a fraction x of accesses miss
// the fast tier: (1 − x)·S + x·I.
func TierLatency(fastNS, slowNS, x float64) float64 {
	return (1-x)*fastNS + x*slowNS
}

// TierLevel is the average latency of two tiers at one miss fraction.
type TierLevel struct {
	Miss      float64 `json:"miss_fraction"`
	LatencyNS float64 `json:"latency_ns"`
	VsDRAM    float64 `json:"vs_dram"`
}

// Tiers is a fast tier in front of a slow one against conventional DRAM.
type Tiers struct {
	FastNS    float64     `json:"fast_ns"`
	SlowNS    float64     `json:"slow_ns"`
	DRAMNS    float64     `json:"dram_ns"`
	BreakEven float64     `json:"break_even_miss_fraction"` // TierBreakEven
	Levels    []TierLevel `json:"levels"`
}

// TwoTiers computes the break-even and the average latency at miss
// fractions from 1% to 50%.
func TwoTiers(fastNS, slowNS, dramNS float64) (Tiers, error) {
	x, err := TierBreakEven(fastNS, slowNS, dramNS)
	if err != nil {
		return Tiers{}, err
	}
	t := Tiers{FastNS: fastNS, SlowNS: slowNS, DRAMNS: dramNS, BreakEven: x}
	for _, m := range []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5} {
		l := TierLatency(fastNS, slowNS, m)
		t.Levels = append(t.Levels, TierLevel{m, l, l / dramNS})
	}
	return t, nil
}
