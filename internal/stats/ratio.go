package stats

import (
	"fmt"
	"math"
	"slices"
)

// Ratio is how many times larger repeats b are than repeats a: the
// Hodges-Lehmann estimate on the log scale (the median of the n·m ratios
// b_j / a_i) with its distribution-free confidence interval at Confidence,
// the one that inverts the Mann-Whitney U test Compare uses (the interval
// runs from the k-th smallest to the k-th largest of the n·m ratios, k
// from U's exact distribution, or its normal approximation when n·m is
// over 400). It assumes the two sides differ by a factor, nothing about
// their distribution. With too few repeats for an interval (at 95%,
// fewer than 4 a side when the sides are equal) HasCI is false.
type Ratio struct {
	NA       int     `json:"n_a"`
	NB       int     `json:"n_b"`
	Estimate float64 `json:"estimate"`
	HasCI    bool    `json:"has_ci"`
	Lo       float64 `json:"ci_lo,omitempty"`
	Hi       float64 `json:"ci_hi,omitempty"`
	Level    float64 `json:"level"` // the interval's actual coverage (at least Confidence)
}

// RatioOf is b over a. Values must be positive (rates, times); a
// non-positive value leaves the ratio without an estimate (Estimate 0).
func RatioOf(a, b []float64) Ratio {
	r := Ratio{NA: len(a), NB: len(b)}
	if len(a) == 0 || len(b) == 0 || slices.Min(a) <= 0 || slices.Min(b) <= 0 {
		return r
	}
	d := make([]float64, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			d = append(d, math.Log(y)-math.Log(x))
		}
	}
	slices.Sort(d)
	r.Estimate = math.Exp(Median(d))
	k, level := uRank(len(a), len(b))
	if k > 0 {
		r.HasCI, r.Lo, r.Hi, r.Level = true, math.Exp(d[k-1]), math.Exp(d[len(d)-k]), level
	}
	return r
}

// Contains reports whether the interval holds x; false without one.
func (r Ratio) Contains(x float64) bool { return r.HasCI && r.Lo <= x && x <= r.Hi }

// String is "0.962 [0.941, 0.987] n=5+5", or the estimate and why there
// is no interval.
func (r Ratio) String() string {
	switch {
	case r.Estimate == 0:
		return fmt.Sprintf("none (n=%d+%d)", r.NA, r.NB)
	case !r.HasCI:
		return fmt.Sprintf("%.3f n=%d+%d (too few repeats for a %.0f%% interval)", r.Estimate, r.NA, r.NB, 100*Confidence)
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f] n=%d+%d", r.Estimate, r.Lo, r.Hi, r.NA, r.NB)
}

// uRank is the rank k (from 1) of the interval's ends among the n·m
// sorted differences, and the interval's coverage: the largest k with
// P(U ≤ k−1) ≤ (1−Confidence)/2. k is 0 when even k = 1 is too wide a
// tail (too few repeats).
func uRank(n, m int) (int, float64) {
	tail := (1 - Confidence) / 2
	if n*m > 400 {
		mean := float64(n*m) / 2
		sd := math.Sqrt(float64(n*m*(n+m+1)) / 12)
		k := int(math.Floor(mean - 1.959963984540054*sd + 0.5))
		if k < 1 {
			return 0, 0
		}
		p := normalCDF((float64(k-1) + 0.5 - mean) / sd)
		return k, 1 - 2*p
	}
	cdf := uCDF(n, m)
	k := 0
	for k < len(cdf) && cdf[k] <= tail {
		k++
	}
	if k == 0 {
		return 0, 0
	}
	return k, 1 - 2*cdf[k-1]
}

// uCDF is P(U ≤ u) for u = 0..n·m under the null hypothesis, exactly: the
// number of orderings with U = u follows f(n, m, u) = f(n−1, m, u−m) +
// f(n, m−1, u).
func uCDF(n, m int) []float64 {
	// f[i][j] is the count distribution for sizes i and j.
	f := make([][][]float64, n+1)
	for i := range f {
		f[i] = make([][]float64, m+1)
		for j := range f[i] {
			f[i][j] = make([]float64, i*j+1)
			if i == 0 || j == 0 {
				f[i][j][0] = 1
				continue
			}
			for u := range f[i][j] {
				if u-j >= 0 && u-j < len(f[i-1][j]) {
					f[i][j][u] += f[i-1][j][u-j]
				}
				if u < len(f[i][j-1]) {
					f[i][j][u] += f[i][j-1][u]
				}
			}
		}
	}
	counts := f[n][m]
	var total float64
	for _, c := range counts {
		total += c
	}
	cdf := make([]float64, len(counts))
	var run float64
	for u, c := range counts {
		run += c
		cdf[u] = run / total
	}
	return cdf
}

func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
