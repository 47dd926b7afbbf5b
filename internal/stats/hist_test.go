package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// exactQuantile is the nearest-rank quantile of sorted values.
func exactQuantile(sorted []int64, q float64) int64 {
	return sorted[rank(q, uint64(len(sorted)))-1]
}

func TestHistogramQuantiles(t *testing.T) {
	const n = 200_000
	us := int64(time.Microsecond)
	tests := []struct {
		name string
		gen  func(r *rand.Rand) int64
	}{
		{"uniform 1us-10ms", func(r *rand.Rand) int64 { return us + r.Int64N(10_000*us) }},
		{"exponential mean 20us", func(r *rand.Rand) int64 { return us + int64(r.ExpFloat64()*20e3) }},
		{"lognormal around 50us", func(r *rand.Rand) int64 { return int64(math.Exp(r.NormFloat64()*1.5 + math.Log(50e3))) }},
		{"bimodal 5us and 2ms", func(r *rand.Rand) int64 {
			if r.IntN(10) == 0 {
				return 2_000*us + r.Int64N(100*us)
			}
			return 5*us + r.Int64N(us)
		}},
		{"below 2us, exact buckets", func(r *rand.Rand) int64 { return r.Int64N(2048) }},
		{"minutes: 1s to 10min", func(r *rand.Rand) int64 { return int64(time.Second) + r.Int64N(int64(10*time.Minute)) }},
		{"constant 12345ns", func(r *rand.Rand) int64 { return 12345 }},
		{"heavy tail pareto", func(r *rand.Rand) int64 { return int64(3e3 / math.Pow(1-r.Float64(), 1/1.2)) }},
	}
	qs := []float64{0, 0.5, 0.9, 0.95, 0.99, 0.999, 1}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 42))
			h := NewHistogram()
			vals := make([]int64, n)
			for j := range vals {
				v := min(tt.gen(r), int64(HistogramMax))
				vals[j] = v
				h.Record(v)
			}
			slices.Sort(vals)
			got := h.Quantiles(qs...)
			for k, q := range qs {
				want := float64(exactQuantile(vals, q))
				if rel := math.Abs(got[k]-want) / math.Max(want, 1); rel > 0.001 {
					t.Errorf("q%.3f = %.0f ns, exact %.0f ns: relative error %.5f > 0.001", q, got[k], want, rel)
				}
			}
			if h.Max() != vals[n-1] || h.Min() != vals[0] {
				t.Errorf("min, max = %d, %d; want %d, %d", h.Min(), h.Max(), vals[0], vals[n-1])
			}
			mean, sd := meanStdev(vals)
			if rel := math.Abs(h.Mean()-mean) / mean; rel > 1e-12 {
				t.Errorf("mean = %v, want %v", h.Mean(), mean)
			}
			if math.Abs(h.Stdev()-sd) > 1e-9*math.Max(sd, 1) {
				t.Errorf("stdev = %v, want %v", h.Stdev(), sd)
			}
		})
	}
}

// meanStdev computes the sample mean and standard deviation in two passes.
func meanStdev(v []int64) (float64, float64) {
	var s float64
	for _, x := range v {
		s += float64(x)
	}
	mean := s / float64(len(v))
	var ss float64
	for _, x := range v {
		d := float64(x) - mean
		ss += d * d
	}
	return mean, math.Sqrt(ss / float64(len(v)-1))
}

func TestHistogramBuckets(t *testing.T) {
	// Every bucket's range maps back to it, ranges tile the line, and
	// widths stay within 1/1024 of their values.
	var next uint64
	for i := 0; i < nBuckets; i++ {
		lo, hi := bucketRange(i)
		if lo != next {
			t.Fatalf("bucket %d starts at %d, previous ended at %d", i, lo, next)
		}
		if bucketOf(lo) != i || bucketOf(hi-1) != i {
			t.Fatalf("bucket %d [%d,%d): bucketOf(lo)=%d bucketOf(hi-1)=%d", i, lo, hi, bucketOf(lo), bucketOf(hi-1))
		}
		if lo >= subCount && float64(hi-lo)/float64(lo) > 1.0/1024 {
			t.Fatalf("bucket %d [%d,%d) too wide", i, lo, hi)
		}
		next = hi
	}
	if next != 1<<maxBits {
		t.Fatalf("buckets end at %d, want 2^%d", next, maxBits)
	}
	if got := bucketOf(1 << 62); got != nBuckets-1 {
		t.Errorf("a huge value went to bucket %d, want the last", got)
	}
	if time.Duration(1<<maxBits) < 10*time.Minute {
		t.Errorf("range %v is below 10 minutes", time.Duration(1<<maxBits))
	}
}

func TestHistogramMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	all, a, b := NewHistogram(), NewHistogram(), NewHistogram()
	for i := 0; i < 50_000; i++ {
		v := int64(r.ExpFloat64() * 1e5)
		all.Record(v)
		if i%3 == 0 {
			a.Record(v)
		} else {
			b.Record(v)
		}
	}
	a.Merge(b)
	a.Merge(NewHistogram())
	if *a != *all {
		t.Fatalf("merged histogram differs from one fed every value: n %d/%d mean %v/%v", a.n, all.n, a.Mean(), all.Mean())
	}
}

func TestHistogramEmptyAndNegative(t *testing.T) {
	h := NewHistogram()
	if h.Quantile(0.5) != 0 || h.Mean() != 0 || h.Stdev() != 0 || h.Max() != 0 || h.Min() != 0 {
		t.Fatal("empty histogram reports non-zero figures")
	}
	h.Record(-5)
	if h.Count() != 1 || h.Max() != 0 {
		t.Fatalf("negative value: count %d max %d, want 1 and 0", h.Count(), h.Max())
	}
}

func TestHistogramSumOfSquaresExact(t *testing.T) {
	// 10-minute values squared overflow 64 bits many times over.
	h := NewHistogram()
	v := int64(10 * time.Minute)
	for i := 0; i < 1000; i++ {
		h.Record(v)
		h.Record(v + 2)
	}
	if got := h.Stdev(); math.Abs(got-1.0002501) > 1e-6 { // sample stdev of 1000×{v, v+2}
		t.Fatalf("stdev = %.9f, want 1.0002501", got)
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	h := NewHistogram()
	v := int64(5000)
	for b.Loop() {
		h.Record(v)
		v = (v*7 + 13) % 10_000_000
	}
}
