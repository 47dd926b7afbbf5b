package stats

import (
	"slices"
	"testing"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{7}, 7},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{5, 5, 1, 100, 5}, 5},
		{[]float64{-2, -8}, -5},
	}
	for _, tt := range tests {
		in := slices.Clone(tt.in)
		if got := Median(in); got != tt.want {
			t.Errorf("Median(%v) = %v, want %v", tt.in, got, tt.want)
		}
		if !slices.Equal(in, tt.in) {
			t.Errorf("Median(%v) reordered its argument to %v", tt.in, in)
		}
	}
}
