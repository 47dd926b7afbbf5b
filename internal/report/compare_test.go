package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

// scaleOLTP multiplies the throughput of one placement's cells by f.
func scaleOLTP(t *testing.T, run *result.Run, placement string, f float64) *result.Run {
	t.Helper()
	c := *run
	c.Results = nil
	for _, it := range run.Results {
		if it.Kind == "drive.Cell" {
			var cell result.Cell
			if err := json.Unmarshal(it.Body, &cell); err != nil {
				t.Fatal(err)
			}
			if cell.Placement == placement {
				cell.TPS *= f
				for i := range cell.PerSecond {
					cell.PerSecond[i] = int64(float64(cell.PerSecond[i]) * f)
				}
			}
			it = item(it.Kind, cell)
		}
		c.Results = append(c.Results, it)
	}
	return &c
}

// withRepeats gives every OLTP cell n repeats, each the cell's throughput
// and latency times a factor a little off 1 (the same factors in every
// cell, so two runs built alike differ only where scaled).
func withRepeats(t *testing.T, run *result.Run, n int) *result.Run {
	t.Helper()
	c := *run
	c.Results = nil
	for _, it := range run.Results {
		if it.Kind != "drive.Cell" {
			c.Results = append(c.Results, it)
			continue
		}
		var cell result.Cell
		if err := json.Unmarshal(it.Body, &cell); err != nil {
			t.Fatal(err)
		}
		if cell.Repeat != 0 {
			continue
		}
		for r := range n {
			k := cell
			k.Repeat = r
			f := 1 + 0.01*float64(r-n/2)
			k.TPS *= f
			k.Total.P95US /= f
			c.Results = append(c.Results, item(it.Kind, k))
		}
	}
	return &c
}

// With two repeats a side no test can tell; with five, a 1.5× change in one
// placement is found and the others are not.
func TestCompareOLTP(t *testing.T) {
	base := syntheticRuns()[1]
	runs := stored(t, []*result.Run{base, scaleOLTP(t, base, "node=1,smt=off", 1.5)})
	c, err := Compare(runs[0], runs[1])
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Figures) != 18 { // 3 placements × 3 stream counts × (tps, p95)
		t.Errorf("%d figures, want 18", len(c.Figures))
	}
	for _, f := range c.Figures {
		if f.Verdict != stats.CannotTell || f.Test.A.N != 2 || f.Test.B.N != 2 {
			t.Errorf("%s: %s with n=%d+%d, want cannot tell with 2+2 repeats", f.Name, f.Test, f.Test.A.N, f.Test.B.N)
		}
	}
	if len(c.Summary) != 0 {
		t.Errorf("summary %q with two repeats a side, want none", c.Summary)
	}
	var b bytes.Buffer
	if err := WriteCompareText(&b, c); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "compare-oltp.txt", b.Bytes())
	b.Reset()
	if err := WriteCompareJSON(&b, c); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "compare-oltp.json", b.Bytes())

	five := withRepeats(t, base, 5)
	runs = stored(t, []*result.Run{five, scaleOLTP(t, five, "node=1,smt=off", 1.5)})
	if c, err = Compare(runs[0], runs[1]); err != nil {
		t.Fatal(err)
	}
	higher := 0
	for _, f := range c.Figures {
		want := stats.NoDiff
		if f.Unit == "tps" && strings.HasPrefix(f.Name, "node=1,smt=off") {
			want = stats.Higher
			higher++
		}
		if f.Verdict != want {
			t.Errorf("%s: %s, want %s", f.Name, f.Test, want)
		}
	}
	if higher != 3 || len(c.Summary) != 3 || !strings.Contains(c.Summary[0], "p=0.008, n=5+5") {
		t.Errorf("summary %q, want the 3 scaled cells with p=0.008, n=5+5", c.Summary)
	}
}

// The same probe twice; a probe against an OLTP run is refused.
func TestCompareKinds(t *testing.T) {
	runs := stored(t, vmRuns(t))
	again := stored(t, vmRuns(t))
	c, err := Compare(runs[0], again[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Figures) < 10 || len(c.Summary) != 0 {
		t.Errorf("a probe against itself: %d figures, summary %q", len(c.Figures), c.Summary)
	}
	if _, err := Compare(runs[0], runs[1]); !errors.Is(err, ErrKindMismatch) ||
		!strings.Contains(err.Error(), "probe-mem") {
		t.Errorf("probe-mem against oltp: %v, want ErrKindMismatch naming both kinds", err)
	}
	for i := 2; i < 4; i++ {
		if _, err := Compare(runs[i], again[i]); err != nil {
			t.Errorf("%s against itself: %v", runs[i].Kind, err)
		}
	}
}

// cutShort marks run interrupted, and its first cell cut short; with keep
// false it keeps none of its cells.
func cutShort(t *testing.T, run *result.Run, keep bool) *result.Run {
	t.Helper()
	c := *run
	c.Status, c.Results = result.StatusInterrupted, nil
	first := true
	for _, it := range run.Results {
		if it.Kind == "drive.Cell" {
			if !keep {
				continue
			}
			var cell result.Cell
			if err := json.Unmarshal(it.Body, &cell); err != nil {
				t.Fatal(err)
			}
			cell.Interrupted, first = first, false
			it = item(it.Kind, cell)
		}
		c.Results = append(c.Results, it)
	}
	return &c
}

// TestCompareInterrupted: compare names an interrupted run and its cut
// cells, and refuses two runs with no figure in common instead of saying
// that nothing differs.
func TestCompareInterrupted(t *testing.T) {
	base := syntheticRuns()[1]
	runs := stored(t, []*result.Run{base, cutShort(t, base, true), cutShort(t, base, false)})
	c, err := Compare(runs[0], runs[1])
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(c.Notes, "\n")
	for _, want := range []string{"is interrupted: its figures are what it measured before it stopped",
		"was cut short: its figures cover less than the planned window"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if _, err := Compare(runs[0], runs[2]); err == nil || !strings.Contains(err.Error(), "nothing to compare") ||
		!strings.Contains(err.Error(), "(interrupted, 0 figures)") {
		t.Errorf("against an interrupted run with no cells: %v; want it refused", err)
	}
}

// Null and insert runs compare figure by figure, each repeat a value:
// the same real run against itself differs in nothing, and three repeats
// a side cannot show a difference.
func TestCompareNullInsert(t *testing.T) {
	for _, c := range []struct {
		id      int64
		figures int
		name    string
	}{
		{2, 8, "postgres unix, same-cpu, 1 stream: round trips"},
		{3, 2, "sqlite insert, all CPUs, 2 streams: rows loaded"},
	} {
		runs := workloadRuns(t, c.id)
		cmp, err := Compare(runs[0], runs[0])
		if err != nil {
			t.Fatal(err)
		}
		if len(cmp.Figures) != c.figures {
			t.Errorf("run %d: %d figures, want %d", c.id, len(cmp.Figures), c.figures)
		}
		found := false
		for _, f := range cmp.Figures {
			found = found || f.Name == c.name
			if f.Ratio != 1 && f.A != 0 {
				t.Errorf("run %d against itself: %s ratio %v", c.id, f.Name, f.Ratio)
			}
			if len(f.ARepeats) == 3 && f.Verdict != stats.CannotTell && f.Verdict != stats.NoDiff {
				t.Errorf("run %d against itself: %s %s", c.id, f.Name, f.Verdict)
			}
		}
		if !found {
			t.Errorf("run %d: no figure %q in %+v", c.id, c.name, cmp.Figures)
		}
	}
}
