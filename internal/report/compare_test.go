package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/result"
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
		if f.Unit != "tps" {
			continue
		}
		want := VerdictSame
		if strings.HasPrefix(f.Name, "node=1,smt=off") {
			want = VerdictHigher
		}
		if f.Verdict != want {
			t.Errorf("%s: %s (A %v [%v–%v], B %v [%v–%v]), want %s", f.Name, f.Verdict, f.A, f.ALo, f.AHi, f.B, f.BLo, f.BHi, want)
		}
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
}

// Overlapping spreads are noise; disjoint ones are not.
func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		f    Figure
		want string
	}{
		{Figure{A: 100, ALo: 95, AHi: 105, B: 103, BLo: 99, BHi: 107}, VerdictNoise},
		{Figure{A: 100, ALo: 95, AHi: 105, B: 110, BLo: 106, BHi: 114}, VerdictHigher},
		{Figure{A: 100, ALo: 95, AHi: 105, B: 90, BLo: 88, BHi: 94}, VerdictLower},
		{Figure{A: 100, ALo: 100, AHi: 100, B: 90, BLo: 90, BHi: 90}, VerdictNoSpread},
		{Figure{A: 100, ALo: 100, AHi: 100, B: 100, BLo: 100, BHi: 100}, VerdictSame},
	} {
		f := tc.f
		verdict(&f)
		if f.Verdict != tc.want {
			t.Errorf("%+v: %s, want %s", tc.f, f.Verdict, tc.want)
		}
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
	if _, err := Compare(runs[0], runs[1]); !errors.Is(err, ErrKindMismatch) || !strings.Contains(err.Error(), "probe-mem") {
		t.Errorf("probe-mem against oltp: %v, want ErrKindMismatch naming both kinds", err)
	}
	for i := 2; i < 4; i++ {
		if _, err := Compare(runs[i], again[i]); err != nil {
			t.Errorf("%s against itself: %v", runs[i].Kind, err)
		}
	}
}
