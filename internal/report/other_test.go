package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sentinel"
)

// withPairs is the 2-vCPU guest's runs with two pairs of neighbour and
// control cells added to its OLTP run: tps 3,000 against 4,000 and 3,300
// against 4,000 (ratios 0.75 and 0.825), the chain 60 and 80 ns slower
// with the bandwidth neighbour than with the control.
func withPairs(t *testing.T) []*result.Run {
	t.Helper()
	runs := vmRuns(t)
	nb := func(r int, control bool, tps, loaded float64) result.Item {
		return item(string(memlat.KindNeighbourCell),
			memlat.NeighbourCell{Cell: result.Cell{CPUs: []int{0}, Cores: 1, Streams: 1, DataNode: -1, Repeat: r, TPS: tps},
				Neighbour: []int{1}, Control: control, AloneNS: stat(120, 1), LoadedNS: stat(loaded, 1),
				GBps: map[bool]float64{false: 12}[control]})
	}
	for _, r := range runs {
		if r.Kind == result.RunOLTP {
			r.Results = append(r.Results, nb(0, false, 3000, 200), nb(0, true, 4000, 140), nb(1, true, 4000, 130),
				nb(1, false, 3300, 210))
			return runs
		}
	}
	t.Fatal("the fixture has no OLTP run")
	return nil
}

// TestOtherLatencyShown: the held-out point at another latency is in the
// model section's statements, the fit's chart and table (its ratios as
// tps at the control's median, with the same error), the findings, the
// text report and eval's summary, each from the one calibration.
func TestOtherLatencyShown(t *testing.T) {
	r := build(t, stored(t, withPairs(t)))
	o := r.Model.Other
	if o == nil {
		t.Fatalf("no held-out point at another latency; notes %q", r.Model.Notes)
	}
	if o.MeasuredRatio != (0.75+0.825)/2 || o.AddedNS != 70 || len(o.Pairs) != 2 {
		t.Fatalf("other latency %+v; want ratio 0.7875, 70 ns added, 2 pairs", *o)
	}
	line := o.String()
	sec := modelSection(r)
	if !strings.Contains(strings.Join(sec.Notes, "\n"), line) {
		t.Errorf("model section notes do not hold %q", line)
	}
	_, tb, ok := fitFigure(r.Model)
	if !ok {
		t.Fatal("no fit chart")
	}
	last := tb.Rows[len(tb.Rows)-1]
	if want := []string{o.What, FmtF(o.LatencyNS, 1), fmt.Sprintf("%+.1f%%", 100*o.Error)}; last[0] != want[0] ||
		last[2] != want[1] || last[5] != want[2] || !strings.HasPrefix(last[6], "held out") {
		t.Errorf("fit table's last row %q; want the point %q at %s ns, error %s", last, want[0], want[1], want[2])
	}
	var txt, sum bytes.Buffer
	if err := WriteText(&txt, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteSummary(&sum, r, nil, &sentinel.Series{}, 0.15, "", 0); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"text report": txt.String(), "eval summary": sum.String()} {
		if !strings.Contains(s, line) {
			t.Errorf("%s does not hold %q:\n%s", name, line, s)
		}
	}
	if strings.Contains(sum.String(), "no held-out prediction of the OLTP run's cells") {
		t.Errorf("eval summary says there is no held-out prediction:\n%s", sum.String())
	}
	if !strings.Contains(strings.Join(findingTexts(r), "\n"), "Model check at another latency, not refitted") {
		t.Errorf("no finding for the point at another latency: %q", findingTexts(r))
	}
}

// findingTexts are the report's findings' texts.
func findingTexts(r *Report) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Text)
	}
	return out
}
