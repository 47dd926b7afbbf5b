package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sentinel"
)

// fitRun is a stored measured fit (kind calib.RunFit) of six cells at 300
// and 200 ns, 3 GHz, each with its hot runs in the caches (5 ns), the
// fourth next to a sentinel sample 40% slow.
func fitRun(id int64) *result.Run {
	f := calib.MeasuredFit{What: "tpcc-ro in two memories", Method: "test", GHz: 3,
		Memory: []calib.FitMemory{{Name: "4 KiB pages", LatencyNS: 300, SamplesNS: []float64{300}},
			{Name: "2 MiB pages", LatencyNS: 200, SamplesNS: []float64{200}},
			{Name: "the caches", Hot: true, LatencyNS: 5, SamplesNS: []float64{5}}},
		CountersReason: "instructions: ENOENT (no such file or directory, kernel.perf_event_paranoid 2)"}
	f.Sentinel.Samples = []sentinel.Sample{{Label: "start", Took: 6 * time.Millisecond}}
	for k := range 6 {
		mem := k % 2
		c := 300_000 + 300*f.Memory[mem].LatencyNS*3
		took := 6 * time.Millisecond
		if k == 3 {
			took = 9 * time.Millisecond
		}
		label := "cell " + string(rune('1'+k))
		f.Cells = append(f.Cells,
			calib.FitCell{Label: label, Memory: mem, Point: model.Point{GHz: 3, TPSPerCore: 3e9 / c * (1 + 0.01*float64(k%3))},
				Txns: 1000, Seconds: 0.2, Before: k, After: k + 1},
			calib.FitCell{Label: label + " hot", Memory: 2, Point: model.Point{GHz: 3, TPSPerCore: 3e9 / (300_000 + 300*5*3)},
				Txns: 1000, Seconds: 0.2, Before: k, After: k + 1})
		f.Sentinel.Samples = append(f.Sentinel.Samples, sentinel.Sample{Label: "after cell", Took: took})
	}
	f.Flag(0.15)
	f.Compute()
	return &result.Run{ID: id, Kind: calib.RunFit, Status: result.StatusComplete, Started: time.Unix(1_800_000_000, 0),
		Results: []result.Item{item(string(calib.KindMeasuredFit), f)}}
}

// TestMeasuredFitInReport: with a stored measured fit among the runs, the
// model rests on it, and the findings' decision, the "Which server"
// section and eval's summary (Purchase) give one recommendation; the model
// section shows the cells with the sentinel around each, the series and
// why there are no counters.
func TestMeasuredFitInReport(t *testing.T) {
	runs := vmRuns(t)
	without := build(t, stored(t, runs))
	all := stored(t, append(slices.Clone(runs), fitRun(0)))
	r := build(t, all)
	md := r.Model
	if md == nil || md.Measured == nil || md.FitRun != all[len(all)-1].ID || md.Fit == nil {
		t.Fatalf("model without the stored fit: %+v", md)
	}
	p, p0 := Purchase(r), Purchase(without)
	if p == nil || p0 == nil || p.Recommendation == p0.Recommendation {
		t.Fatalf("the recommendation does not change with the stored fit: %v", p)
	}
	if f := findingWith(r, decisionLine(p)); f == nil || f.Anchor != AnchorBuy || f.Kind != FindingAnswer ||
		decisionLine(p) == decisionLine(p0) {
		t.Errorf("decision finding %v: want the stored fit's decision %q, linked to #%s", f, decisionLine(p), AnchorBuy)
	}
	if f := findingWith(r, "the model uses 300.0 ns,"); f == nil {
		t.Errorf("the DRAM finding does not say the model uses the fit's 4 KiB chain: %q", r.Findings)
	}
	for _, n := range r.Notes {
		if strings.Contains(n, "which the report does not chart") {
			t.Errorf("note %q", n)
		}
	}
	var html bytes.Buffer
	if err := WriteHTML(&html, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"model-cells", "model-sentinel", "no: the sentinel was off", "50% (off)",
		"Hardware counters: not readable here: instructions: ENOENT", "fitted to run"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
	var text bytes.Buffer
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "speed sentinel: 7 samples") ||
		!strings.Contains(text.String(), "hardware counters: not readable here") {
		t.Errorf("the text report lacks the sentinel's series or the counters' reason:\n%s", text.String())
	}
	// Each held-out check once in each (they were printed twice).
	if len(md.Measured.HeldOut) == 0 {
		t.Fatalf("the fit has no held-out check: %s", md.Measured.HeldOutError)
	}
	for _, h := range md.Measured.HeldOut {
		line := h.String()[1:] // "eld-out prediction ...": capitalised in the HTML's notes
		if n, m := strings.Count(html.String(), line), strings.Count(text.String(), line); n != 1 || m != 1 {
			t.Errorf("held-out check %q in the HTML %d times and in the text %d times, want once", line, n, m)
		}
	}
}

// TestMeasuredSentinelMemory: where the sentinel timed its memory
// reference, the series table shows both references, and a sample whose
// memory reference drifted is off though its core reference held; the
// report's note gives the stored verdict in the words the model's lines
// (eval's stdout) give it.
func TestMeasuredSentinelMemory(t *testing.T) {
	f, err := calib.KindMeasuredFit.Last(fitRun(1))
	if err != nil {
		t.Fatal(err)
	}
	for i := range f.Sentinel.Samples {
		f.Sentinel.Samples[i].Took = 6 * time.Millisecond
		f.Sentinel.Samples[i].Mem = 200 * sentinel.MemLoads
	}
	f.Sentinel.Samples[2].Mem = 320 * sentinel.MemLoads
	f.Flag(0.15)
	tables := measuredTables(f)
	series := tables[1]
	if !slices.Contains(series.Head, "memory ns a load") || len(series.Rows) != 7 {
		t.Fatalf("series table %q with %d rows, want the memory reference's columns", series.Head, len(series.Rows))
	}
	if row := series.Rows[2]; row[3] != "+0%" || row[4] != "320" || row[5] != "+60%" || row[6] != "yes" ||
		series.Rows[1][6] != "no" {
		t.Errorf("rows %q and %q: want sample 2 off by its memory reference alone, sample 1 not", series.Rows[1], row)
	}
	if row := tables[0].Rows[2]; row[4] != "core +0%, memory +0%" || row[5] != "core +0%, memory +60% (off)" {
		t.Errorf("cell row %q: want the samples around it with both references, the one after off", row)
	}
	line := f.Verdict.Line()
	if !strings.Contains(line, "1 of 7 samples off") || !slices.Contains(measuredNotes(f), "S"+line[1:]+".") ||
		!slices.Contains(f.Lines(), "  "+f.Verdict.String(&f.Sentinel)) {
		t.Errorf("notes %q: want the verdict's line %q, as the model's lines give it", measuredNotes(f), line)
	}
}
