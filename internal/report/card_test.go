package report

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/sentinel"
)

// The card gives the purchase "Which server" gives: the cheapest's cost
// and band, the measurement decide names, every candidate in its chart,
// and each flip with the calibration's basis for its input.
func TestDecisionCard(t *testing.T) {
	r := build(t, stored(t, syntheticRuns()))
	p := Purchase(r)
	if p == nil || p.Decision != "" || len(p.Rivals) == 0 {
		t.Fatalf("the two-socket fixture's purchase: %+v, want 'cannot tell'", p)
	}
	c := decisionCard(r)
	var best *decideRow
	for _, row := range p.Rows {
		if row.Name == p.Cheapest {
			best = &decideRow{row.Name, model.Thousands(row.CostPerKTPS)}
		}
	}
	if best == nil || !strings.HasPrefix(c.Sentence, "For tpcc-ro on sqlite: Cannot tell: "+best.name+" is cheapest at "+
		best.cost+" per 1,000 tps") ||
		!strings.HasSuffix(c.Sentence, "To decide, measure "+p.Decider+".") {
		t.Errorf("card sentence %q: want the cheapest (%v) and the measurement %q", c.Sentence, best, p.Decider)
	}
	for _, row := range p.Rows {
		if !strings.Contains(string(c.Chart), ">"+row.Name+"<") {
			t.Errorf("the card's chart lacks candidate %q", row.Name)
		}
	}
	if len(c.Inputs) < 3 || len(c.Inputs) > maxCardInputs || len(c.Inputs) != min(len(p.Flips), maxCardInputs) {
		t.Fatalf("card inputs %+v: want 3 to 5, one per flip of %+v", c.Inputs, p.Flips)
	}
	smt, _ := r.Model.Assumption(calib.AssumeSMT)
	if in := c.Inputs[0]; in.Name != calib.AssumeSMT || in.Source != smt.Basis || in.Flips != model.Figure(p.Flips[0].At) {
		t.Errorf("first input %+v: want the SMT gain, %s, flipping at %s", in, smt.Basis, model.Figure(p.Flips[0].At))
	}
	// Beside it, the answer among real CPUs: the catalogue's purchase, in
	// the card and in the text report's answer.
	pc := CataloguePurchase(r)
	if pc == nil || !strings.Contains(c.RealCPUs, ": "+cardSentence(pc)+" Cheapest per 1,000 tps: "+pc.Rows[0].Name+" ") ||
		!strings.Contains(c.RealCPUs, "catalogue") {
		t.Errorf("card's real CPUs %q: want the catalogue's answer and its ranking %v", c.RealCPUs, pc)
	}
	if txt := cardText(r); !strings.HasSuffix(txt, c.RealCPUs) || !strings.HasPrefix(txt, c.Sentence) {
		t.Errorf("text answer %q: want the variants' answer, then the real CPUs'", txt)
	}
	// With the bands apart, the card says what to buy.
	p.Decision, p.Rivals = p.Cheapest, nil
	if s := cardSentence(p); !regexp.MustCompile(
		`^Buy .+: [\d,]+ per 1,000 tps \([\d,]+ to [\d,]+\), the cheapest of \d candidates\.$`).MatchString(s) {
		t.Errorf("decided: card sentence %q", s)
	}
	// Without a memory probe there is no decision: the card says which run
	// would give one, and the text report opens with it.
	w := build(t, workloadRuns(t, 2, 7))
	if c := decisionCard(w); c.Absent == "" ||
		!strings.Contains(c.Absent, "'numalab probe mem --quick'") || c.Chart != "" {
		t.Errorf("no memory probe: card %+v", c)
	}
	var txt bytes.Buffer
	if err := WriteText(&txt, w); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(txt.String(), "numalab report\n\nThe answer: No decision: ") {
		t.Errorf("text report opens %.120q", txt.String())
	}
}

type decideRow struct{ name, cost string }

// The fit's chart has every cell of a stored fit, the ones the sentinel
// left out as rings, and its table the same points; the sentinel's chart
// has both references and rings at the samples flagged off.
func TestFitAndSentinelCharts(t *testing.T) {
	r := build(t, stored(t, append(vmRuns(t), fitRun(0))))
	md := r.Model
	fig, tb, ok := fitFigure(md)
	if !ok {
		t.Fatal("no fit chart")
	}
	cells := len(md.Measured.Cells)
	if len(tb.Rows) != cells+len(md.Measured.HeldOut) || !tb.Fold {
		t.Errorf("fit table: %d rows, want %d cells and %d held-out checks, folded",
			len(tb.Rows), cells, len(md.Measured.HeldOut))
	}
	svg := string(fig.SVG)
	if n := strings.Count(svg,
		`stroke-width="2"><title>left out (sentinel off)`); n != len(md.Measured.OffCells()) || n == 0 {
		t.Errorf("fit chart: %d rings, want the %d cells left out", n, len(md.Measured.OffCells()))
	}
	if !strings.Contains(svg, `class="ideal"`) {
		t.Error("fit chart without its 1:1 line")
	}
	for _, row := range tb.Rows {
		if row[6] == "fitted" && !strings.HasPrefix(row[5], "+") && !strings.HasPrefix(row[5], "-") {
			t.Errorf("fit row %q: want a signed error", row)
		}
	}

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
	sf, ok := sentinelFigure(f)
	if !ok {
		t.Fatal("no sentinel chart")
	}
	s := string(sf.SVG)
	for _, want := range []string{"core reference (median 6.00 ms)",
		"memory reference (median 200 ns a load)", "+15%", "−15%"} {
		if !strings.Contains(s, want) {
			t.Errorf("sentinel chart lacks %q", want)
		}
	}
	if !slices.Equal(f.Verdict.Off, []int{2}) || strings.Count(s, "<title>flagged off: 2, 60</title>") != 1 {
		t.Errorf("sentinel chart: want one ring at sample 2, 60%% off (off: %v)", f.Verdict.Off)
	}
}
