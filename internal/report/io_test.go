package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/iobench"
	"github.com/numalab/numalab/internal/result"
)

// probeRun is a stored storage probe whose data covered span (0: its
// file alone), with random reads at QD 1 and 16 and the ratios at each.
func probeRun(t *testing.T, id int64, span int64, iops1, iops16 float64) *result.Run {
	t.Helper()
	conf, _ := json.Marshal(iobench.StoredConfig{Dir: "/d", Span: span})
	p := result.IOProbe{Dir: "/d", FSType: "ext4", FileSize: 1 << 30, Span: span, Sparse: span > 0, Direct: true,
		Engine: iobench.Engine,
		Patterns: []result.IOPattern{
			{Name: iobench.RandRead, BlockSize: iobench.PageSize, QD: 1, Read: result.IOStats{IOPS: iops1}},
			{Name: iobench.RandRead, BlockSize: iobench.PageSize, QD: 16, Read: result.IOStats{IOPS: iops16}},
			{Name: iobench.SeqRead, BlockSize: 1 << 20, QD: 1, Read: result.IOStats{MBps: 100}},
			{Name: iobench.SeqRead, BlockSize: 1 << 20, QD: 16, Read: result.IOStats{MBps: 200}},
		}}
	p.Ratios = iobench.Ratios(p.Patterns)
	run := &result.Run{ID: id, Kind: result.RunProbeIO, Host: "h", Status: result.StatusComplete, Config: conf}
	run.Results = append(run.Results, item(string(result.KindIOProbe), p))
	return run
}

// TestIOSpansAndRatios: two probes over different spans go in one report,
// their random reads plotted against queue depth per span, and the ratio
// at each depth is charted and tabled.
func TestIOSpansAndRatios(t *testing.T) {
	r, err := assessed([]*result.Run{probeRun(t, 2, 8<<30, 300, 2000), probeRun(t, 1, 0, 900, 4000)})
	if err != nil {
		t.Fatal(err)
	}
	if r.IO == nil || len(r.IO.Spans) != 2 || r.IO.Spans[0].Span != 1<<30 || r.IO.Spans[1].Span != 8<<30 ||
		r.IO.Spans[1].Points[1] != (IOSpanPoint{QD: 16, IOPS: 2000}) {
		t.Fatalf("spans %+v; want 1 GiB then 8 GiB, each with QD 1 and 16", r.IO)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{`id="io-span"`, "run 2, span 8GiB", "run 1, span 1GiB", `id="io-ratio"`,
		`id="io-ratios"`, "8GiB span, holes between them"} {
		if !strings.Contains(html, want) {
			t.Errorf("the HTML lacks %q", want)
		}
	}
	var tb strings.Builder
	if err := WriteText(&tb, r); err != nil {
		t.Fatal(err)
	}
	text := tb.String()
	for _, want := range []string{"at QD 16, one sequence: 12.2×",
		"run 2 over a span of 8GiB: QD 1 300 IOPS, QD 16 2,000 IOPS"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
	if _, err := assessed([]*result.Run{probeRun(t, 2, 8<<30, 1, 2), probeRun(t, 3, 8<<30, 1, 2)}); err == nil {
		t.Error("two probes over the same span: want the report to refuse one")
	}
}
