package model

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestFitExact(t *testing.T) {
	// Two points from I = 1e7, m = 0.05 at 3 GHz:
	// 67 ns → 201 cycles, C = 1.1e8; 96 ns → 288 cycles, C = 1.535e8.
	// slope c = (1.535e8 − 1.1e8)/(288 − 201) = 4.35e7/87 = 5e5 = m·I;
	// a = 1.1e8 − 5e5·201 = 9.5e6 = (1 − m)·I; I = a + c = 1e7; m = 5e5/1e7 = 0.05.
	f, err := FitPoints([]Point{{67, 3, 3e9 / 1.1e8}, {96, 3, 3e9 / 1.535e8}})
	if err != nil {
		t.Fatal(err)
	}
	if !near(f.M, 5e5) || !near(f.A, 9.5e6) || !near(f.Workload.Instructions, 1e7) ||
		!near(f.Workload.Miss, 0.05) || f.R2 != 1 {
		t.Errorf("fit = %+v", f)
	}
	// Many points, several clocks, from other known workloads: recovered
	// within a relative 1e-6.
	for _, w := range []Workload{{1e7, 0.05}, {2.5e6, 0.12}, {4e7, 0.01}, {1e6, 0.9}} {
		var pts []Point
		for _, ghz := range []float64{1, 2.2, 3} {
			for _, l := range []float64{67, 96, 125.5, 180} {
				pts = append(pts, Point{l, ghz, TPSPerCore(w, l, ghz)})
			}
		}
		f, err := FitPoints(pts)
		if err != nil {
			t.Fatal(err)
		}
		if rel(f.Workload.Instructions, w.Instructions) > 1e-6 || rel(f.Workload.Miss, w.Miss) > 1e-6 || f.R2 < 1-1e-9 {
			t.Errorf("fit of %+v = %+v (R² %v)", w, f.Workload, f.R2)
		}
		for _, r := range f.Residuals {
			if math.Abs(r.RelativeErrorTPS) > 1e-9 {
				t.Errorf("exact point residual %v", r)
			}
		}
	}
}

func rel(got, want float64) float64 { return math.Abs(got-want) / math.Abs(want) }

func TestFitNoisy(t *testing.T) {
	// 1% multiplicative noise on throughput, seeded: I and m come back
	// within a few percent, R² is high but below 1, and residuals show
	// the noise.
	rng := rand.New(rand.NewPCG(1, 2))
	w := Default()
	var pts []Point
	for _, l := range []float64{67, 80, 96, 110, 125.5, 140, 160, 200} {
		for range 3 {
			pts = append(pts, Point{l, 3, TPSPerCore(w, l, 3) * (1 + 0.01*rng.NormFloat64())})
		}
	}
	f, err := FitPoints(pts)
	if err != nil {
		t.Fatal(err)
	}
	if rel(f.Workload.Instructions, 1e7) > 0.2 || rel(f.Workload.Miss, 0.05) > 0.2 || rel(f.M, 5e5) > 0.05 {
		t.Errorf("noisy fit = %+v", f)
	}
	if !(f.R2 > 0.95 && f.R2 < 1) {
		t.Errorf("noisy R² = %v, want in (0.95, 1)", f.R2)
	}
	var maxErr float64
	for _, r := range f.Residuals {
		maxErr = max(maxErr, math.Abs(r.RelativeErrorTPS))
	}
	if maxErr == 0 || maxErr > 0.05 {
		t.Errorf("largest residual %v, want in (0, 5%%]", maxErr)
	}
}

func TestFitBad(t *testing.T) {
	for name, pts := range map[string][]Point{
		"one point":        {{67, 3, 27}},
		"same latency":     {{67, 3, 27}, {67, 3, 28}},
		"same cycles":      {{100, 2, 27}, {200, 1, 13}}, // both 200 cycles
		"rises w/ latency": {{67, 3, 20}, {96, 3, 27}},
		"negative a":       {{67, 3, 3e9 / 1e8}, {134, 3, 3e9 / 3e8}}, // C doubles+ with x: a < 0
		"zero tps":         {{67, 3, 0}, {96, 3, 20}},
		"zero GHz":         {{67, 0, 20}, {96, 3, 20}},
	} {
		if _, err := FitPoints(pts); !errors.Is(err, ErrInput) {
			t.Errorf("%s: err = %v, want ErrInput", name, err)
		}
	}
}
