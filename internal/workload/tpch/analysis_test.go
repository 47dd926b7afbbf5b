package tpch

import (
	"slices"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/result"
)

// power is a measured power cell of query q at dop taking secs, with plan
// shape (operators one per line) and cost.
func power(q, dop int, secs float64, shape string, cost float64) Cell {
	return Cell{Mode: ModePower, Query: q, DOP: dop, Streams: 1, Seconds: secs, Cell: &result.Cell{Total: result.TxStats{Count: 1}},
		Plan: &Plan{Shape: shape, Cost: cost, CostUnit: CostPostgres}}
}

func throughput(streams, dop int, qph float64, repeat int) Cell {
	return Cell{Mode: ModeThroughput, DOP: dop, Streams: streams, Repeat: repeat, QueriesPerHour: qph, Slowest: 9, SlowestSeconds: 3600 / qph,
		Cell: &result.Cell{Total: result.TxStats{Count: 1}}}
}

func TestAnalyze(t *testing.T) {
	scan := "Aggregate\n  Seq Scan"
	cells := []Cell{
		// Q1 scales to DOP 4; Q2 stops at 2 and changes its join; Q3 and
		// Q4 are on the cost line, Q5 is 5x off it.
		power(1, 1, 4, scan, 400), power(1, 2, 2, scan, 400), power(1, 4, 1, scan, 400),
		power(2, 1, 2, "Hash Join\n  Seq Scan", 200), power(2, 2, 1, "Nested Loop\n  Seq Scan", 200), power(2, 4, 0.95, "Nested Loop\n  Seq Scan", 200),
		power(3, 1, 1, scan, 100), power(4, 1, 3, scan, 300),
		power(5, 1, 5, "Index Scan\n  Seq Scan", 100),
	}
	for r := range 2 {
		cells = append(cells, throughput(2, 1, 100, r), throughput(2, 2, 150+float64(r), r),
			throughput(8, 1, 300, r), throughput(8, 2, 200, r), throughput(16, 1, 300, r), throughput(16, 2, 250, r))
	}
	// At 4 streams no query finished at DOP 1: 0 queries per hour, no
	// slowest query.
	cells = append(cells, Cell{Mode: ModeThroughput, DOP: 1, Streams: 4, QueriesPerHour: 0, Cell: &result.Cell{}}, throughput(4, 2, 10, 0))
	an := Analyze(cells, nil)
	q1, q2 := an.Queries[0], an.Queries[1]
	if q1.BestDOP != 4 || q1.StopsAt != 0 || q1.Points[2].Speedup != 4 {
		t.Errorf("Q1: best %d, stops at %d, speedup at 4 %v; want 4, scaling to the end, 4x", q1.BestDOP, q1.StopsAt, q1.Points[2].Speedup)
	}
	if q2.BestDOP != 4 || q2.StopsAt != 2 {
		t.Errorf("Q2: best %d, stops at %d; want 4 and 2", q2.BestDOP, q2.StopsAt)
	}
	if len(an.Changes) != 1 || an.Changes[0].Query != 2 || an.Changes[0].FromDOP != 1 || an.Changes[0].DOP != 2 ||
		!slices.Equal(an.Changes[0].Removed, []string{"Hash Join"}) || !slices.Equal(an.Changes[0].Added, []string{"Nested Loop"}) {
		t.Errorf("plan changes %+v, want Q2's Hash Join replaced by a Nested Loop at DOP 2", an.Changes)
	}
	if s := an.Changes[0].String(); !strings.Contains(s, "DOP 1 → 2") || !strings.Contains(s, "Hash Join replaced by Nested Loop") {
		t.Errorf("change said as %q", s)
	}
	f := an.Cost
	if f == nil || f.SecondsPerUnit != 0.01 || !slices.Equal(f.Off, []int{5}) || !slices.Equal(f.Common, []string{"Index Scan"}) {
		t.Fatalf("cost fit %+v: want 0.01 s per unit, Q5 off, its Index Scan the operator the line lacks", f)
	}
	if l := f.Largest(1); l[0].Query != 5 || l[0].Error != 5 {
		t.Errorf("largest error %+v, want Q5 at 5x", l)
	}
	a := an.Advice
	if a == nil || len(a.PerStreams) != 4 || a.PerStreams[0].BestQPH != 2 || !a.PerStreams[0].Clear || a.PerStreams[2].BestQPH != 1 || a.Serial != 8 {
		t.Fatalf("advice %+v: want DOP 2 clearly best at 2 streams, DOP 1 from 8 streams on", a)
	}
	if four := a.PerStreams[1]; len(four.Points) != 2 || four.Points[0].QPH != 0 || four.BestQPH != 2 || four.BestSlowest != 2 {
		t.Errorf("4 streams: %+v, want DOP 1 at 0 queries per hour and DOP 2 best on both counts", four)
	}
}

func TestChanged(t *testing.T) {
	rm, ad := Changed(Plan{Shape: "Gather\n  Hash Join\n    Seq Scan\n    Seq Scan"}, Plan{Shape: "Gather\n  Merge Join\n    Seq Scan\n    Index Scan"})
	if !slices.Equal(rm, []string{"Hash Join", "Seq Scan"}) || !slices.Equal(ad, []string{"Index Scan", "Merge Join"}) {
		t.Errorf("removed %q, added %q", rm, ad)
	}
}
