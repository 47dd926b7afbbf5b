package report

import (
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/sentinel"
)

// TestOffSpeed: the fit's step is flagged when a sample next to it is off.
func TestOffSpeed(t *testing.T) {
	ms := func(label string, v int) sentinel.Sample {
		return sentinel.Sample{Label: label, Took: time.Duration(v) * time.Millisecond}
	}
	s := &sentinel.Series{Samples: []sentinel.Sample{ms("start", 10), ms("before x", 10), ms("after x", 10),
		ms("before tpcc-ro on SQLite", 10), ms("after tpcc-ro on SQLite", 14), ms("end", 10)}}
	if got := offSpeed(s, s.Check(0.15), "tpcc-ro on SQLite"); !strings.Contains(got, "not to be trusted") {
		t.Errorf("40%% slow next to the step: %q", got)
	}
	s.Samples[4].Took = 11 * time.Millisecond
	if got := offSpeed(s, s.Check(0.15), "tpcc-ro on SQLite"); !strings.Contains(got, "held within 15%") {
		t.Errorf("10%% slow: %q", got)
	}
	if got := offSpeed(s, s.Check(0.15), "no such step"); got != "" {
		t.Errorf("no such step: %q", got)
	}
}

// TestSummaryAssumptions: eval's summary lists every input the decision
// assumed, the licence price per core among them, each once.
func TestSummaryAssumptions(t *testing.T) {
	r := build(t, stored(t, vmRuns(t)))
	var b strings.Builder
	if err := WriteSummary(&b, r, nil, &sentinel.Series{}, 0.15, "", time.Minute); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"assumed: licence per physical core 7,000",
		"SMT gain 1.1, assumed: the published band is 1 to 1.19 (Linchi Shea", "SMT gain"} {
		if n := strings.Count(out, want); n != 1 {
			t.Errorf("summary has %q %d times, want once:\n%s", want, n, out)
		}
	}
}
