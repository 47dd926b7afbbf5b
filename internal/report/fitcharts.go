package report

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"

	"github.com/numalab/numalab/internal/calibrated"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/sentinel"
)

// Anchors of the model's fit and the speed sentinel's charts.
const (
	AnchorFit      = AnchorModel + "-fit"
	AnchorSentinel = AnchorModel + "-sentinel-chart"
)

// fitPoint is one cell's measured and predicted tps per core.
type fitPoint struct {
	Cell, Group         string // the cell; its memory or latency
	LatencyNS           float64
	Measured, Predicted float64
	// "fitted", "held out", "held out at another latency" (or "… not another latency") or "left out: …"
	Role string
}

// fitPoints are every point the model's fit was judged on: with a stored
// measured fit, each of its cells (those the sentinel left out predicted
// by the fit all the same) and each held-out check; else the fit's
// residuals and its held-out check; and the held-out point at another
// latency, its ratios shown as tps at the control cells' median.
func fitPoints(md *Model) []fitPoint {
	out := fitted(md)
	if o := md.Other; o != nil {
		role := "held out at another latency"
		if !o.Another {
			role = "held out, not another latency"
		}
		out = append(out, fitPoint{Cell: o.What, Group: fmt.Sprintf(
			"%s + %s ns the neighbour added over the control; tps: each ratio × the control cells' median %s",
			FmtF(o.BaseNS, 1), FmtF(o.AddedNS, 1), FmtN(o.ControlTPS)),
			LatencyNS: o.LatencyNS, Measured: o.MeasuredTPS(), Predicted: o.PredictedTPS(), Role: role})
	}
	return out
}

// fitted are fitPoints' points but the one at another latency.
func fitted(md *Model) []fitPoint {
	var out []fitPoint
	if f := md.Measured; f != nil && md.Fit != nil {
		for _, c := range f.Cells {
			p := fitPoint{Cell: c.Label, Group: f.Memory[c.Memory].Name, LatencyNS: c.LatencyNS, Measured: c.TPSPerCore,
				Predicted: model.TPSPerCore(md.Fit.Workload, c.LatencyNS, c.GHz), Role: "fitted"}
			if c.Off {
				p.Role = "left out: the sentinel was off"
			}
			out = append(out, p)
		}
		for _, h := range f.HeldOut {
			out = append(out, fitPoint{Cell: h.What, Group: h.Latency, LatencyNS: h.LatencyNS, Measured: h.MeasuredTPS,
				Predicted: h.PredictedTPS, Role: "held out"})
		}
		return out
	}
	for _, r := range md.Residuals {
		out = append(out, fitPoint{Cell: OrDash(r.Cell), Group: FmtF(r.LatencyNS, 1) + " ns", LatencyNS: r.LatencyNS,
			Measured: r.TPSPerCore, Predicted: r.FitTPSPerCore, Role: "fitted"})
	}
	if h := md.HeldOut; h != nil {
		out = append(out, fitPoint{Cell: h.What, Group: h.Latency, LatencyNS: h.LatencyNS, Measured: h.MeasuredTPS,
			Predicted: h.PredictedTPS, Role: "held out"})
	}
	return out
}

// fitFigure charts the model's prediction against the measured tps per
// core of every point, one colour per memory (or latency), the held-out
// checks as squares, the cells the sentinel left out as rings, and the 1:1
// line; its table holds the numbers. ok is false without points.
func fitFigure(md *Model) (Plot, Table, bool) {
	pts := fitPoints(md)
	if len(pts) == 0 {
		return Plot{}, Table{}, false
	}
	c := Chart{ID: AnchorFit, Title: "The model's fit: predicted against measured tps per core (dashed: exact)",
		X: Scale{Label: "measured tps per core", Format: FmtSig}, Y: Scale{Label: "model tps per core", Format: FmtSig},
		Ideal: true, Square: true, IdealText: "1:1"}
	idx := map[string]int{}
	tb := Table{ID: AnchorFit + "-table",
		Caption: "The fit's points: each cell's measured tps per core and the model's at its latency; " +
			"error = (model − measured) / measured" + fitCaveat(md),
		Head: []string{"cell", "memory or latency", "latency ns", "measured tps per core", "model tps per core", "error",
			"role"}, Fold: true}
	for _, p := range pts {
		name, shape := p.Group+", fitted", ""
		switch {
		case p.Role == "held out":
			name, shape = "held out: "+p.Group, "square"
		case strings.HasPrefix(p.Role, "held out"):
			name, shape = p.Role, "square"
		case p.Role != "fitted":
			name, shape = "left out (sentinel off)", "ring"
		}
		i, ok := idx[name]
		if !ok {
			i = len(c.Series)
			idx[name] = i
			c.Series = append(c.Series, Series{Name: name, Marks: true, Shape: shape})
		}
		c.Series[i].Points = append(c.Series[i].Points, Point{X: p.Measured, Y: p.Predicted})
		tb.Rows = append(tb.Rows, []string{p.Cell, p.Group, FmtF(p.LatencyNS, 1), FmtN(p.Measured), FmtN(p.Predicted),
			fmt.Sprintf("%+.1f%%", 100*(p.Predicted-p.Measured)/p.Measured), p.Role})
	}
	return Plot{ID: c.ID, SVG: template.HTML(c.SVG())}, tb, true
}

// fitCaveat says when the points cannot test the fit.
func fitCaveat(md *Model) string {
	switch {
	case md.Fit == nil:
		return "; one latency: the fit passes through the cells' median by construction, so this is their spread, not a test"
	case md.Fit.Points == 2:
		return "; two points fit A and M exactly: they test nothing"
	}
	return ""
}

// sentinelFigure charts the speed sentinel's samples in the order taken:
// each reference's deviation from its median, the tolerance band, and the
// samples flagged off as rings.
func sentinelFigure(f *calibrated.MeasuredFit) (Plot, bool) {
	v := f.Verdict
	if len(v.Deviation) == 0 || len(v.Deviation) != len(f.Sentinel.Samples) {
		return Plot{}, false
	}
	n := float64(len(v.Deviation) - 1)
	tol := 100 * v.Tolerance
	c := Chart{ID: AnchorSentinel,
		Title: fmt.Sprintf("Speed sentinel: each sample off its median, tolerance ±%.0f%%", tol),
		X:     Scale{Label: "sample, in the order taken", Format: FmtSig},
		Y:     Scale{Label: "off the median (%)", Format: FmtSig},
		HLines: []HLine{{Y: tol, X0: 0, X1: n, Text: fmt.Sprintf("+%.0f%%", tol)},
			{Y: -tol, X0: 0, X1: n, Text: fmt.Sprintf("−%.0f%%", tol)}}}
	core := Series{Name: fmt.Sprintf("core reference (median %s ms)", FmtF(float64(v.Median)/1e6, 2))}
	mem := Series{Name: fmt.Sprintf("memory reference (median %s ns a load)", FmtF(sentinel.PerLoad(v.MemMedian), 0))}
	off := Series{Name: "flagged off", Marks: true, Shape: "ring"}
	hasMem := len(v.MemDeviation) == len(v.Deviation)
	for i, d := range v.Deviation {
		x := float64(i)
		core.Points = append(core.Points, Point{X: x, Y: 100 * d})
		worst := d
		if hasMem {
			mem.Points = append(mem.Points, Point{X: x, Y: 100 * v.MemDeviation[i]})
			if math.Abs(v.MemDeviation[i]) > math.Abs(d) {
				worst = v.MemDeviation[i]
			}
		}
		if slices.Contains(v.Off, i) {
			off.Points = append(off.Points, Point{X: x, Y: 100 * worst})
		}
	}
	c.Series = append(c.Series, core)
	if hasMem {
		c.Series = append(c.Series, mem)
	}
	if len(off.Points) > 0 {
		c.Series = append(c.Series, off)
	}
	if n < 12 {
		for i := range len(v.Deviation) {
			c.X.Ticks = append(c.X.Ticks, float64(i))
		}
	}
	return Plot{ID: c.ID, SVG: template.HTML(c.SVG())}, true
}

// withoutResiduals drops the residual lines from the model's statements:
// the fit's chart and table show them.
func withoutResiduals(lines []string) []string {
	var out []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "residual of ") {
			out = append(out, l)
		}
	}
	return out
}

// csvRow is WriteCSV's row writer.
type csvRow = func(section string, run int64, series, xName string, x float64, yName string, y float64, unit string,
	lo, hi *float64, repeats int)

// machineCSV writes the numbers of the decision card's, the fit's and the
// sentinel's charts, and the ladder's cache levels, as WriteCSV's rows.
func machineCSV(r *Report, row csvRow) {
	if m := r.Memory; m != nil && m.Summary != nil {
		for _, lv := range m.Summary.Levels {
			if lv.CacheBytes <= 0 {
				continue // memory: no cache size to mark
			}
			row("memory_levels",
				m.Run, lv.Name, "cache_bytes", float64(lv.CacheBytes), "plateau_latency", lv.NS, "ns", nil, nil, 0)
		}
	}
	md := r.Model
	if md == nil {
		return
	}
	run := md.OLTPRun
	if md.FitRun != 0 {
		run = md.FitRun
	}
	for _, p := range fitPoints(md) {
		row("model_fit", run, p.Cell+" ("+p.Role+")", "measured_tps_per_core", p.Measured, "model_tps_per_core",
			p.Predicted, "tps/core", nil, nil, 0)
	}
	if f := md.Measured; f != nil {
		v := f.Verdict
		for i, d := range v.Deviation {
			row("sentinel", md.FitRun, "core reference", "sample", float64(i), "off_median", d, "fraction", nil, nil, 0)
			if len(v.MemDeviation) == len(v.Deviation) {
				row("sentinel",
					md.FitRun, "memory reference", "sample", float64(i), "off_median", v.MemDeviation[i], "fraction", nil, nil, 0)
			}
		}
	}
	if p := Purchase(r); p != nil {
		for i, c := range p.Rows {
			lo, hi := c.CostLow, c.CostHigh
			row("decision",
				md.ProbeRun, c.Name, "candidate", float64(i), "cost_per_1000_tps", c.CostPerKTPS, "price units", &lo, &hi, 0)
		}
	}
}
