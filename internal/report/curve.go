package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"slices"

	"github.com/numalab/numalab/internal/curve"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

// AnchorCurve is the load-curve section.
const AnchorCurve = "curve"

// CurveRun is a 'numalab run oltp --curve' run: its curve and knee.
type CurveRun struct {
	Run    int64          `json:"run"`
	Config tpcc.RunConfig `json:"config"`
	Curve  curve.Curve    `json:"curve"`
}

// buildCurve reads a curve run: its stored curve, or one made from its
// cells when the run stopped before storing it.
func buildCurve(run *result.Run) (*CurveRun, error) {
	cr := &CurveRun{Run: run.ID}
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

// curveSection charts each curve run: p50/p95/p99 from intended start and
// achieved throughput against offered load, with the knee, and a table of
// the loads.
func curveSection(r *Report) HTMLSection {
	s := HTMLSection{ID: AnchorCurve, Title: "Throughput and latency against offered load",
		Intro: "Each run measured the capacity in a closed loop, then ran open-loop cells at fractions of it: calls arrive on a schedule, and latency runs from each call's intended start, so queueing shows. " +
			"The knee is the first load above 0.3 of capacity whose p99 exceeds the stated factor times the median p99 of the loads up to 0.3; it lies between the two loads that bracket it (its uncertainty), the estimate interpolated on log p99. " +
			"Points are medians over repeats; bars the repeats' range."}
	for _, cr := range r.Curves {
		cv := cr.Curve
		id := fmt.Sprintf("%s-%d", AnchorCurve, cr.Run)
		lat := Chart{ID: id + "-latency", Title: fmt.Sprintf("Run %d, %s on %s: latency from intended start against offered load", cr.Run, "tpcc-ro", cr.Config.Engine),
			X: Scale{Label: "offered load (calls/s)", Zero: true, Format: FmtCompact}, Y: Scale{Label: "latency (ms)", Log: 10, Format: FmtSig}}
		tput := Chart{ID: id + "-tps", Title: fmt.Sprintf("Run %d, %s: achieved against offered", cr.Run, cr.Config.Engine),
			X: Scale{Label: "offered load (calls/s)", Zero: true, Format: FmtCompact}, Y: Scale{Label: "achieved tps", Zero: true, Format: FmtCompact}, Ideal: true}
		fr := slices.Clone(cv.Fractions)
		slices.Sort(fr)
		fr = slices.Compact(fr)
		p50, p95, p99 := Series{Name: "p50"}, Series{Name: "p95"}, Series{Name: "p99"}
		ach := Series{Name: "achieved tps"}
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
		lat.Series, tput.Series = []Series{p50, p95, p99}, []Series{ach}
		if len(p99.Points) > 0 {
			lat.HLines = append(lat.HLines, HLine{Y: cv.Factor * cv.FloorUS / 1000, X0: p99.Points[0].X, X1: p99.Points[len(p99.Points)-1].X,
				Text: fmt.Sprintf("%g× p99 floor", cv.Factor)})
		}
		s.Figures = append(s.Figures, Plot{ID: lat.ID, SVG: template.HTML(lat.SVG())}, Plot{ID: tput.ID, SVG: template.HTML(tput.SVG())})
		t := Table{ID: id + "-table", Caption: fmt.Sprintf("Run %d (%s, %s): capacity %s tps in a closed loop; %s", cr.Run, cr.Config.Engine, Plural(cv.Streams, "stream"), FmtN(cv.Capacity), curve.KneeText(cv)),
			Head: []string{"load", "offered/s", "achieved/s", "p50 ms", "p95 ms", "p99 ms", "service p99 ms", "CPU busy %", "late", "backlog", "repeat"}}
		for _, p := range cv.Points {
			cpu := "-"
			if p.CPUPct >= 0 {
				cpu = FmtF(p.CPUPct, 0)
			}
			t.Rows = append(t.Rows, []string{FmtF(p.Fraction, 2), FmtN(p.Offered), FmtN(p.Achieved), FmtF(p.P50US/1000, 3), FmtF(p.P95US/1000, 3),
				FmtF(p.P99US/1000, 3), FmtF(p.ServiceP99/1000, 3), cpu, fmt.Sprint(p.Late), fmt.Sprint(p.Backlog), fmt.Sprint(p.Repeat)})
		}
		s.Tables = append(s.Tables, t)
		s.Notes = append(s.Notes, cv.Notes...)
	}
	return s
}

// spreadPoint is the median of f over pts at x, with their range.
func spreadPoint(x float64, pts []curve.Point, f func(curve.Point) float64) Point {
	vs := make([]float64, len(pts))
	for i, p := range pts {
		vs[i] = f(p)
	}
	return Point{X: x, Y: stats.MedianOf(pts, f), Lo: slices.Min(vs), Hi: slices.Max(vs)}
}
