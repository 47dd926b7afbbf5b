package tpch

import (
	"encoding/json"
	"github.com/numalab/numalab/internal/conclusion"
	"slices"
	"testing"

	"github.com/numalab/numalab/internal/dop"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/runconfig"
)

// The report shows this package's section in these tests: only it is
// registered in this test binary (internal/workloads imports tpch).
func init() { report.Register(Report) }

// itemOf is v stored as an item of kind.
func itemOf(kind string, v any) result.Item {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return result.Item{Kind: kind, Body: b}
}

// TestTPCHEstimateAndLadder: the estimate table has a row per DOP above
// the lowest with a flag where measured and estimated part, and the
// ladder table gives each DOP's cost in both units.
func TestTPCHEstimateAndLadder(t *testing.T) {
	a := Analysis{
		Queries: []QueryScaling{{Query: 5, Points: []DOPPoint{
			{DOP: 1, Speedup: 1, Cost: 1349, EstSpeedup: 1},
			{DOP: 2, Speedup: 0.4, Cost: 1057, EstSpeedup: 1349.0 / 1057, Departs: true, PlanChanged: true},
		}}},
		Rule: &dop.Rule{Threshold: 50, ThresholdSeconds: 0.5, SecondsPerUnit: 0.01, CoresPerSocket: 8, Sockets: 1},
	}
	est, ok := estimateTable(a)
	want := []string{"Q5", "2", "1,349 → 1,057", "1.28×", "0.40×", "0.31",
		"measured under half the estimate, plan changed"}
	if !ok || len(est.Rows) != 1 || !slices.Equal(est.Rows[0], want) {
		t.Errorf("estimate rows %q, want %q", est.Rows, want)
	}
	lt, ok := ladderTable(a)
	if !ok || len(lt.Rows) != 3 || !slices.Equal(lt.Rows[0], []string{"2", "50.0", "0.500"}) ||
		!slices.Equal(lt.Rows[2], []string{"8", "800", "8.000"}) {
		t.Errorf("ladder rows %q; want DOP 2 from cost 50 (0.5 s) to 8 from 800 (8 s)", lt.Rows)
	}
	a.Rule = nil
	if _, ok := ladderTable(a); ok {
		t.Error("a ladder without a rule")
	}
}

// tpchRun is a stored tpch run on engine at SF 0.1 whose Q1 took secs at
// DOP 1, one power cell a repeat.
func tpchRun(t *testing.T, id int64, engine, host string, secs ...float64) *result.Run {
	t.Helper()
	conf, _ := json.Marshal(RunConfig{Common: runconfig.Common{Engine: engine, Seed: 1}, SF: 0.1, DOP: []int{1}})
	run := &result.Run{ID: id, Kind: RunKind, Host: host, Status: result.StatusComplete, Config: conf}
	for i, s := range secs {
		c := Cell{Mode: ModePower, Query: 1, DOP: 1, Streams: 1, Repeat: i, Seconds: s,
			Cell: &result.Cell{Total: result.TxStats{Count: 1}}}
		run.Results = append(run.Results, itemOf(string(KindCell), c))
	}
	return run
}

// TestRowColumn: a row engine's and a column engine's tpch runs on one
// host at one SF go in one report, and each query at each DOP gets the
// row engine's time over the column engine's with its interval; runs on
// different hosts are not compared.
func TestRowColumn(t *testing.T) {
	pg := tpchRun(t, 1, "postgres", "h", 4, 4.2, 3.9, 4.1, 4.05)
	duck := tpchRun(t, 2, "duckdb", "h", 1, 1.05, 0.98, 1.02, 0.99)
	r, err := report.Build([]*result.Run{pg, duck}, conclusion.Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if len(report.SectionOf[*Section](r).RowColumn) != 1 {
		t.Fatalf("row/column %+v, want one pair", report.SectionOf[*Section](r).RowColumn)
	}
	rc := report.SectionOf[*Section](r).RowColumn[0]
	p := rc.Points[0]
	if rc.RowEngine != "postgres" || rc.ColumnEngine != "duckdb" || len(rc.Points) != 1 || p.Query != 1 ||
		p.RowSeconds != 4.05 || p.ColumnSeconds != 1 ||
		!p.Ratio.HasCI || p.Ratio.Lo > 4 || p.Ratio.Hi < 4 || p.Ratio.Lo < 3.5 {
		t.Errorf("row/column %+v; want postgres over duckdb, Q1 about 4× with an interval around it", rc)
	}
	tb := rowColumnTable(rc)
	if len(tb.Rows) != 1 || tb.Rows[0][0] != "Q1" || tb.Rows[0][6] != "5+5" {
		t.Errorf("table rows %q", tb.Rows)
	}
	other := tpchRun(t, 3, "duckdb", "elsewhere", 1, 1, 1, 1)
	if r, err := report.Build([]*result.Run{pg, other}, conclusion.Inputs{}); err != nil ||
		len(report.SectionOf[*Section](r).RowColumn) != 0 {
		t.Errorf("runs on two hosts: %+v, %v; want no comparison", report.SectionOf[*Section](r).RowColumn, err)
	}
}
