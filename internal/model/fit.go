package model

import (
	"fmt"
	"math"
)

// Point is one measurement for calibration: per-core throughput at an
// effective memory latency and a core clock.
type Point struct {
	LatencyNS  float64 `json:"latency_ns"`
	GHz        float64 `json:"ghz"`
	TPSPerCore float64 `json:"tps_per_core"`
}

// Residual is how one point compares with the fitted model.
type Residual struct {
	Point
	CyclesPerTxn     float64 `json:"cycles_per_txn"`     // measured: f·10⁹ / tps
	FitCyclesPerTxn  float64 `json:"fit_cycles_per_txn"` // model at the fitted I and m
	FitTPSPerCore    float64 `json:"fit_tps_per_core"`   // model at the fitted I and m
	RelativeErrorTPS float64 `json:"relative_error_tps"` // (fit − measured) / measured
	Cell             string  `json:"cell,omitempty"`     // the measured cells the point came from, in words
}

// Fit is the workload the points imply.
type Fit struct {
	Workload Workload `json:"workload"`
	// NonMemCycles is (1 − m)·I, the cycles per transaction that do not
	// wait; MissesPerTxn is m·I, the waits per transaction.
	NonMemCycles float64    `json:"non_memory_cycles_per_txn"`
	MissesPerTxn float64    `json:"misses_per_txn"`
	R2           float64    `json:"r2"` // of cycles per transaction; exactly 1 with two points
	Points       int        `json:"points"`
	Residuals    []Residual `json:"residuals"`
}

// FitPoints fits I and m to two or more points by least squares on cycles
// per transaction. With x = L·f (latency in cycles) the model is linear:
//
//	C = f·10⁹/tps = (1 − m)·I + m·I·x = a + c·x
//
// so I = a + c and m = c / I. It fails when the points are fewer than two,
// all at the same latency in cycles, or imply a throughput that does not
// fall with latency (c ≤ 0) or negative non-waiting work (a < 0).
func FitPoints(pts []Point) (Fit, error) {
	if len(pts) < 2 {
		return Fit{}, fmt.Errorf("fitting %d point(s): want at least 2 at different latencies: %w", len(pts), ErrInput)
	}
	xs := make([]float64, len(pts))
	ys := make([]float64, len(pts))
	var mx, my float64
	for i, p := range pts {
		if !(p.LatencyNS > 0) || !(p.GHz > 0) || !(p.TPSPerCore > 0) {
			return Fit{}, fmt.Errorf("point %d (%v ns, %v GHz, %v tps/core): want positive latency, clock and throughput: %w", i+1, p.LatencyNS, p.GHz, p.TPSPerCore, ErrInput)
		}
		xs[i] = LatencyCycles(p.LatencyNS, p.GHz)
		ys[i] = p.GHz * 1e9 / p.TPSPerCore
		mx += xs[i]
		my += ys[i]
	}
	n := float64(len(pts))
	mx /= n
	my /= n
	var sxx, sxy, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if sxx <= 1e-12*mx*mx {
		return Fit{}, fmt.Errorf("fitting %d points all at %.4g cycles of latency: want at least two different latencies: %w", len(pts), mx, ErrInput)
	}
	c := sxy / sxx
	a := my - c*mx
	if !(c > 0) {
		return Fit{}, fmt.Errorf("fitting: throughput does not fall as latency rises (slope %.4g cycles per cycle of latency), so the points do not fit the model: %w", c, ErrInput)
	}
	if a < 0 {
		return Fit{}, fmt.Errorf("fitting: the points imply %.4g non-waiting cycles per transaction (negative), so they do not fit the model: %w", a, ErrInput)
	}
	I := a + c
	f := Fit{
		Workload:     Workload{Instructions: I, Miss: c / I},
		NonMemCycles: a,
		MissesPerTxn: c,
		Points:       len(pts),
	}
	var ssr float64
	for i, p := range pts {
		fc := a + c*xs[i]
		ssr += (ys[i] - fc) * (ys[i] - fc)
		ft := p.GHz * 1e9 / fc
		f.Residuals = append(f.Residuals, Residual{
			Point: p, CyclesPerTxn: ys[i], FitCyclesPerTxn: fc, FitTPSPerCore: ft,
			RelativeErrorTPS: (ft - p.TPSPerCore) / p.TPSPerCore,
		})
	}
	f.R2 = 1
	if syy > 0 {
		f.R2 = 1 - ssr/syy
	}
	if math.IsNaN(f.R2) {
		f.R2 = 0
	}
	return f, nil
}
