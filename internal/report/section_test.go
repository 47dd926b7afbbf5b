package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/result"
)

// fakeKind is the run kind of a workload only this test registers: no
// fixture holds a run of it, so the other tests' reports are as they were.
const fakeKind = "fake-workload"

// fakeSection shows fake runs: one line per run in every output, and
// what it saw of the report when it was built.
type fakeSection struct {
	Runs    []int64 `json:"fake"`
	SawOLTP bool    `json:"-"`
}

func (f *fakeSection) HTML(*Report) []HTMLSection {
	return []HTMLSection{{ID: "fake", Title: "Fake section", Intro: fmt.Sprintf("fake runs %v", f.Runs)}}
}

func (f *fakeSection) Text(b *strings.Builder, _ *Report) {
	fmt.Fprintf(b, "\nFake section\n  fake runs %v\n", f.Runs)
}

func (f *fakeSection) CSV(row CSVRow) {
	for _, id := range f.Runs {
		row("fake", id, "fake", "x", 1, "y", 2, "unit", nil, nil, 0)
	}
}

func (f *fakeSection) Findings(_ *Report, add, detail Say) {
	add("fake", "Fake finding of %d runs.", len(f.Runs))
	detail("fake", "Fake detail.")
}

func init() {
	Register(Workload{
		Kinds:      []string{fakeKind},
		BesideOLTP: true,
		Build: func(r *Report, runs []*result.Run) (Section, error) {
			f := &fakeSection{SawOLTP: r.OLTP != nil}
			for _, run := range runs {
				f.Runs = append(f.Runs, run.ID)
			}
			return f, nil
		},
	})
}

// A registered workload's section stands beside the OLTP section in the
// HTML, text and CSV, its JSON among the report's top-level keys before
// the findings, its findings after the report's own answers and its
// details after every answer; the report's own sections are built
// before it. Its kind is one the report charts, and is refused twice.
func TestRegisteredSection(t *testing.T) {
	runs := syntheticRuns()
	oltp := runs[0]
	for _, r := range runs {
		if r.Kind == result.RunOLTP {
			oltp = r
		}
	}
	fake := &result.Run{ID: 99, Kind: fakeKind, Host: oltp.Host, Started: oltp.Started, Finished: oltp.Finished,
		Status: result.StatusComplete, Version: oltp.Version, Machine: oltp.Machine}
	all := stored(t, append(runs, fake))
	id := all[len(all)-1].ID // the store numbers runs afresh
	r := build(t, all)
	f := SectionOf[*fakeSection](r)
	if f == nil || len(f.Runs) != 1 || f.Runs[0] != id || !f.SawOLTP {
		t.Fatalf("fake section %+v: want run %d, built after the OLTP section", f, id)
	}
	for _, n := range r.Notes {
		if strings.Contains(n, "does not chart") {
			t.Errorf("note %q: the report charts a registered kind", n)
		}
	}
	inOrder := func(what, s string, marks ...string) {
		t.Helper()
		at := -1
		for _, m := range marks {
			i := strings.Index(s, m)
			if i <= at {
				t.Errorf("%s: %q at %d, want it after %q", what, m, i, marks)
				return
			}
			at = i
		}
	}
	var h, x, c, j bytes.Buffer
	if err := WriteHTML(&h, r); err != nil {
		t.Fatal(err)
	}
	inOrder("html", h.String(), `<section id="oltp">`, `<section id="fake">`, fmt.Sprintf("fake runs [%d]", id),
		`<section id="reporting">`)
	if err := WriteText(&x, r); err != nil {
		t.Fatal(err)
	}
	inOrder("text",
		x.String(), "\nOLTP throughput\n", fmt.Sprintf("\nFake section\n  fake runs [%d]\n", id), "\nReporting queries\n")
	if err := WriteCSV(&c, r); err != nil {
		t.Fatal(err)
	}
	csv := c.String()
	inOrder("csv", csv, "\noltp,", fmt.Sprintf("\nfake,%d,fake,x,1,y,2,unit,,,\n", id), "\nreporting,")
	if strings.LastIndex(csv, "\noltp,") > strings.Index(csv, "\nfake,") {
		t.Error("csv: the fake rows are not after every OLTP row")
	}
	if err := WriteJSON(&j, r); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&j)
	var keys []string
	var top map[string]json.RawMessage
	if err := json.Unmarshal(j.Bytes(), &top); err != nil {
		t.Fatal(err)
	}
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	inOrder("json keys", strings.Join(keys, " ")+" ", "oltp ", "model ", "fake ", "findings ")
	var ids []int64
	if err := json.Unmarshal(top["fake"], &ids); err != nil || len(ids) != 1 || ids[0] != id {
		t.Errorf("json: fake %s (%v), want [%d]", top["fake"], err, id)
	}
	var answer, detail, firstDetail = -1, -1, -1
	for i, fd := range r.Findings {
		switch {
		case fd.Text == "Fake finding of 1 runs.":
			answer = i
		case fd.Text == "Fake detail.":
			detail = i
		case firstDetail < 0 && answer >= 0 && fd.Anchor != "fake":
			firstDetail = i
		}
	}
	if answer < 0 || detail < answer || firstDetail >= 0 && detail < firstDetail {
		t.Errorf("findings: fake answer at %d, its detail at %d, the next finding at %d: want the detail after the answers",
			answer, detail, firstDetail)
	}
	two := &result.Run{ID: 100, Kind: fakeKind, Host: fake.Host, Status: result.StatusComplete}
	if _, err := assessed([]*result.Run{fake, two}); err == nil || !strings.Contains(err.Error(), "both "+fakeKind) {
		t.Errorf("two fake runs: %v, want refused", err)
	}
	for _, kind := range []string{fakeKind, result.RunOLTP} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("registering %s again did not panic", kind)
				}
			}()
			Register(Workload{Kinds: []string{kind}})
		}()
	}
}
