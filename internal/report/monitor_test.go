package report_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

// TestMonitorSection: a monitoring run's section shows each facility's
// cost from the stored analysis, or, for a run that stopped before
// storing it, from its cells.
func TestMonitorSection(t *testing.T) {
	cfg := tpcc.DefaultRunConfig()
	cfg.Engine, cfg.Repeat, cfg.Duration, cfg.Monitor = "postgres", 5, 2*time.Second, []string{"log_all"}
	conf, _ := json.Marshal(cfg)
	var cells []monitor.Cell
	for i, x := range []float64{1000, 1010, 1020, 1030, 1040} {
		for _, on := range []bool{false, true} {
			tps := x
			if on {
				tps = 0.8 * x
			}
			cells = append(cells, monitor.Cell{Slot: monitor.Slot{Facility: "log_all", On: on, Repeat: i},
				Cell: result.Cell{Streams: 1, TPS: tps, Total: result.TxStats{Count: int64(tps)}}})
		}
	}
	for _, stored := range []bool{true, false} {
		run := &result.Run{ID: 7, Kind: monitor.RunKind, Host: "h", Status: result.StatusComplete, Config: conf}
		for _, c := range cells {
			run.Results = append(run.Results, report.Item(string(monitor.KindCell), c))
		}
		if stored {
			run.Results = append(run.Results, report.Item(string(monitor.KindAnalysis), monitor.Analyze(cells)))
		}
		r, err := report.Assessed([]*result.Run{run})
		if err != nil {
			t.Fatal(err)
		}
		if monitorOf(r) == nil || len(monitorOf(r).Analysis.Overheads) != 1 ||
			monitorOf(r).Analysis.Overheads[0].Verdict != monitor.Costs {
			t.Fatalf("stored analysis %v: monitor section %+v", stored, monitorOf(r))
		}
		for _, n := range r.Notes {
			if strings.Contains(n, "does not chart") {
				t.Errorf("note %q: the report charts monitoring runs", n)
			}
		}
		var b bytes.Buffer
		if err := report.WriteHTML(&b, r); err != nil {
			t.Fatal(err)
		}
		html := b.String()
		for _, want := range []string{`id="monitor-cost"`, "What monitoring costs", "<td>log_all</td>", "costs 20.0% [",
			"<td>5&#43;5</td>", "docs/monitoring.md"} {
			if !strings.Contains(html, want) {
				t.Errorf("stored analysis %v: the HTML lacks %q", stored, want)
			}
		}
	}
}
