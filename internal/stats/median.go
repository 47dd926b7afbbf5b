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

// MedianOf is the Median of f over xs: a figure's median over the repeats
// that measured it.
func MedianOf[T any](xs []T, f func(T) float64) float64 {
	vs := make([]float64, len(xs))
	for i, x := range xs {
		vs[i] = f(x)
	}
	return Median(vs)
}

// Group collects xs by key, the keys in the order they first appear: the
// repeats of each point of a sweep.
func Group[K comparable, T any](xs []T, key func(T) K) (keys []K, groups map[K][]T) {
	groups = map[K][]T{}
	for _, x := range xs {
		k := key(x)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], x)
	}
	return keys, groups
}
