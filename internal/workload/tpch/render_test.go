package tpch

import (
	"bytes"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/dop"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/runconfig"
	"github.com/numalab/numalab/internal/sweep"
)

// TestWriteAnalysis prints a hand-made analysis: every section, a DOP the
// engine did not honour, a query that stops scaling, one repeat and a
// clear best, and the storage advice in the cost section.
func TestWriteAnalysis(t *testing.T) {
	an := Analysis{
		Queries: []QueryScaling{
			{Query: 1, Points: []DOPPoint{{DOP: 1, Speedup: 1}, {DOP: 2, Speedup: 1.8, Used: 1}}, BestDOP: 2, StopsAt: 2,
				Cost: 1234, Rule: &dop.Advice{DOP: 2}},
			{Query: 6, Points: []DOPPoint{{DOP: 1, Speedup: 1}}, BestDOP: 1},
		},
		Changes: []PlanChange{{Query: 1, FromDOP: 1, DOP: 2, Added: []string{"Gather"}}},
		Cost: &CostFit{Unit: "cost", DOP: 1, SecondsPerUnit: 0.0001,
			Points: []CostPoint{{Query: 1, Cost: 1234, Seconds: 0.5, Error: 4},
				{Query: 6, Cost: 10, Seconds: 0.001, Error: 1}}, Off: []int{1}},
		Advice: &DOPAdvice{PerStreams: []StreamsAdvice{
			{Streams: 1, Points: []Throughput{{DOP: 1, QPH: 100, QPHMin: 100, QPHMax: 100, Slowest: 0.5, SlowestQuery: 1,
				Repeats: 1}}, BestQPH: 1, BestSlowest: 1},
			{Streams: 2, Points: []Throughput{{DOP: 2, QPH: 300, QPHMin: 290, QPHMax: 310, Slowest: 0.4, SlowestQuery: 6,
				Repeats: 3}}, BestQPH: 2, BestSlowest: 2, Clear: true},
		}, Serial: 4},
	}
	var b bytes.Buffer
	WriteAnalysis(&b, an, []string{"random_page_cost 4 against a measured 1.1"})
	want := `
Speedup against DOP (TPC-H-derived, not audited), median over repeats:
query speedup at each DOP                      best DOP   stops at   rule DOP cost
Q1    1:1.00x 2:1.80x(ran 1)                          2          2          2 1234
Q6    1:1.00x                                         1          -          - 0

Plan changes between consecutive DOPs: 1
  Q1: DOP 1 → 2: nothing replaced by Gather

Cost model against the clock at DOP 1: 0.0001 s per unit of cost (median ratio)
  largest error: Q1: cost 1234, 0.5000 s, 4.00x the fitted time
  largest error: Q6: cost 10, 0.0010 s, 1.00x the fitted time
  more than 2x off the line: Q1; operators they all have: none
  random_page_cost 4 against a measured 1.1

Server-wide DOP from the throughput test (queries per hour, all streams; median, range over repeats):
  1 stream: DOP 1: 100 [100–100], slowest 0.500 s (Q1)
    most queries per hour at DOP 1 (one repeat: no spread measured, use --repeats 3 for one); shortest slowest query at DOP 1
  2 streams: DOP 2: 300 [290–310], slowest 0.400 s (Q6)
    most queries per hour at DOP 2 (clear of the others' ranges over the repeats); shortest slowest query at DOP 2
  with 4 or more concurrent streams, DOP 1 gives the most queries per hour
`
	if b.String() != want {
		t.Errorf("WriteAnalysis printed\n%s\nwant\n%s", b.String(), want)
	}
	h := Headline(RunConfig{Common: runconfig.Common{Engine: "duckdb"}, SF: 0.01}, an)
	if want := "duckdb SF 0.01: 2 queries; 1 of 1 fastest above DOP 1; 1 stream: DOP 1 best for queries/h; 2 " +
		"streams: DOP 2 best for queries/h"; h != want {
		t.Errorf("Headline = %q, want %q", h, want)
	}
}

// TestNothingFinished: a throughput test in whose windows no query
// finished chooses no DOP and claims nothing about DOP 1; a power cell
// timed by EXPLAIN ANALYZE says so and shows no rows.
func TestNothingFinished(t *testing.T) {
	none := func(dop int) Cell {
		return Cell{Mode: ModeThroughput, DOP: dop, Streams: 2, Cell: &result.Cell{}}
	}
	an := Analyze([]Cell{none(1), none(2)}, nil)
	if a := an.Advice; a == nil || len(a.PerStreams) != 1 || a.PerStreams[0].BestQPH != 0 ||
		a.PerStreams[0].BestSlowest != 0 || a.NeverSerial() || a.Serial != 0 {
		t.Fatalf("advice %+v: want no DOP chosen at 2 streams, nothing measured", an.Advice)
	}
	// DOP 1 best at 8 streams, nothing finished at 16: DOP 1 from 8 on.
	at16 := func(dop int) Cell { c := none(dop); c.Streams = 16; return c }
	mixed := Analyze([]Cell{throughput(8, 1, 300, 0), throughput(8, 2, 200, 0), at16(1), at16(2)}, nil)
	if a := mixed.Advice; a.Serial != 8 || a.NeverSerial() {
		t.Errorf("DOP 1 best at 8 streams, none finished at 16: serial from %d, never serial %v; want 8, false",
			a.Serial, a.NeverSerial())
	}
	var b bytes.Buffer
	writeAdvice(&b, an.Advice)
	want := `
Server-wide DOP from the throughput test (queries per hour, all streams; median, range over repeats):
  2 streams: DOP 1: no query finished in the window; DOP 2: no query finished in the window
    nothing to choose by: at every DOP the median repeat finished no query in its window (lengthen --duration, or leave the longest queries out with --query)
`
	if b.String() != want {
		t.Errorf("writeAdvice printed\n%s\nwant\n%s", b.String(), want)
	}
	if h := Headline(RunConfig{Common: runconfig.Common{Engine: "postgres"}, SF: 0.1}, an); !strings.HasSuffix(h,
		"2 streams: no query finished in a median window") {
		t.Errorf("Headline = %q", h)
	}
	slow := power(17, 1, 44.7723, "Aggregate", 194645)
	slow.TimedByExplain, slow.Cell = true, &result.Cell{}
	an = Analyze([]Cell{slow, power(17, 2, 40, "Aggregate", 194645)}, nil)
	b.Reset()
	WriteAnalysis(&b, an, nil)
	if q := an.Queries; len(q) != 1 || !q[0].Points[0].Explained || q[0].Points[1].Explained ||
		!strings.Contains(b.String(), "1:1.00x(explain) 2:1.12x ") {
		t.Errorf("a query timed by EXPLAIN at DOP 1: %+v, printed\n%s", an.Queries, b.String())
	}
	b.Reset()
	WriteRow(&b, sweep.Cell{DOP: 1},
		&Cell{Mode: ModePower, Query: 17, Seconds: 44.7723, TimedByExplain: true, Cell: &result.Cell{}})
	if f := strings.Fields(b.String()); len(f) != 13 || f[6] != "44.7723" || f[7] != "(explain)" || f[8] != "-" {
		t.Errorf("row timed by EXPLAIN: %q, want its seconds marked (explain) and no rows", b.String())
	}
}
