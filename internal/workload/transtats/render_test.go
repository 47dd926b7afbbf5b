package transtats

import (
	"bytes"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/runconfig"
	"github.com/numalab/numalab/internal/sweep"
)

// TestHeadline: each query's best point by its median over repeats,
// its speedup that median over DOP 1's, as the report has them.
func TestHeadline(t *testing.T) {
	qc := func(q string, dop int, qph float64) *result.QueryCell {
		return &result.QueryCell{Query: q, Cell: &result.Cell{Streams: 1, DOP: dop}, QueriesPerHour: qph}
	}
	cells := []*result.QueryCell{qc("P1", 1, 1000), qc("P1", 2, 2000), qc("P1", 1, 1200), qc("P1", 2, 1500),
		qc("P1", 1, 1100), qc("P1", 2, 1800), {Query: "P2", Error: "did not start"}}
	cfg := RunConfig{Common: runconfig.Common{Engine: "duckdb"}, Rows: 1000, Queries: []string{"P1", "P2"}}
	if got, want := Headline(cfg, cells),
		"duckdb N=1000: P1 1800 queries/h at 1 stream DOP 2 (1.64x DOP 1), median of 3"; got != want {
		t.Errorf("headline %q; want %q", got, want)
	}
	// The busy CPUs are those the cells record, not --hog's number.
	cfg.Hog = 2
	for i, c := range cells[:6] {
		c.Hog = []int{0}
		if i == 5 {
			c.Hog = []int{0, 1}
		}
	}
	if got, want := Headline(cfg, cells), "duckdb N=1000, 1 to 2 CPUs busy (--hog): P1"; !strings.HasPrefix(got, want) {
		t.Errorf("headline %q; want it to start %q", got, want)
	}
	cells[5].Hog = []int{0}
	if got, want := Headline(cfg, cells), "duckdb N=1000, 1 CPU busy (--hog): P1"; !strings.HasPrefix(got, want) {
		t.Errorf("headline %q; want it to start %q", got, want)
	}
}

// TestWriteRow: a measured cell in ms with its speedup, one that ran no
// query, and one that failed to start, each under the heading.
func TestWriteRow(t *testing.T) {
	var b bytes.Buffer
	WriteHeader(&b)
	c := sweep.Cell{Type: P1, DOP: 4}
	c.Index, c.Streams = 2, 1
	WriteRow(&b, c, &result.QueryCell{Cell: &result.Cell{
		Total: result.TxStats{Count: 10, MeanUS: 1500, StdevUS: 250, P50US: 1400, P95US: 2000, P99US: 2500}},
		QueriesPerHour: 2.4e6, SpeedupVsDOP1: 3.456, Workers: &result.WorkerCPUs{Placement: []int{2, 3}, Oversubscribed: true,
			PerCPU: []result.CPUTime{{CPU: 1, MS: 10}, {CPU: 2, MS: 20}, {CPU: 3, MS: 10}}, OutsideMS: 10}})
	WriteRow(&b, c, &result.QueryCell{Cell: &result.Cell{Interrupted: true, Total: result.TxStats{Errors: 2}}})
	WriteRow(&b, c, &result.QueryCell{Error: "no table"})
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []string{
		"cell query streams  dop   queries/h   mean ms  stdev ms    p50 ms    p95 ms    p99 ms  speedup workers ran on    errors",
		"   2 P1          1    4     2400000      1.50      0.25      1.40      2.00      2.50    3.46x 1-3 25% out oversub       0",
		"   2 P1          1    4           0         -         -         -         -         -        - -                2 (cut short)",
		"   2 P1          1    4           -         -         -         -         -         -        - -                failed: no table",
	}
	if len(lines) != len(want) {
		t.Fatalf("table:\n%s", b.String())
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d:\n%q\nwant\n%q", i, lines[i], want[i])
		}
	}
}
