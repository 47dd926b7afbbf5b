package report

import (
	"slices"
	"testing"

	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/workload/tpch"
)

// TestTPCHEstimateAndLadder: the estimate table has a row per DOP above
// the lowest with a flag where measured and estimated part, and the
// ladder table gives each DOP's cost in both units.
func TestTPCHEstimateAndLadder(t *testing.T) {
	a := tpch.Analysis{
		Queries: []tpch.QueryScaling{{Query: 5, Points: []tpch.DOPPoint{
			{DOP: 1, Speedup: 1, Cost: 1349, EstSpeedup: 1},
			{DOP: 2, Speedup: 0.4, Cost: 1057, EstSpeedup: 1349.0 / 1057, Departs: true, PlanChanged: true},
		}}},
		Rule: &model.DOPRule{Threshold: 50, ThresholdSeconds: 0.5, SecondsPerUnit: 0.01, CoresPerSocket: 8, Sockets: 1},
	}
	est, ok := estimateTable(a)
	want := []string{"Q5", "2", "1,349 → 1,057", "1.28×", "0.40×", "0.31", "measured under half the estimate, plan changed"}
	if !ok || len(est.Rows) != 1 || !slices.Equal(est.Rows[0], want) {
		t.Errorf("estimate rows %q, want %q", est.Rows, want)
	}
	lt, ok := ladderTable(a)
	if !ok || len(lt.Rows) != 3 || !slices.Equal(lt.Rows[0], []string{"2", "50.0", "0.500"}) || !slices.Equal(lt.Rows[2], []string{"8", "800", "8.000"}) {
		t.Errorf("ladder rows %q; want DOP 2 from cost 50 (0.5 s) to 8 from 800 (8 s)", lt.Rows)
	}
	a.Rule = nil
	if _, ok := ladderTable(a); ok {
		t.Error("a ladder without a rule")
	}
}
