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

func TestGroupAndMedianOf(t *testing.T) {
	type cell struct {
		point string
		tps   float64
	}
	cells := []cell{{"b", 3}, {"a", 10}, {"b", 1}, {"a", 30}, {"b", 2}}
	keys, groups := Group(cells, func(c cell) string { return c.point })
	if !slices.Equal(keys, []string{"b", "a"}) || len(groups["b"]) != 3 || len(groups["a"]) != 2 {
		t.Fatalf("Group: keys %v, groups %v", keys, groups)
	}
	tps := func(c cell) float64 { return c.tps }
	if got := MedianOf(groups["b"], tps); got != 2 {
		t.Errorf("MedianOf b = %v, want 2", got)
	}
	if got := MedianOf(groups["a"], tps); got != 20 {
		t.Errorf("MedianOf a = %v, want 20", got)
	}
}
