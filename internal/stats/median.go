package stats

import "slices"

// Median is the middle of xs, the mean of the two middle values when
// there is an even number of them, and 0 when there is none. xs is not
// changed.
func Median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
