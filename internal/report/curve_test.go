package report_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/curve"
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

// curvesOf is the report's load curves; none when it has no curve section.
func curvesOf(r *report.Report) []tpcc.CurveRun {
	if s := report.SectionOf[*tpcc.CurveSection](r); s != nil {
		return s.Runs
	}
	return nil
}

// monitorOf is the report's monitoring run; nil when it has none.
func monitorOf(r *report.Report) *tpcc.MonitorRun {
	if s := report.SectionOf[*tpcc.MonitorSection](r); s != nil {
		return s.Run
	}
	return nil
}

// curveRun is a curve run on engine: capacity 1000 tps, p99 rising past
// 0.8 of it.
func curveRun(id int64, engine string, storeCurve bool) *result.Run {
	cfg := tpcc.DefaultRunConfig()
	cfg.Engine, cfg.Curve, cfg.CurveAt, cfg.KneeFactor = engine, true, []float64{0.1, 0.5, 0.8, 1}, 2
	conf, _ := json.Marshal(cfg)
	run := &result.Run{ID: id, Kind: curve.RunKind, Host: "h", Status: result.StatusComplete, Config: conf}
	cells := []*result.Cell{{TPS: 1000, Streams: 1}}
	for i, q := range []float64{100, 110, 400, 5000} {
		rate := cfg.CurveAt[i] * 1000
		cells = append(cells,
			&result.Cell{Index: i + 1, TPS: rate, Streams: 1, Total: result.TxStats{Count: 10, P50US: q / 2, P95US: q, P99US: q},
				Pace: &result.Pace{Mode: "rate", Rate: rate}})
	}
	for _, c := range cells {
		run.Results = append(run.Results, report.Item(string(result.KindCell), *c))
	}
	if storeCurve {
		run.Results = append(run.Results, report.Item(string(curve.KindCurve), curve.Analyze(cells, cfg.CurveAt, 2)))
	}
	return run
}

func TestCurveSection(t *testing.T) {
	r, err := report.Assessed([]*result.Run{curveRun(3, "sqlite", true), curveRun(4, "postgres", false)})
	if err != nil {
		t.Fatal(err)
	}
	if len(curvesOf(r)) != 2 || !curvesOf(r)[1].Curve.Knee.Found || curvesOf(r)[1].Curve.Knee.Above != 800 ||
		curvesOf(r)[0].Curve.Knee != curvesOf(r)[1].Curve.Knee {
		t.Fatalf("curves %+v", curvesOf(r))
	}
	var b bytes.Buffer
	if err := report.WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	// The knee is marked on the latency chart (its estimate and the
	// bracket), and the loads' numbers are folded under a disclosure.
	for _, want := range []string{`id="curve-3-latency-svg"`, `id="curve-4-tps-svg"`,
		"Throughput and latency against offered load", "between 500/s and 800/s", "2× p99 floor",
		"knee ≈ 639/s (500–800/s)", `<details id="curve-3-table">`} {
		if !strings.Contains(html, want) {
			t.Errorf("the HTML lacks %q", want)
		}
	}
	var text, csv bytes.Buffer
	if err := report.WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "Load curve (run 4, tpcc-ro on postgres)") ||
		!strings.Contains(text.String(), "between 500/s and 800/s") {
		t.Errorf("text report:\n%s", text.String())
	}
	if err := report.WriteCSV(&csv, r); err != nil {
		t.Fatal(err)
	}
	if f := report.FindingWith(r,
		"Load curve of tpcc-ro on postgres: p99 left 2× its floor at about 639 calls/s"); f == nil ||
		f.Anchor != "curve-4-latency" {
		t.Errorf("knee finding %v: want the knee, linked to its chart", f)
	}
	for _, want := range []string{"curve,3,tpcc-ro on sqlite,offered_per_s,800,p99_latency,400,us",
		"curve,4,tpcc-ro on postgres,knee_factor,2,knee_offered,638.9", ",calls/s,500,800,"} {
		if !strings.Contains(csv.String(), want) {
			t.Errorf("CSV lacks %q", want)
		}
	}
	if !strings.Contains(csv.String(), "curve,3,tpcc-ro on sqlite,offered_per_s,800,p99_latency,400,us") {
		t.Errorf("CSV lacks the curve's rows:\n%s", csv.String())
	}
	if _, err := report.Assessed([]*result.Run{curveRun(3, "sqlite", true), curveRun(5, "sqlite", true)}); err == nil {
		t.Error("two curve runs on one engine accepted")
	}
}

func TestMonitorSectionPaced(t *testing.T) {
	cfg := tpcc.DefaultRunConfig()
	cfg.Engine, cfg.Monitor, cfg.MonitorLoad = "postgres", []string{"log_all"}, 0.5
	conf, _ := json.Marshal(cfg)
	run := &result.Run{ID: 8, Kind: monitor.RunKind, Host: "h", Status: result.StatusComplete, Config: conf}
	for i := range 5 {
		for _, paced := range []bool{false, true} {
			for _, on := range []bool{false, true} {
				c := monitor.Cell{Slot: monitor.Slot{Facility: "log_all", On: on, Repeat: i, Paced: paced},
					Cell: result.Cell{Streams: 1, TPS: 1000, Total: result.TxStats{Count: 1000, P50US: 100, P99US: 200}}}
				if paced {
					c.Cell.TPS, c.Cell.Pace = 500, &result.Pace{Rate: 500}
					if on {
						c.Cell.Total.P99US = 300 + float64(i)
					}
				}
				run.Results = append(run.Results, report.Item(string(monitor.KindCell), c))
			}
		}
	}
	r, err := report.Assessed([]*result.Run{run})
	if err != nil {
		t.Fatal(err)
	}
	if monitorOf(r).Paced == nil || monitorOf(r).Paced.Overheads[0].P99Added.Estimate < 100 {
		t.Fatalf("paced analysis %+v", monitorOf(r).Paced)
	}
	var b bytes.Buffer
	if err := report.WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `id="monitor-paced"`) || !strings.Contains(b.String(), "0.50 of capacity") {
		t.Error("the HTML lacks the paced table")
	}
}
