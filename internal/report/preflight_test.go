package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/result"
)

// TestCaveatsOnce: a preflight warning stored with the runs is shown
// once, in the report's box of warnings, and every section whose figures
// it affects (and only those) links to that box, naming it.
func TestCaveatsOnce(t *testing.T) {
	runs := vmRuns(t)
	dam := preflight.Warning{Setting: "DAMON on: kdamond 0", Effect: "pages are sampled and paged out",
		Fix: "stop kdamond 0", Affects: []preflight.Figure{preflight.Latency, preflight.OLTP}}
	gov := preflight.Warning{Setting: "governor powersave", Effect: "clocks run low",
		Fix: "cpupower frequency-set -g performance", Affects: []preflight.Figure{preflight.Queries}}
	for i, run := range runs {
		pf := preflight.Report{Warnings: []preflight.Warning{dam}}
		if i == 0 {
			pf.Warnings = append(pf.Warnings, gov)
		}
		run.Results = append([]result.Item{item(string(preflight.Kind), pf)}, run.Results...)
	}
	r := build(t, runs)
	if len(r.Preflight) != 2 || len(r.Preflight[0].Runs) != len(runs) || len(r.Preflight[1].Runs) != 1 {
		t.Fatalf("caveats %+v: want DAMON from every run, the governor from the first", r.Preflight)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	section := func(id string) string {
		i := strings.Index(html, `<section id="`+id+`"`)
		if i < 0 {
			return ""
		}
		rest := html[i:]
		return rest[:strings.Index(rest, "</section>")]
	}
	box := section(AnchorPreflight)
	for _, w := range []preflight.Warning{dam, gov} {
		if n := strings.Count(html, w.Effect); n != 1 || !strings.Contains(box, w.Effect) || !strings.Contains(box, w.Fix) {
			t.Errorf("warning %q: its effect is shown %d times, want once, in the box:\n%s", w.Setting, n, box)
		}
	}
	for _, c := range []struct {
		id        string
		dam, govs bool
	}{
		{"memory", true, false},
		{AnchorOLTP, true, false},
		{AnchorModel, true, false},
		{AnchorQueries, false, true},
		{AnchorMachine, false, false},
	} {
		s := section(c.id)
		if s == "" {
			t.Fatalf("no section %q", c.id)
		}
		if got := strings.Contains(s, "DAMON on: kdamond 0"); got != c.dam {
			t.Errorf("section %s names the DAMON warning: %v, want %v", c.id, got, c.dam)
		}
		if got := strings.Contains(s, "governor powersave"); got != c.govs {
			t.Errorf("section %s names the governor warning: %v, want %v", c.id, got, c.govs)
		}
		if got := strings.Contains(s, `href="#`+AnchorPreflight+`"`); got != (c.dam || c.govs) {
			t.Errorf("section %s links to the warnings: %v, want %v", c.id, got, c.dam || c.govs)
		}
		if c.dam && !strings.Contains(box, `<a href="#`+c.id+`">`) {
			t.Errorf("the box does not link to section %s, whose figures DAMON affects", c.id)
		}
	}
	b.Reset()
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "DAMON on: kdamond 0") ||
		!strings.Contains(b.String(), "affects: memory latency, tpcc-ro tps") {
		t.Errorf("text report lacks the caveat and what it affects:\n%s", b.String())
	}
}
