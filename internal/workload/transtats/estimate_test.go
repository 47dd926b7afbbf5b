package transtats

import (
	"runtime"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/estimate"
	"github.com/numalab/numalab/internal/planest"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/runconfig"
)

func queryCell(q string, streams, dop int, meanUS, cost float64, unit, plan string) *result.QueryCell {
	return &result.QueryCell{Query: q, Cost: cost, CostUnit: unit, PlanBefore: plan,
		Cell: &result.Cell{Streams: streams, DOP: dop, Total: result.TxStats{Count: 10, MeanUS: meanUS}}}
}

// TestEstimates: per query and streams, the lowest DOP's cost over each
// higher DOP's against the ratio of the median mean times; flagged
// beyond 2× and where the plan changed; paced cells, DuckDB's stand-in
// cost and cells with no query left out.
func TestEstimates(t *testing.T) {
	pg := planest.CostPostgres
	seq, par := "Seq Scan on t", "Gather\n  Workers Planned: 1\n  Parallel Seq Scan on t"
	paced := queryCell(P2, 1, 2, 9e9, 500, pg, par)
	paced.Cell.Pace = &result.Pace{Mode: "rate"}
	empty := queryCell(P1, 1, 2, 0, 500, pg, seq)
	empty.Cell.Total.Count = 0
	cells := []*result.QueryCell{
		queryCell(P2, 1, 1, 100, 1000, pg, seq), queryCell(P2, 1, 2, 40, 500, pg, par),
		queryCell(P2, 1, 1, 110, 1000, pg, seq), queryCell(P2, 1, 2, 60, 500, pg, par),
		queryCell(P2, 2, 1, 100, 1000, pg, seq), queryCell(P2, 2, 2, 200, 1000, pg, seq), paced,
		queryCell(P1, 1, 1, 10, 800, pg, seq), empty,
		queryCell("P3", 1, 1, 10, 800, planest.CostDuckDB, seq), queryCell("P3", 1, 2, 20, 800, planest.CostDuckDB, seq),
	}
	rows := Estimates(cells)
	want := []estimate.Row{
		{Query: P2, Streams: 1, DOP: 2, BaseCost: 1000, Cost: 500, Estimated: 2, Measured: 105.0 / 50, PlanChanged: true},
		{Query: P2, Streams: 2, DOP: 2, BaseCost: 1000, Cost: 1000, Estimated: 1, Measured: 0.5},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v; want %+v", rows, want)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d: %+v; want %+v", i, rows[i], want[i])
		}
	}
	if NoEstimate("postgres", []int{1, 2}) != "" || NoEstimate("duckdb", []int{1}) != "" ||
		NoEstimate("duckdb", []int{1, 2}) == "" {
		t.Error("NoEstimate: want a reason on DuckDB over two DOPs alone")
	}
}

// TestSweepPostgresCost runs P2 at DOP 1 and 2 on PostgreSQL: each cell
// stores its plan's cost in PostgreSQL's unit, and the estimate sets the
// two DOPs' costs beside the measured speedup.
func TestSweepPostgresCost(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("DOP 2 needs 2 CPUs")
	}
	cfg := RunConfig{Common: runconfig.Common{Engine: "postgres", Duration: time.Second, Warmup: 200 * time.Millisecond,
		Seed: 1, Repeat: 1},
		Rows: 20000, Rate: DefaultRate, Streams: []int{1}, DOP: []int{1, 2}, Queries: []string{P2}, DataNode: -1}
	out, _ := runSweep(t, cfg, NewSweep(cfg, pg.Server(t).DSN(), -1))
	if len(out) != 2 {
		t.Fatalf("%d cells", len(out))
	}
	for _, qc := range out {
		if qc.Cost <= 0 || qc.CostUnit != planest.CostPostgres {
			t.Errorf("DOP %d: cost %v %q", qc.Cell.DOP, qc.Cost, qc.CostUnit)
		}
	}
	rows := Estimates(out)
	if len(rows) != 1 || rows[0].DOP != 2 || rows[0].BaseCost != out[0].Cost || rows[0].Cost != out[1].Cost ||
		rows[0].Estimated != out[0].Cost/out[1].Cost {
		t.Errorf("estimates %+v from costs %v, %v", rows, out[0].Cost, out[1].Cost)
	}
}
