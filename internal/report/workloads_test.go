package report

import (
	"bytes"
	"encoding/json"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/result"
)

// workloadRuns are real runs of this project's 2-vCPU KVM guest (one
// node, no SMT), made for this test with the numalab binary and printed
// by 'numalab runs show --json', by id:
//
//	1 numalab run null --engine sqlite --streams 1,2 --duration 1s --warmup 500ms --repeat 3
//	2 numalab run null (postgres, unix and tcp, every pairing) --streams 1 --duration 1s --warmup 500ms --repeat 3
//	3 numalab run insert --engine sqlite --streams 1,2 --batch 500 --duration 1s --warmup 500ms --repeat 3
//	4 the same on duckdb
//	5 the same on postgres (copy)
//	6 numalab run oltp --engine sqlite --warehouses 1 --streams 1,2 --duration 2s --warmup 1s --repeat 3
//	7 numalab run oltp --engine postgres --warehouses 1 --streams 1 --duration 2s --warmup 1s --repeat 3
//	8 numalab run tpch --engine duckdb --sf 0.01 --dop 1,2 --query 1,3,6,9 --streams 2 --repeats 2 --duration 1s --warmup 300ms
//
// The machine was shared and loaded (load average about 11 on 2 CPUs):
// the figures are noisy, some cells completed nothing, as real runs do.
func workloadRuns(t *testing.T, ids ...int64) []*result.Run {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "vm-null-insert-runs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var all []*result.Run
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	var runs []*result.Run
	for _, r := range all {
		if slices.Contains(ids, r.ID) {
			runs = append(runs, r)
		}
	}
	if len(runs) != len(ids) {
		t.Fatalf("fixture has %d of runs %v", len(runs), ids)
	}
	return stored(t, runs)
}

// The scenarios of the null, insert and TPC-H sections: eval's set
// (SQLite's OLTP run with both null runs, a TPC-H run) with every insert
// run, and PostgreSQL's OLTP run with its null run.
var workloadScenarios = []scenario{
	{"vm-workloads", func(t *testing.T) []*result.Run { return workloadRuns(t, 1, 2, 3, 4, 5, 6, 8) }},
	{"vm-null-postgres", func(t *testing.T) []*result.Run { return workloadRuns(t, 2, 7) }},
}

// allScenarios are every fixture the output tests render.
var allScenarios = append(slices.Clone(scenarios), workloadScenarios...)

func renderAll(t *testing.T, r *Report) (htm, txt, js string) {
	t.Helper()
	var h, x, j bytes.Buffer
	if err := WriteHTML(&h, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&x, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&j, r); err != nil {
		t.Fatal(err)
	}
	return html.UnescapeString(h.String()), x.String(), j.String()
}

// htmlRow finds the row of the HTML table id whose first cells are
// lead, and returns its cells.
func htmlRow(t *testing.T, page, id string, lead ...string) []string {
	t.Helper()
	i := strings.Index(page, `id="`+id+`"`)
	if i < 0 {
		t.Fatalf("no table #%s in the HTML", id)
	}
	body := page[i:]
	body = body[:strings.Index(body, "</table>")]
	for _, tr := range regexp.MustCompile(`(?s)<tr>(.*?)</tr>`).FindAllStringSubmatch(body, -1) {
		var cells []string
		for _, m := range regexp.MustCompile(`(?s)<td>(.*?)</td>`).FindAllStringSubmatch(tr[1], -1) {
			cells = append(cells, m[1])
		}
		if len(cells) >= len(lead) && slices.Equal(cells[:len(lead)], lead) {
			return cells
		}
	}
	t.Fatalf("table #%s has no row starting %q", id, lead)
	return nil
}

// near says whether a and b agree to rounding.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b)) }

func itoa(n int) string     { return strconv.Itoa(n) }
func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// A newer run is warned of only when it is of the same kind and variant
// and the report does not use it: SQLite's null run is not made stale by
// PostgreSQL's, which the report shows beside it.
func TestNewerRunsVariant(t *testing.T) {
	runs := append(workloadRuns(t, 1, 2), workloadRuns(t, 1)...)
	runs[2].ID = 3 // stored apart, it is run 1 of its own store
	var all []result.Run
	for _, r := range runs {
		all = append(all, *r)
	}
	got := NewerRuns(runs[:2], all)
	if len(got) != 1 || !strings.HasPrefix(got[0], "run 1 (null) is used") ||
		!strings.Contains(got[0], "null runs of vm: 3 ") {
		t.Errorf("NewerRuns = %q, want one warning: run 1 has the newer SQLite run 3", got)
	}
}
