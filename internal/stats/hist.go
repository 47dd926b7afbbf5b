package stats

import (
	"math"
	"math/big"
	"math/bits"
	"time"
)

// Histogram layout: values are nanoseconds. Below 2^subBits every value has
// its own bucket; above, each power-of-two range [2^k, 2^(k+1)) is split
// into halfCount equal buckets, so a bucket is at most 1/1024 of the values
// it holds, and reporting its midpoint is within 1/2048 (0.05%) of any of
// them: better than 3 significant digits.
const (
	subBits   = 11
	subCount  = 1 << subBits // 2048
	halfCount = subCount / 2 // 1024
	// maxBits is the top of the range: values up to 2^maxBits ns (about
	// 2.4 hours) are bucketed; larger ones go to the last bucket, and Max
	// stays exact.
	maxBits  = 43
	nBuckets = subCount + (maxBits-subBits)*halfCount
	// HistogramMax is the largest latency the histogram resolves.
	HistogramMax = time.Duration(1<<maxBits - 1)
)

// Histogram records latencies in nanoseconds with ≤ 0.05% relative error,
// from 1 ns to HistogramMax, in constant time and without allocating. Count,
// mean, standard deviation, min and max are exact (the sum of squares is
// kept in 128 bits). It is not safe for concurrent use: each stream owns
// one, and they are merged at the end.
type Histogram struct {
	counts   [nBuckets]uint64
	n        uint64
	sum      uint64 // Σv in ns
	sqHi     uint64 // Σv² in ns², 128 bits
	sqLo     uint64
	min, max int64
}

// NewHistogram returns an empty histogram (about 280 KiB).
func NewHistogram() *Histogram {
	return &Histogram{min: math.MaxInt64}
}

// bucketOf maps a value in ns to its bucket.
func bucketOf(v uint64) int {
	if v < subCount {
		return int(v)
	}
	e := bits.Len64(v) - subBits // v>>e is in [1024, 2048)
	i := subCount + (e-1)*halfCount + int(v>>e) - halfCount
	if i >= nBuckets {
		return nBuckets - 1
	}
	return i
}

// bucketRange is the half-open value range [lo, hi) of bucket i.
func bucketRange(i int) (lo, hi uint64) {
	if i < subCount {
		return uint64(i), uint64(i) + 1
	}
	j := i - subCount
	e := j/halfCount + 1
	m := uint64(j%halfCount + halfCount)
	return m << e, (m + 1) << e
}

// Record adds one value in nanoseconds; negative values count as 0.
func (h *Histogram) Record(ns int64) {
	if ns < 0 {
		ns = 0
	}
	v := uint64(ns)
	h.counts[bucketOf(v)]++
	h.n++
	h.sum += v
	hi, lo := bits.Mul64(v, v)
	var c uint64
	h.sqLo, c = bits.Add64(h.sqLo, lo, 0)
	h.sqHi += hi + c
	if ns < h.min {
		h.min = ns
	}
	if ns > h.max {
		h.max = ns
	}
}

// Merge adds every value recorded in o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	var c uint64
	h.sqLo, c = bits.Add64(h.sqLo, o.sqLo, 0)
	h.sqHi += o.sqHi + c
	h.min = min(h.min, o.min)
	h.max = max(h.max, o.max)
}

// Count is the number of values recorded.
func (h *Histogram) Count() int64 { return int64(h.n) }

// Max is the largest value recorded (0 when empty).
func (h *Histogram) Max() int64 {
	if h.n == 0 {
		return 0
	}
	return h.max
}

// Min is the smallest value recorded (0 when empty).
func (h *Histogram) Min() int64 {
	if h.n == 0 {
		return 0
	}
	return h.min
}

// Mean is the exact arithmetic mean in ns (0 when empty).
func (h *Histogram) Mean() float64 {
	if h.n == 0 {
		return 0
	}
	return float64(h.sum) / float64(h.n)
}

// Stdev is the sample standard deviation in ns (n−1 in the denominator),
// computed exactly from the integer sums; 0 with fewer than 2 values.
func (h *Histogram) Stdev() float64 {
	if h.n < 2 {
		return 0
	}
	// (n·Σv² − (Σv)²) / (n·(n−1)), in big integers: no cancellation.
	sq := new(big.Int).Lsh(new(big.Int).SetUint64(h.sqHi), 64)
	sq.Or(sq, new(big.Int).SetUint64(h.sqLo))
	n := new(big.Int).SetUint64(h.n)
	num := new(big.Int).Mul(n, sq)
	s := new(big.Int).SetUint64(h.sum)
	num.Sub(num, s.Mul(s, s))
	den := new(big.Int).Mul(n, new(big.Int).SetUint64(h.n-1))
	v, _ := new(big.Rat).SetFrac(num, den).Float64()
	return math.Sqrt(v)
}

// Quantile returns the q-quantile (0 ≤ q ≤ 1) in ns by nearest rank: an
// estimate of the smallest recorded value with at least ⌈q·n⌉ values at or
// below it. The estimate is its bucket's midpoint, clamped to the exact
// min and max. 0 when empty.
func (h *Histogram) Quantile(q float64) float64 {
	return h.Quantiles(q)[0]
}

// Quantiles returns several quantiles in one pass over the buckets; qs
// must be in increasing order.
func (h *Histogram) Quantiles(qs ...float64) []float64 {
	out := make([]float64, len(qs))
	if h.n == 0 {
		return out
	}
	var seen uint64
	k := 0
	for i := 0; i < nBuckets && k < len(qs); i++ {
		c := h.counts[i]
		if c == 0 {
			continue
		}
		seen += c
		for k < len(qs) && seen >= rank(qs[k], h.n) {
			lo, hi := bucketRange(i)
			mid := float64(lo) + float64(hi-lo-1)/2
			out[k] = math.Min(math.Max(mid, float64(h.min)), float64(h.max))
			k++
		}
	}
	for ; k < len(qs); k++ {
		out[k] = float64(h.max)
	}
	return out
}

// rank is the nearest-rank position (1-based) of quantile q among n values.
func rank(q float64, n uint64) uint64 {
	r := uint64(math.Ceil(q * float64(n)))
	return min(max(r, 1), n)
}
