package eval

import (
	"encoding/json"
	"github.com/numalab/numalab/internal/assess"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sentinel"
)

// vmRuns reads runs this project's 2-vCPU guest stored, as the report
// package's testdata holds them.
func vmRuns(t *testing.T, name string) []*result.Run {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "report", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var runs []*result.Run
	if err := json.Unmarshal(b, &runs); err != nil {
		t.Fatal(err)
	}
	return runs
}

// TestSummaryHeldOutOnce: eval's summary of a report resting on a stored
// page-size fit prints each of the fit's held-out checks once (it printed
// them with the fit's lines and again with the model's checks). The
// guest's stored fit has none (its first half did not fit): each memory's
// last cell is predicted by the stored fit here, as a held-out check is.
func TestSummaryHeldOutOnce(t *testing.T) {
	runs := vmRuns(t, "kvm-2vcpu-runs.json")[:2] // the memory probe and tpcc-ro
	fit := vmRuns(t, "kvm-2vcpu-model-fit.json")[0]
	f, err := calib.KindMeasuredFit.Last(fit)
	if err != nil || f == nil {
		t.Fatalf("the stored fit: %v", err)
	}
	if f.Fit == nil {
		t.Fatalf("the stored fit did not fit: %s", f.FitError)
	}
	f.HeldOutError = ""
	for _, c := range f.Cells[len(f.Cells)-2:] {
		h := calib.PredictHeldOut(f.Fit.Workload, c.LatencyNS, f.GHz, c.TPSPerCore)
		h.What, h.Latency, h.Cells = c.Label, "a random chain in "+f.Memory[c.Memory].Name, 1
		f.HeldOut = append(f.HeldOut, h)
	}
	fit.Results = []result.Item{{Seq: 1, Kind: string(calib.KindMeasuredFit), Body: mustJSON(t, f)}}
	r, err := assessed(t, append(runs, fit))
	if err != nil {
		t.Fatal(err)
	}
	if r.Model == nil || r.Model.Measured == nil {
		t.Fatal("the report's model does not rest on the stored fit")
	}
	var b strings.Builder
	if err := report.WriteSummary(&b, r, nil, &sentinel.Series{}, SentinelTolerance, "tpcc-ro on SQLite",
		time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, h := range f.HeldOut {
		if n := strings.Count(b.String(), h.String()); n != 1 {
			t.Errorf("held-out check printed %d times, want once: %q\nsummary:\n%s", n, h.String(), b.String())
		}
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSummaryOpensWithFindings: eval's summary opens with the lines the
// text report opens with, the decision first, and heads what the decision
// rests on with that same line.
func TestSummaryOpensWithFindings(t *testing.T) {
	r, err := assessed(t, vmRuns(t, "kvm-2vcpu-runs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum, txt strings.Builder
	if err := report.WriteSummary(&sum, r, nil, &sentinel.Series{}, SentinelTolerance, "tpcc-ro on SQLite",
		time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteText(&txt, r); err != nil {
		t.Fatal(err)
	}
	var lines strings.Builder
	if err := report.WriteFindings(&lines, r, 0); err != nil {
		t.Fatal(err)
	}
	decision := report.DecisionLine(r)
	if !strings.HasPrefix(lines.String(), "  - "+decision+"\n") || !strings.HasPrefix(decision, "Which server: ") {
		t.Fatalf("the findings do not open with the decision %q:\n%s", decision, lines.String())
	}
	answer, _, _ := strings.Cut(strings.TrimPrefix(txt.String(), "numalab report\n\n"), "\n")
	if !strings.HasPrefix(answer, "The answer: ") ||
		!strings.Contains(txt.String(), answer+"\n\nFindings\n"+lines.String()) ||
		!strings.HasPrefix(sum.String(), "== findings (1m0s in all)\n  "+answer+"\n"+lines.String()) {
		t.Errorf("eval's summary does not open as the text report does (%q):\n%s", answer, sum.String())
	}
	if !strings.Contains(sum.String(), "== which server (what the decision rests on)\n  "+decision+"\n") {
		t.Errorf("eval's summary does not head what the decision rests on with it:\n%s", sum.String())
	}
}

// assessed is the report of runs as eval builds it: with what assess
// concludes from them.
func assessed(t *testing.T, runs []*result.Run) (*report.Report, error) {
	t.Helper()
	in, err := assess.Runs("", runs)
	if err != nil {
		return nil, err
	}
	return report.Build(runs, in)
}
