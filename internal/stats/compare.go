package stats

import (
	"fmt"
	"math"

	"golang.org/x/perf/benchmath"
)

// Confidence is the level of every interval Summarize gives, and Alpha the
// significance level at which Compare calls a difference.
const (
	Confidence = 0.95
	Alpha      = 0.05
)

// Interval is a set of repeats summarised: their median and a
// distribution-free confidence interval for it at Confidence, Lo to Hi.
// With too few repeats for one (fewer than 6 at 95%) HasCI is false and
// Lo and Hi are 0.
type Interval struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	HasCI  bool    `json:"has_ci"`
	Lo     float64 `json:"ci_lo,omitempty"`
	Hi     float64 `json:"ci_hi,omitempty"`
}

// Summarize is the median of xs and its confidence interval.
func Summarize(xs []float64) Interval {
	if len(xs) == 0 {
		return Interval{}
	}
	s := benchmath.AssumeNothing.Summary(benchmath.NewSample(xs, &benchmath.DefaultThresholds), Confidence)
	iv := Interval{N: len(xs), Median: s.Center}
	if !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) {
		iv.HasCI, iv.Lo, iv.Hi = true, s.Lo, s.Hi
	}
	return iv
}

// String is "12.3 [11.9, 12.8] n=5", or "12.3 n=3 (too few for an interval)".
func (iv Interval) String() string {
	if iv.N == 0 {
		return "none"
	}
	if !iv.HasCI {
		return fmt.Sprintf("%.4g n=%d (too few repeats for a %.0f%% interval)", iv.Median, iv.N, 100*Confidence)
	}
	return fmt.Sprintf("%.4g [%.4g, %.4g] n=%d", iv.Median, iv.Lo, iv.Hi, iv.N)
}

// Verdict is what Compare concludes about B against A.
type Verdict string

// Verdicts. CannotTell is given when the repeats cannot show a difference
// whatever their values: one repeat on a side, or too few on both for the
// test to reach Alpha.
const (
	Higher     Verdict = "B higher"
	Lower      Verdict = "B lower"
	NoDiff     Verdict = "no difference shown"
	CannotTell Verdict = "cannot tell"
)

// Difference is two sets of repeats compared.
type Difference struct {
	A       Interval `json:"a"`
	B       Interval `json:"b"`
	P       float64  `json:"p"` // the test's p-value; 1 when no test was possible
	Verdict Verdict  `json:"verdict"`
	Why     string   `json:"why,omitempty"` // for CannotTell: what would let it tell
}

// Compare tests whether repeats b differ from repeats a: a Mann-Whitney U
// test (benchmath.AssumeNothing, which assumes no distribution), a
// difference when its p-value is at most Alpha.
func Compare(a, b []float64) Difference {
	d := Difference{A: Summarize(a), B: Summarize(b), P: 1}
	if len(a) < 2 || len(b) < 2 {
		d.Verdict = CannotTell
		d.Why = fmt.Sprintf("n=%d and n=%d: a test needs repeats on both sides", len(a), len(b))
		return d
	}
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(a, &benchmath.DefaultThresholds),
		benchmath.NewSample(b, &benchmath.DefaultThresholds))
	d.P = c.P
	switch {
	case c.P <= Alpha && d.B.Median > d.A.Median:
		d.Verdict = Higher
	case c.P <= Alpha && d.B.Median < d.A.Median:
		d.Verdict = Lower
	case len(c.Warnings) > 0:
		d.Verdict, d.Why = CannotTell, fmt.Sprintf("n=%d and n=%d: %v", len(a), len(b), c.Warnings[0])
	default:
		d.Verdict = NoDiff
	}
	return d
}

// String is the verdict with its evidence: "B higher (p=0.008, n=5+5)".
func (d Difference) String() string {
	if d.Verdict == CannotTell {
		return fmt.Sprintf("%s (%s)", d.Verdict, d.Why)
	}
	return fmt.Sprintf("%s (p=%.3f, n=%d+%d)", d.Verdict, d.P, d.A.N, d.B.N)
}
