package model

import (
	"testing"
)

func TestImplausible(t *testing.T) {
	for _, c := range []struct {
		ns, ghz   []float64
		sockets   []int
		value, is string
	}{
		{[]float64{67, 125}, []float64{3}, []int{1, 2, 64}, "", ""},
		{[]float64{67, 0.5}, nil, nil, "0.5", "a plausible memory latency: want 1 to 10000 ns"},
		{[]float64{1e308}, nil, nil, "1e+308", "a plausible memory latency: want 1 to 10000 ns"},
		{nil, []float64{3, 40}, nil, "40", "a plausible clock: want 0.1 to 10 GHz"},
		{nil, nil, []int{1, 65}, "65", "a plausible socket count: want 1 to 64"},
		{[]float64{0.5}, []float64{40}, nil, "0.5", "a plausible memory latency: want 1 to 10000 ns"},
	} {
		v, why := Implausible(c.ns, c.ghz, c.sockets)
		if v != c.value || why != c.is {
			t.Errorf("Implausible(%v, %v, %v) = %q, %q; want %q, %q", c.ns, c.ghz, c.sockets, v, why, c.value, c.is)
		}
	}
}
