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
	FitCyclesPerTxn  float64 `json:"fit_cycles_per_txn"` // the fitted A + M·L·f
	FitTPSPerCore    float64 `json:"fit_tps_per_core"`   // f·10⁹ / (A + M·L·f)
	RelativeErrorTPS float64 `json:"relative_error_tps"` // (fit − measured) / measured
	Cell             string  `json:"cell,omitempty"`     // the measured cells the point came from, in words
}

// Interval is a 95% confidence interval.
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// String is the interval as "low to high", whole numbers.
func (iv Interval) String() string { return Thousands(iv.Low) + " to " + Thousands(iv.High) }

// Fit is what the points imply: cycles per transaction C = A + M·L·f,
// with A the core cycles a transaction needs when nothing waits for
// memory and M the memory waits per transaction that nothing overlaps.
type Fit struct {
	A float64 `json:"a_core_cycles"`
	M float64 `json:"m_memory_waits"`
	// AInterval and MInterval are 95% confidence intervals (Student's t
	// with points − 2 degrees of freedom); nil with two points, which fit
	// exactly and leave no freedom to estimate an error.
	AInterval *Interval `json:"a_interval,omitempty"`
	MInterval *Interval `json:"m_interval,omitempty"`
	// Workload is the same fit in the classic form: I = A + M, m = M / I.
	Workload  Workload   `json:"workload"`
	R2        float64    `json:"r2"` // of cycles per transaction; exactly 1 with two points
	Points    int        `json:"points"`
	Residuals []Residual `json:"residuals"`
}

// Cycles is A + M·L·f at latencyNS and ghz.
func (f Fit) Cycles(latencyNS, ghz float64) float64 {
	return f.A + f.M*LatencyCycles(latencyNS, ghz)
}

// StallShare is the share of a transaction's cycles spent waiting for
// memory at latencyNS and ghz: M·L·f / (A + M·L·f).
func (f Fit) StallShare(latencyNS, ghz float64) float64 {
	return f.M * LatencyCycles(latencyNS, ghz) / f.Cycles(latencyNS, ghz)
}

// FitPoints fits A and M to two or more points by least squares on cycles
// per transaction. With x = L·f (latency in cycles) the model is linear:
//
//	C = f·10⁹/tps = A + M·x
//
// and the classic form follows as I = A + M, m = M / I. With three or more
// points A and M get 95% confidence intervals. It fails when the points
// are fewer than two, all at the same latency in cycles, or imply a
// throughput that does not fall with latency (M ≤ 0) or negative core
// work (A < 0).
func FitPoints(pts []Point) (Fit, error) {
	if len(pts) < 2 {
		return Fit{}, fmt.Errorf("fitting %d point(s): want at least 2 at different latencies: %w", len(pts), ErrInput)
	}
	xs := make([]float64, len(pts))
	ys := make([]float64, len(pts))
	var mx, my float64
	for i, p := range pts {
		if !(p.LatencyNS > 0) || !(p.GHz > 0) || !(p.TPSPerCore > 0) {
			return Fit{}, fmt.Errorf("point %d (%v ns, %v GHz, %v tps/core): want positive latency, clock and throughput: %w",
				i+1, p.LatencyNS, p.GHz, p.TPSPerCore, ErrInput)
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
		return Fit{}, fmt.Errorf(
			"fitting %d points all at %.4g cycles of latency: want at least two different latencies: %w", len(pts), mx, ErrInput)
	}
	c := sxy / sxx
	a := my - c*mx
	if !(c > 0) {
		return Fit{}, fmt.Errorf("fitting: throughput does not fall as latency rises (slope %.4g cycles per cycle "+
			"of latency), so the points do not fit the model: %w", c, ErrInput)
	}
	if a < 0 {
		return Fit{}, fmt.Errorf(
			"fitting: the points imply %.4g core cycles per transaction (negative), so they do not fit the model: %w",
			a, ErrInput)
	}
	I := a + c
	f := Fit{A: a, M: c, Workload: Workload{Instructions: I, Miss: c / I}, Points: len(pts)}
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
	if dof := len(pts) - 2; dof > 0 {
		s2 := ssr / float64(dof)
		t := tQuantile975(dof)
		seM := math.Sqrt(s2 / sxx)
		seA := math.Sqrt(s2 * (1/n + mx*mx/sxx))
		f.AInterval = &Interval{a - t*seA, a + t*seA}
		f.MInterval = &Interval{c - t*seM, c + t*seM}
	}
	return f, nil
}

// t975 are Student's t 0.975 quantiles for 1 to 30 degrees of freedom.
var t975 = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// tQuantile975 is the two-sided 95% quantile of Student's t with dof
// degrees of freedom: the table to 30, then 2.042 down to 1.96 as
// 1.96 + 2.46/dof (within 0.002 of the exact value above 30).
func tQuantile975(dof int) float64 {
	if dof <= len(t975) {
		return t975[dof-1]
	}
	return 1.96 + 2.46/float64(dof)
}

// Parenthesised is " (95% interval a to b)", or "" without an interval
// (iv nil).
func (iv *Interval) Parenthesised() string {
	if iv == nil {
		return ""
	}
	return " (95% interval " + iv.String() + ")"
}
