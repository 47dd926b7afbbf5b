package tpch

import (
	"github.com/numalab/numalab/internal/estimate"
	"github.com/numalab/numalab/internal/planest"
	"slices"

	"github.com/numalab/numalab/internal/dop"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/result"
)

// power is a measured power cell of query q at dop taking secs, with plan
// shape (operators one per line) and cost.
func power(q, dop int, secs float64, shape string, cost float64) Cell {
	return Cell{Mode: ModePower, Query: q, DOP: dop, Streams: 1, Seconds: secs,
		Cell: &result.Cell{Total: result.TxStats{Count: 1}},
		Plan: &planest.Plan{Shape: shape, Cost: cost, CostUnit: planest.CostPostgres}}
}

func throughput(streams, dop int, qph float64, repeat int) Cell {
	return Cell{Mode: ModeThroughput, DOP: dop, Streams: streams, Repeat: repeat, QueriesPerHour: qph, Slowest: 9,
		SlowestSeconds: 3600 / qph, Cell: &result.Cell{Total: result.TxStats{Count: 1}}}
}

func TestAnalyze(t *testing.T) {
	scan := "Aggregate\n  Seq Scan"
	cells := []Cell{
		// Q1 scales to DOP 4; Q2 stops at 2 and changes its join; Q3 and
		// Q4 are on the cost line, Q5 is 5x off it.
		power(1, 1, 4, scan, 400), power(1, 2, 2, scan, 400), power(1, 4, 1, scan, 400),
		power(2, 1, 2, "Hash Join\n  Seq Scan", 200), power(2, 2, 1, "Nested Loop\n  Seq Scan", 200),
		power(2, 4, 0.95, "Nested Loop\n  Seq Scan", 200),
		power(3, 1, 1, scan, 100), power(4, 1, 3, scan, 300),
		power(5, 1, 5, "Index Scan\n  Seq Scan", 100),
	}
	for r := range 2 {
		cells = append(cells, throughput(2, 1, 100, r), throughput(2, 2, 150+float64(r), r),
			throughput(8, 1, 300, r), throughput(8, 2, 200, r), throughput(16, 1, 300, r), throughput(16, 2, 250, r))
	}
	// At 4 streams no query finished at DOP 1: 0 queries per hour, no
	// slowest query.
	cells = append(cells, Cell{Mode: ModeThroughput, DOP: 1, Streams: 4, QueriesPerHour: 0, Cell: &result.Cell{}},
		throughput(4, 2, 10, 0))
	an := Analyze(cells, nil)
	q1, q2 := an.Queries[0], an.Queries[1]
	if q1.BestDOP != 4 || q1.StopsAt != 0 || q1.Points[2].Speedup != 4 {
		t.Errorf("Q1: best %d, stops at %d, speedup at 4 %v; want 4, scaling to the end, 4x",
			q1.BestDOP, q1.StopsAt, q1.Points[2].Speedup)
	}
	if q2.BestDOP != 4 || q2.StopsAt != 2 {
		t.Errorf("Q2: best %d, stops at %d; want 4 and 2", q2.BestDOP, q2.StopsAt)
	}
	if len(an.Changes) != 1 || an.Changes[0].Query != 2 || an.Changes[0].FromDOP != 1 || an.Changes[0].DOP != 2 ||
		!slices.Equal(an.Changes[0].Removed, []string{"Hash Join"}) ||
		!slices.Equal(an.Changes[0].Added, []string{"Nested Loop"}) {
		t.Errorf("plan changes %+v, want Q2's Hash Join replaced by a Nested Loop at DOP 2", an.Changes)
	}
	if s := an.Changes[0].String(); !strings.Contains(s, "DOP 1 → 2") ||
		!strings.Contains(s, "Hash Join replaced by Nested Loop") {
		t.Errorf("change said as %q", s)
	}
	f := an.Cost
	if f == nil || f.SecondsPerUnit != 0.01 || !slices.Equal(f.Off, []int{5}) ||
		!slices.Equal(f.Common, []string{"Index Scan"}) {
		t.Fatalf("cost fit %+v: want 0.01 s per unit, Q5 off, its Index Scan the operator the line lacks", f)
	}
	if l := f.Largest(1); l[0].Query != 5 || l[0].Error != 5 {
		t.Errorf("largest error %+v, want Q5 at 5x", l)
	}
	a := an.Advice
	if a == nil || len(a.PerStreams) != 4 || a.PerStreams[0].BestQPH != 2 || !a.PerStreams[0].Clear ||
		a.PerStreams[2].BestQPH != 1 || a.Serial != 8 {
		t.Fatalf("advice %+v: want DOP 2 clearly best at 2 streams, DOP 1 from 8 streams on", a)
	}
	if four := a.PerStreams[1]; len(four.Points) != 2 || four.Points[0].QPH != 0 || four.BestQPH != 2 ||
		four.BestSlowest != 2 {
		t.Errorf("4 streams: %+v, want DOP 1 at 0 queries per hour and DOP 2 best on both counts", four)
	}
}

// TestEstimatedSpeedup sets the cost at every DOP beside the clock:
// estimated speedup is the lowest DOP's cost over this DOP's, and a
// measured speedup more than 2× either side of it, or a changed plan, is
// flagged. The literature's Q5 (0.675 of DOP 1 at DOP 2 where the cost
// promised more) and Q17 (4.3× where it promised less) are the shapes.
func TestEstimatedSpeedup(t *testing.T) {
	scan, par := "Aggregate\n  Seq Scan", "Finalize Aggregate\n  Gather\n    Partial Aggregate\n      Parallel Seq Scan"
	cells := []Cell{
		power(1, 1, 4, scan, 1000), power(1, 2, 2.2, par, 600), // est 1.67, measured 1.82: within 2×
		power(5, 1, 1, scan, 1349), power(5, 2, 1/0.675, par, 1057), // est 1.28, measured 0.675: 0.53, within
		power(6, 1, 1, scan, 1000), power(6, 2, 4, scan, 500), // est 2, measured 0.25: flagged below
		power(17, 1, 4.3, scan, 1000), power(17, 2, 1, scan, 1000), // est 1, measured 4.3: flagged above
	}
	an := Analyze(cells, nil)
	want := map[int]struct {
		est     float64
		departs bool
		changed bool
	}{1: {1000.0 / 600, false, true}, 5: {1349.0 / 1057, false, true}, 6: {2, true, false}, 17: {1, true, false}}
	for _, q := range an.Queries {
		w := want[q.Query]
		p := q.Points[1]
		if p.Cost == 0 || q.Points[0].EstSpeedup != 1 || p.EstSpeedup != w.est || p.Departs != w.departs ||
			p.PlanChanged != w.changed {
			t.Errorf("%s at DOP 2: cost %v, estimated %v (at DOP 1 %v), departs %v, plan changed %v; want estimated "+
				"%v, departs %v, changed %v",
				QueryName(q.Query), p.Cost, p.EstSpeedup, q.Points[0].EstSpeedup, p.Departs, p.PlanChanged, w.est,
				w.departs, w.changed)
		}
	}
	// DuckDB's cost (summed row estimates) does not price parallelism:
	// no estimate, nothing flagged.
	duck := []Cell{power(1, 1, 4, scan, 1000), power(1, 2, 1, scan, 1000)}
	for i := range duck {
		duck[i].Plan.CostUnit = planest.CostDuckDB
	}
	if p := Analyze(duck, nil).Queries[0].Points[1]; p.EstSpeedup != 0 || p.Departs {
		t.Errorf("DuckDB: estimated %v, departs %v; want no estimate", p.EstSpeedup, p.Departs)
	}
	var b strings.Builder
	estimate.WriteTable(&b, an.Estimates())
	for _, s := range []string{
		"Q6       2         1000          500      2.00x      0.25x      0.12  measured under half the estimate",
		"Q17      2         1000         1000      1.00x      4.30x      4.30  measured over 2x the estimate",
		"Q1       2         1000          600      1.67x      1.82x      1.09  plan changed"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("no line %q in\n%s", s, b.String())
		}
	}
}

// TestRuleInSeconds turns a threshold in time into a cost with the run's
// fitted seconds per unit: costs 100, 200, 300 taking 1, 2, 3 s fit 0.01 s
// a unit, so 0.5 s is cost 50; DOP 2 from 50, 4 from 200, 8 from 800,
// capped at 4 cores. Without a fit (fewer than 3 plan costs) a time
// gives no rule and says why; a cost needs no fit.
func TestRuleInSeconds(t *testing.T) {
	scan := "Seq Scan"
	cells := []Cell{power(1, 1, 1, scan, 100), power(2, 1, 2, scan, 200), power(3, 1, 3, scan, 300),
		power(4, 1, 0.4, scan, 40)}
	spec := &RuleSpec{Threshold: dop.Threshold{Seconds: 0.5}, CoresPerSocket: 4, Sockets: 1}
	an := Analyze(cells, spec)
	r := an.Rule
	if r == nil || r.Threshold != 50 || r.ThresholdSeconds != 0.5 || r.SecondsPerUnit != 0.01 {
		t.Fatalf("rule %+v (%s); want cost 50 from 0.5 s at 0.01 s a unit", r, an.RuleNote)
	}
	for i, want := range []int{2, 4, 4, 1} {
		if q := an.Queries[i]; q.Rule == nil || q.Rule.DOP != want {
			t.Errorf("%s (cost %v): rule %+v, want DOP %d", QueryName(q.Query), q.Cost, q.Rule, want)
		}
	}
	rungs := an.Rungs()
	if len(rungs) != 2 || rungs[0] != (Rung{DOP: 2, Cost: 50, Seconds: 0.5}) ||
		rungs[1] != (Rung{DOP: 4, Cost: 200, Seconds: 2}) {
		t.Errorf("rungs %+v; want DOP 2 from cost 50 (0.5 s), 4 from 200 (2 s), then one socket's 4 cores", rungs)
	}
	var b strings.Builder
	writeRule(&b, an)
	for _, line := range []string{"serial below cost 50, the threshold 0.5 s at the fitted 0.01 s per unit; at most 4",
		"  DOP 2 from cost 50 (0.5 s)\n  DOP 4 from cost 200 (2 s)\n"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("no %q in\n%s", line, b.String())
		}
	}
	few := Analyze(cells[:2], spec)
	if few.Rule != nil || few.Queries[0].Rule != nil || !strings.Contains(few.RuleNote, "threshold 500ms") {
		t.Errorf("two costs, no fit: rule %+v, note %q; want none, and why", few.Rule, few.RuleNote)
	}
	byCost := Analyze(cells[:2], &RuleSpec{Threshold: dop.Threshold{Cost: 150}, CoresPerSocket: 4, Sockets: 1})
	if byCost.Rule == nil || byCost.Queries[0].Rule.DOP != 1 || byCost.Queries[1].Rule.DOP != 2 {
		t.Errorf("threshold cost 150: %+v; want Q1 serial, Q2 at DOP 2", byCost.Queries)
	}
}
