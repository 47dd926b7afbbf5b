package stats

import (
	"math"
	"strings"
	"testing"
)

func TestCompareVerdicts(t *testing.T) {
	tests := []struct {
		name string
		a, b []float64
		want Verdict
	}{
		// One repeat each: 9,566 against 13,260 tps is no evidence.
		{"one repeat each", []float64{9566}, []float64{13260}, CannotTell},
		{"one repeat in B", []float64{100, 101, 102, 103, 104}, []float64{200}, CannotTell},
		// Three repeats each cannot reach p <= 0.05 with a U test
		// (its smallest p-value is 0.1), however far apart they are.
		{"three each, far apart", []float64{1, 2, 3}, []float64{10, 11, 12}, CannotTell},
		{"five each, B higher", []float64{100, 101, 99, 102, 100}, []float64{120, 121, 119, 122, 120}, Higher},
		{"five each, B lower", []float64{100, 101, 99, 102, 100}, []float64{80, 81, 79, 82, 80}, Lower},
		{"five each, interleaved", []float64{100, 102, 104, 106, 108}, []float64{101, 103, 105, 107, 109}, NoDiff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Compare(tt.a, tt.b)
			if d.Verdict != tt.want {
				t.Fatalf("Compare(%v, %v) = %s, want %s", tt.a, tt.b, d, tt.want)
			}
			if d.A.N != len(tt.a) || d.B.N != len(tt.b) {
				t.Errorf("n = %d+%d, want %d+%d", d.A.N, d.B.N, len(tt.a), len(tt.b))
			}
			if d.Verdict == CannotTell && d.Why == "" {
				t.Errorf("cannot tell without saying why: %+v", d)
			}
			if d.Verdict != CannotTell && !strings.Contains(d.String(), "p=") {
				t.Errorf("String() = %q, want the p-value", d.String())
			}
		})
	}
}

func TestCompareP(t *testing.T) {
	// Five against five with no overlap: the U test's exact p-value is
	// 2/C(10,5) = 2/252.
	d := Compare([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10})
	if want := 2.0 / 252; math.Abs(d.P-want) > 1e-9 {
		t.Errorf("p = %v, want %v", d.P, want)
	}
}

func TestSummarize(t *testing.T) {
	// Too few repeats for a 95% interval of the median: infinite bounds,
	// and the text says so.
	iv := Summarize([]float64{3, 1, 2})
	if iv.Median != 2 || iv.HasCI || iv.Lo != 0 || iv.Hi != 0 {
		t.Errorf("Summarize(3 values) = %+v, want median 2 and no interval", iv)
	}
	if !strings.Contains(iv.String(), "too few") {
		t.Errorf("String() = %q, want it to say too few", iv.String())
	}
	// Ten repeats: the interval holds the median and lies inside the data.
	xs := []float64{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}
	iv = Summarize(xs)
	if iv.N != 10 || iv.Median != 14.5 || !iv.HasCI || !(iv.Lo <= iv.Median && iv.Median <= iv.Hi) ||
		iv.Lo < 10 || iv.Hi > 19 {
		t.Errorf("Summarize(10 values) = %+v, want median 14.5 inside [lo, hi] within 10..19", iv)
	}
	if Summarize(nil).N != 0 {
		t.Errorf("Summarize(nil) has repeats")
	}
}
