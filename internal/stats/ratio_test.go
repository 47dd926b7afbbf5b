package stats

import (
	"math"
	"testing"
)

func TestUCDFByHand(t *testing.T) {
	// n = m = 5: C(10,5) = 252 orderings; U = 0, 1, 2, 3 have 1, 1, 2, 3.
	cdf := uCDF(5, 5)
	for u, want := range []float64{1.0 / 252, 2.0 / 252, 4.0 / 252, 7.0 / 252} {
		if math.Abs(cdf[u]-want) > 1e-12 {
			t.Errorf("P(U ≤ %d) = %v, want %v", u, cdf[u], want)
		}
	}
	if cdf[len(cdf)-1] != 1 {
		t.Errorf("P(U ≤ 25) = %v, want 1", cdf[len(cdf)-1])
	}
}

func TestURank(t *testing.T) {
	for _, c := range []struct {
		n, m, k int
		level   float64
	}{
		{3, 3, 0, 0},             // P(U = 0) = 1/20 > 0.025: no interval
		{4, 4, 1, 1 - 2.0/70},    // P(U = 0) = 1/70
		{5, 5, 3, 1 - 2*4.0/252}, // P(U ≤ 2) = 4/252, P(U ≤ 3) = 7/252
		{20, 20, 128, 0},         // tables: the two-sided 5% critical U is 127
	} {
		k, level := uRank(c.n, c.m)
		if k != c.k || (c.level > 0 && math.Abs(level-c.level) > 1e-12) {
			t.Errorf("uRank(%d, %d) = %d, %v; want %d, %v", c.n, c.m, k, level, c.k, c.level)
		}
		if k > 0 && level < Confidence {
			t.Errorf("uRank(%d, %d): coverage %v below %v", c.n, c.m, level, Confidence)
		}
	}
	// The normal approximation takes over past 400 pairs and agrees with
	// the exact ranks near there within one.
	kExact, _ := uRank(20, 20)
	kNormal, _ := uRank(20, 21)
	if kNormal < kExact || kNormal > kExact+12 {
		t.Errorf(
			"uRank(20, 21) = %d by the normal approximation, uRank(20, 20) = %d exactly: not neighbours", kNormal, kExact)
	}
}

func TestRatioOf(t *testing.T) {
	a := []float64{100, 101, 102, 103, 104}
	var b []float64
	for _, x := range a {
		b = append(b, 0.9*x)
	}
	r := RatioOf(a, b)
	if math.Abs(r.Estimate-0.9) > 1e-12 || !r.HasCI {
		t.Fatalf("RatioOf = %+v, want estimate 0.9 with an interval", r)
	}
	// The 3rd smallest and 3rd largest of the 25 ratios 0.9·a_j/a_i:
	// 100/104 < 100/103 < 101/104, and their inverses.
	lo, hi := 0.9*101/104, 0.9*104/101
	if math.Abs(r.Lo-lo) > 1e-9 || math.Abs(r.Hi-hi) > 1e-9 {
		t.Errorf("interval [%v, %v], want [%v, %v]", r.Lo, r.Hi, lo, hi)
	}
	if r.Contains(1) {
		t.Errorf("%v contains 1", r)
	}
	// The same values on both sides: estimate 1, interval around it.
	same := RatioOf(a, a)
	if same.Estimate != 1 || !same.Contains(1) {
		t.Errorf("RatioOf(a, a) = %v, want 1 inside its interval", same)
	}
	if few := RatioOf(a[:3], b[:3]); few.HasCI || few.Contains(0.9) {
		t.Errorf("3 a side: %v, want no interval", few)
	}
	if bad := RatioOf([]float64{0, 1}, b); bad.Estimate != 0 || bad.HasCI {
		t.Errorf("a zero: %v, want no estimate", bad)
	}
}
