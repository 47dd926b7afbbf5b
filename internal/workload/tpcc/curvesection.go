package tpcc

import (
	"encoding/json"
	"fmt"
	"html/template"
	"slices"
	"strings"

	"github.com/numalab/numalab/internal/curve"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

// AnchorCurve is the load-curve section.
const AnchorCurve = "curve"

// CurveReport is what the report shows of load-curve runs ('run oltp
// --curve', 'run sql --curve'): one section, one run per workload and
// engine. A report takes them only when named.
var CurveReport = report.Workload{
	Kinds:   []string{curve.RunKind, curve.SQLRunKind},
	Variant: func(run *result.Run) string { return "of " + curveWorkload(run.Kind) + " " + report.EngineVariant(run) },
	Build: func(_ *report.Report, runs []*result.Run) (report.Section, error) {
		sec := &CurveSection{}
		for _, run := range runs {
			cr, err := buildCurve(run)
			if err != nil {
				return nil, err
			}
			sec.Runs = append(sec.Runs, *cr)
		}
		return sec, nil
	},
}

// CurveSection holds one load curve per run, one run per engine.
type CurveSection struct {
	Runs []CurveRun `json:"curves,omitempty"`
}

var _ report.Section = (*CurveSection)(nil)

// Text writes each curve's points and knee.
func (sec *CurveSection) Text(b *strings.Builder, _ *report.Report) {
	for _, cr := range sec.Runs {
		fmt.Fprintf(b, "\nLoad curve (run %d, %s on %s)\n", cr.Run, cr.Workload, cr.Config.Engine)
		curve.WriteText(b, cr.Curve)
	}
}

// CSV writes each measured load's figures.
func (sec *CurveSection) CSV(row report.CSVRow) {
	for _, cr := range sec.Runs {
		name := cr.Workload + " on " + cr.Config.Engine
		for _, p := range cr.Curve.Points {
			if p.Interrupted {
				continue
			}
			row("curve", cr.Run, name, "offered_per_s", p.Offered, "achieved", p.Achieved, "tps", nil, nil, 0)
			row("curve", cr.Run, name, "offered_per_s", p.Offered, "p50_latency", p.P50US, "us", nil, nil, 0)
			row("curve", cr.Run, name, "offered_per_s", p.Offered, "p95_latency", p.P95US, "us", nil, nil, 0)
			row("curve", cr.Run, name, "offered_per_s", p.Offered, "p99_latency", p.P99US, "us", nil, nil, 0)
			if p.CPUPct >= 0 {
				row("curve", cr.Run, name, "offered_per_s", p.Offered, "cpu_busy", p.CPUPct, "%", nil, nil, 0)
			}
		}
		// The knee the chart marks: its floor, and the load at which p99
		// reached the limit, with the two measured loads that bracket it.
		cv := cr.Curve
		row("curve", cr.Run, name, "knee_factor", cv.Factor, "p99_floor", cv.FloorUS, "us", nil, nil, 0)
		if k := cv.Knee; k.Found {
			row("curve", cr.Run, name, "knee_factor", cv.Factor, "knee_offered", k.Estimate, "calls/s", &k.Below, &k.Above, 0)
			row("curve", cr.Run, name, "knee_factor", cv.Factor, "knee_fraction_of_capacity", k.EstimateFraction, "fraction",
				&k.BelowFraction, &k.AboveFraction, 0)
		}
	}
}

// Findings: each curve's knee, in one line.
func (sec *CurveSection) Findings(_ *report.Report, add, _ report.Say) {
	for _, cr := range sec.Runs {
		cv := cr.Curve
		if k := cv.Knee; k.Found {
			add(cr.anchor(), "Load curve of %s on %s: p99 left %g× its floor at about %s calls/s, %s of the capacity "+
				"%s tps (between %s and %s/s, run %d).",
				cr.Workload, cr.Config.Engine, cv.Factor, report.FmtN(k.Estimate), report.FmtF(k.EstimateFraction, 2),
				report.FmtN(cv.Capacity), report.FmtN(k.Below), report.FmtN(k.Above), cr.Run)
		} else if len(cv.Points) > 0 {
			add(cr.anchor(), "Load curve of %s on %s: p99 stayed within %g× its floor at every load measured, so the "+
				"knee is past them (capacity %s tps, run %d).",
				cr.Workload, cr.Config.Engine, cv.Factor, report.FmtN(cv.Capacity), cr.Run)
		}
	}
}

// curveWorkload names the workload of a curve run of kind.
func curveWorkload(kind string) string {
	if kind == curve.SQLRunKind {
		return "your scripts"
	}
	return "tpcc-ro"
}

// anchor is the curve run's latency chart, where the knee is marked.
func (cr CurveRun) anchor() string { return fmt.Sprintf("%s-%d-latency", AnchorCurve, cr.Run) }

// CurveRun is a 'numalab run oltp --curve' or 'run sql --curve' run: its
// curve and knee. Config is read as run oltp's; a run sql run's
// configuration gives the same engine and curve settings.
type CurveRun struct {
	Run      int64       `json:"run"`
	Workload string      `json:"workload"` // tpcc-ro, or "your scripts"
	Config   RunConfig   `json:"config"`
	Curve    curve.Curve `json:"curve"`
}

// buildCurve reads a curve run: its stored curve, or one made from its
// cells when the run stopped before storing it.
func buildCurve(run *result.Run) (*CurveRun, error) {
	cr := &CurveRun{Run: run.ID, Workload: curveWorkload(run.Kind)}
	if len(run.Config) > 0 {
		if err := json.Unmarshal(run.Config, &cr.Config); err != nil {
			return nil, fmt.Errorf("reading the configuration of run %d: %w", run.ID, err)
		}
	}
	cv, err := curve.KindCurve.Last(run)
	if err != nil {
		return nil, err
	}
	if cv == nil {
		cells, err := result.KindCell.All(run)
		if err != nil {
			return nil, err
		}
		ps := make([]*result.Cell, len(cells))
		for i := range cells {
			ps[i] = &cells[i]
		}
		c := curve.Analyze(ps, cr.Config.CurveAt, cr.Config.KneeFactor)
		cv = &c
	}
	cr.Curve = *cv
	return cr, nil
}

// HTML charts each curve run: p50/p95/p99 from intended start and
// achieved throughput against offered load, with the knee, and a table of
// the loads.
func (sec *CurveSection) HTML(_ *report.Report) []report.HTMLSection {
	s := report.HTMLSection{ID: AnchorCurve, Title: "Throughput and latency against offered load",
		Intro: "Each run measured the capacity in a closed loop, then ran open-loop cells at fractions of it: calls " +
			"arrive on a schedule, and latency runs from each call's intended start, so queueing shows. " +
			"The knee is the first load above 0.3 of capacity whose p99 exceeds the stated factor times the median " +
			"p99 of the loads up to 0.3; it lies between the two loads that bracket it (its uncertainty), the estimate " +
			"interpolated on log p99. " +
			"Points are medians over repeats; bars the repeats' range."}
	for _, cr := range sec.Runs {
		cv := cr.Curve
		id := fmt.Sprintf("%s-%d", AnchorCurve, cr.Run)
		lat := report.Chart{ID: id + "-latency", Title: fmt.Sprintf(
			"Run %d, %s on %s: latency from intended start against offered load", cr.Run, cr.Workload, cr.Config.Engine),
			X: report.Scale{Label: "offered load (calls/s)", Zero: true, Format: report.FmtCompact},
			Y: report.Scale{Label: "latency (ms)", Log: 10, Format: report.FmtSig}}
		tput := report.Chart{ID: id + "-tps",
			Title: fmt.Sprintf("Run %d, %s: achieved against offered", cr.Run, cr.Config.Engine),
			X:     report.Scale{Label: "offered load (calls/s)", Zero: true, Format: report.FmtCompact},
			Y:     report.Scale{Label: "achieved tps", Zero: true, Format: report.FmtCompact}, Ideal: true}
		fr := slices.Clone(cv.Fractions)
		slices.Sort(fr)
		fr = slices.Compact(fr)
		p50, p95, p99 := report.Series{Name: "p50"}, report.Series{Name: "p95"}, report.Series{Name: "p99"}
		ach := report.Series{Name: "achieved tps"}
		for _, f := range fr {
			var pts []curve.Point
			for _, p := range cv.Points {
				if p.Fraction == f && p.Offered > 0 && !p.Interrupted {
					pts = append(pts, p)
				}
			}
			if len(pts) == 0 {
				continue
			}
			x := stats.MedianOf(pts, func(p curve.Point) float64 { return p.Offered })
			p50.Points = append(p50.Points, spreadPoint(x, pts, func(p curve.Point) float64 { return p.P50US / 1000 }))
			p95.Points = append(p95.Points, spreadPoint(x, pts, func(p curve.Point) float64 { return p.P95US / 1000 }))
			p99.Points = append(p99.Points, spreadPoint(x, pts, func(p curve.Point) float64 { return p.P99US / 1000 }))
			ach.Points = append(ach.Points, spreadPoint(x, pts, func(p curve.Point) float64 { return p.Achieved }))
		}
		lat.Series, tput.Series = []report.Series{p50, p95, p99}, []report.Series{ach}
		if len(p99.Points) > 0 && cv.Limit() > 0 {
			lat.HLines = append(lat.HLines,
				report.HLine{Y: cv.Limit() / 1000, X0: p99.Points[0].X, X1: p99.Points[len(p99.Points)-1].X,
					Text: fmt.Sprintf("%g× p99 floor", cv.Factor)})
		}
		if knee, ok := kneeMark(cv, p50, p99); ok {
			// The knee: a vertical mark at the estimate across the
			// latencies drawn, and the bracket of measured loads on the
			// limit line.
			lat.Series = append(lat.Series, knee)
			lat.HLines = append(lat.HLines,
				report.HLine{Y: cv.Limit() / 1000, X0: cv.Knee.Below, X1: cv.Knee.Above, Text: "knee"})
		}
		s.Figures = append(s.Figures, report.Plot{ID: lat.ID, SVG: template.HTML(lat.SVG())},
			report.Plot{ID: tput.ID, SVG: template.HTML(tput.SVG())})
		t := report.Table{ID: id + "-table", Fold: true,
			Caption: fmt.Sprintf("Run %d (%s, %s): capacity %s tps in a closed loop; %s",
				cr.Run, cr.Config.Engine, report.Plural(cv.Streams, "stream"), report.FmtN(cv.Capacity), curve.KneeText(cv)),
			Head: []string{"load (of capacity)", "offered /s", "achieved /s", "p50 ms", "p95 ms", "p99 ms", "service p99 ms",
				"CPU busy %", "late", "backlog", "repeat"}}
		for _, p := range cv.Points {
			cpu := "-"
			if p.CPUPct >= 0 {
				cpu = report.FmtF(p.CPUPct, 0)
			}
			t.Rows = append(t.Rows, []string{report.FmtF(p.Fraction, 2), report.FmtN(p.Offered), report.FmtN(p.Achieved),
				report.FmtF(p.P50US/1000, 3), report.FmtF(p.P95US/1000, 3), report.FmtF(p.P99US/1000, 3),
				report.FmtF(p.ServiceP99/1000, 3), cpu, fmt.Sprint(p.Late), fmt.Sprint(p.Backlog), fmt.Sprint(p.Repeat)})
		}
		s.Tables = append(s.Tables, t)
		s.Notes = append(s.Notes, cv.Notes...)
	}
	return []report.HTMLSection{s}
}

// kneeMark is the knee as a series of one point: at the estimated load,
// on the limit, its bar spanning the latencies drawn so that it reads as
// a vertical mark; false when no knee was found.
func kneeMark(cv curve.Curve, p50, p99 report.Series) (report.Series, bool) {
	k := cv.Knee
	if !k.Found || cv.Limit() <= 0 || len(p50.Points) == 0 || len(p99.Points) == 0 {
		return report.Series{}, false
	}
	lo, hi := cv.Limit()/1000, cv.Limit()/1000
	for _, p := range append(slices.Clone(p50.Points), p99.Points...) {
		lo, hi = min(lo, p.Lo, p.Y), max(hi, p.Hi, p.Y)
	}
	name := fmt.Sprintf("knee ≈ %s/s (%s–%s/s)", report.FmtN(k.Estimate), report.FmtN(k.Below), report.FmtN(k.Above))
	return report.Series{Name: name, Marks: true,
		Points: []report.Point{{X: k.Estimate, Y: cv.Limit() / 1000, Lo: lo, Hi: hi}}}, true
}

// spreadPoint is the median of f over pts at x, with their range.
func spreadPoint(x float64, pts []curve.Point, f func(curve.Point) float64) report.Point {
	vs := make([]float64, len(pts))
	for i, p := range pts {
		vs[i] = f(p)
	}
	return report.Point{X: x, Y: stats.MedianOf(pts, f), Lo: slices.Min(vs), Hi: slices.Max(vs)}
}
