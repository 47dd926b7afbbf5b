package stats

import (
	"fmt"
	"slices"
)

// Shift is how much larger repeats b are than repeats a, in their unit:
// the Hodges-Lehmann estimate (the median of the n·m differences b_j −
// a_i) with the distribution-free confidence interval at Confidence that
// inverts the Mann-Whitney U test (as Ratio's, on the differences rather
// than their logs). It assumes the sides differ by a constant, nothing
// about their distribution. With too few repeats for an interval HasCI
// is false.
type Shift struct {
	NA       int     `json:"n_a"`
	NB       int     `json:"n_b"`
	Estimate float64 `json:"estimate"`
	HasCI    bool    `json:"has_ci"`
	Lo       float64 `json:"ci_lo,omitempty"`
	Hi       float64 `json:"ci_hi,omitempty"`
	Level    float64 `json:"level,omitempty"` // the interval's actual coverage (at least Confidence)
}

// ShiftOf is b minus a; without values on both sides it has no estimate.
func ShiftOf(a, b []float64) Shift {
	s := Shift{NA: len(a), NB: len(b)}
	if len(a) == 0 || len(b) == 0 {
		return s
	}
	d := make([]float64, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			d = append(d, y-x)
		}
	}
	slices.Sort(d)
	s.Estimate = Median(d)
	if k, level := uRank(len(a), len(b)); k > 0 {
		s.HasCI, s.Lo, s.Hi, s.Level = true, d[k-1], d[len(d)-k], level
	}
	return s
}

// Contains reports whether the interval holds x; false without one.
func (s Shift) Contains(x float64) bool { return s.HasCI && s.Lo <= x && x <= s.Hi }

// String is "+12.5 [3.1, 20.0] n=5+5", or the estimate and why there is
// no interval.
func (s Shift) String() string {
	if !s.HasCI {
		return fmt.Sprintf("%+.4g n=%d+%d (too few repeats for a %.0f%% interval)", s.Estimate, s.NA, s.NB, 100*Confidence)
	}
	return fmt.Sprintf("%+.4g [%.4g, %.4g] n=%d+%d", s.Estimate, s.Lo, s.Hi, s.NA, s.NB)
}
