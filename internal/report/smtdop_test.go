package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/result"
)

// placedRun is a reporting run of P1 placed on sel at DOP 1, 2 and 4,
// repeats times, each cell finishing queries queries in a 1 s window at
// qph[dop] (+ the repeat's index) queries per hour.
func placedRun(m *result.Topology, sel string, repeats int, queries int64, qph map[int]float64) *result.Run {
	t0 := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	r := &result.Run{Kind: result.RunQueries, Command: "numalab run report --queries P1 --placement " + sel,
		Version: "v0.1.0-test", Host: "lab2s", Machine: m, Started: t0, Finished: t0.Add(time.Minute),
		Status: result.StatusComplete}
	r.Config = json.RawMessage(fmt.Sprintf(`{"engine":"duckdb","rows":1000000,"placement":%q}`, sel))
	for k := range repeats {
		for _, dop := range []int{1, 2, 4} {
			c := &result.Cell{Engine: "duckdb", Workload: "transtats", Streams: 1, DOP: dop, Measured: time.Second,
				Total: result.TxStats{Name: "P1", Count: queries, MeanUS: 1e6 / float64(queries)}}
			qc := result.QueryCell{Query: "P1", Cell: c, QueriesPerHour: qph[dop] + float64(k)}
			if dop > 1 {
				qc.Workers = &result.WorkerCPUs{Oversubscribed: sel == "smt=off" && dop == 4}
			}
			r.Results = append(r.Results, item("transtats.QueryCell", qc))
		}
	}
	return r
}

// TestPlacedDOP: eval's SMT × DOP runs (report runs placed smt=on and
// smt=off) are shown beside its unplaced DOP sweep, in a section of their
// own, where the report used to refuse them as two runs of one kind; the
// winner is named only when each cell finished enough queries and the
// repeats tell the best from the next.
func TestPlacedDOP(t *testing.T) {
	runs := syntheticRuns()
	m := runs[0].Machine
	on := map[int]float64{1: 1000, 2: 1900, 4: 2600}
	off := map[int]float64{1: 1000, 2: 1950, 4: 1800}
	for _, c := range []struct {
		name             string
		repeats          int
		queries          int64
		winner, contains string
	}{
		{"enough", 4, 20, "smt=on DOP 4",
			"best smt=on DOP 4: 2,602 queries/h against 1,952 for the next best, smt=off DOP 2 (U test p=0.029, 4+4 repeats)"},
		{"one query a cell", 4, 1, "",
			"cannot tell: 6 of 6 cells finished fewer than 5 queries in their window (smt=on DOP 1: 1 in 1.0 s;"},
		{"one repeat", 1, 20, "", "cannot tell: the best, smt=on DOP 4 at 2,600 queries/h, is not told apart from " +
			"the next, smt=off DOP 2 at 1,950: cannot tell (n=1 and n=1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			all := append(append([]*result.Run{}, runs...), placedRun(m, "smt=on", c.repeats, c.queries, on),
				placedRun(m, "smt=off", c.repeats, c.queries, off))
			r := build(t, stored(t, all))
			pd := r.PlacedDOP
			if r.Reporting == nil || pd == nil {
				t.Fatalf("reporting %v, placement x DOP %v: want both", r.Reporting != nil, pd)
			}
			if len(pd.Runs) != 2 || slices.Contains(pd.Runs, r.Reporting.Run) {
				t.Errorf("the reporting section shows run %d, the placed section runs %v: want the unplaced run there "+
					"and the two placed ones here", r.Reporting.Run, pd.Runs)
			}
			if pd.Winner != c.winner || !strings.Contains(pd.Verdict, c.contains) {
				t.Errorf("winner %q, verdict %q\nwant winner %q and a verdict with %q", pd.Winner, pd.Verdict, c.winner, c.contains)
			}
			if len(pd.Points) != 6 || !pd.Points[5].Oversubscribed || pd.Points[5].Queries != c.queries {
				t.Errorf("points %+v: want 6, smt=off DOP 4 oversubscribed, %d queries each", pd.Points, c.queries)
			}
			html := renderHTML(t, stored(t, all))
			for _, want := range []string{`id="` + AnchorPlacedDOP + `"`, "SMT × DOP", `href="#` + AnchorPlacedDOP + `"`} {
				if !strings.Contains(html, want) {
					t.Errorf("HTML lacks %q", want)
				}
			}
		})
	}
	// Two unplaced reporting runs are still two of one kind.
	two := append(append([]*result.Run{}, runs...), placedRun(m, "", 1, 20, on))
	if _, err := assessed(stored(t, two)); err == nil || !strings.Contains(err.Error(), "are both report") {
		t.Errorf("two unplaced report runs: %v, want refused", err)
	}
}

// TestQueryFindingsTooFew: a DOP sweep whose cells finished fewer than
// MinQueries queries names no best DOP, however its repeats compare.
func TestQueryFindingsTooFew(t *testing.T) {
	pt := func(dop int, qph float64, queries int64) QueryPoint {
		return QueryPoint{Streams: 1, DOP: dop, Repeats: 4, QPH: qph, Speedup: qph / 1000, Queries: queries,
			QPHRepeats: []float64{qph, qph + 1, qph + 2, qph + 3}}
	}
	for _, c := range []struct {
		queries int64
		want    string
	}{
		{1, "but a cell finished only 1 queries (fewer than 5), so whether parallelism helped is not known"},
		{20, "P1 on duckdb: DOP 2 ran 1.80× DOP 1's queries per hour, one stream (ideal 2×; U test p="},
	} {
		q := &Reporting{Engine: "duckdb", ByStreams: []QuerySeries{
			{Query: "P1", Streams: 1, Points: []QueryPoint{pt(1, 1000, c.queries), pt(2, 1800, c.queries)}}}}
		var got []string
		add := func(_, format string, a ...any) { got = append(got, fmt.Sprintf(format, a...)) }
		queryFindings(q, add, add)
		if len(got) != 1 || !strings.Contains(got[0], c.want) {
			t.Errorf("%d queries a cell: findings %q, want one with %q", c.queries, got, c.want)
		}
	}
}
