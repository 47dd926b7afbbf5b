package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/decide"
)

// TestModelBuyCatalogue buys from the built-in catalogue for the fixture
// calibration (buyStore): every CPU is a candidate, ranked by cost per
// 1,000 tps, with the calibration's fit and assumptions and the
// catalogue's; a broken catalogue file and conflicting flags are refused
// naming the flag.
func TestModelBuyCatalogue(t *testing.T) {
	path, oltp := buyStore(t)
	run := strconv.FormatInt(oltp, 10)
	out, _, err := runCLI(t, "model", "buy", "--store", path, "--run", run, "--catalogue", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var p decide.Purchase
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Rows) < 8 || p.FitChoice == "" {
		t.Fatalf("%d rows, fit %q: want every catalogue CPU and the calibration's fit", len(p.Rows), p.FitChoice)
	}
	for i := 1; i < len(p.Rows); i++ {
		if p.Rows[i].CostPerKTPS < p.Rows[i-1].CostPerKTPS {
			t.Errorf("row %d (%s) is cheaper per 1,000 tps than row %d: want the ranking", i+1, p.Rows[i].Server.Name, i)
		}
	}
	names := map[string]bool{}
	for _, a := range p.Assumptions {
		names[a.Name] = true
	}
	if !names[decide.AssumeLicence] || !names[decide.AssumeCatalogue] {
		t.Errorf("assumptions %v: want the licence price and the catalogue latency among them", names)
	}

	text, _, err := runCLI(t, "model", "buy", "--store", path, "--run", run, "--catalogue")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"AMD EPYC 9654 ×1", "Intel Xeon Gold 6414U ×1", "ranked by cost per 1,000 tps",
		"price at introduction 17,000 of 2023-01-10"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q", want)
		}
	}

	// Named, this machine's CPU gives the per-core speeds their reference.
	out, _, err = runCLI(t, "model", "buy", "--store", path, "--run", run, "--catalogue", "--this-cpu",
		"AMD EPYC 7763", "--json")
	if err != nil {
		t.Fatal(err)
	}
	p = decide.Purchase{}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if a := p.Assumptions[len(p.Assumptions)-1]; a.Name != decide.AssumeThisSpeed || a.Value != 6.398 ||
		!strings.Contains(a.Source, "AMD EPYC 7763") {
		t.Errorf("last assumption %+v: want this machine's per-core figure, EPYC 7763's 6.398", a)
	}

	broken := filepath.Join(t.TempDir(), "cpus.json")
	if err := os.WriteFile(broken, []byte(
		`{"about": "x", "sources": [], "latency_bands": [], "cpus": [{"name": "X", "cores": 0}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--catalogue-file", broken},
			[]string{broken, `cpu 1 ("X")`, "cores = 0 is out of range", "sources: list is empty"}},
		{[]string{"--catalogue-file", filepath.Join(t.TempDir(), "none.json")}, []string{"-catalogue-file:", "no such file"}},
		{[]string{"--catalogue", "--catalogue-file", broken}, []string{"-catalogue and -catalogue-file"}},
		{[]string{"--catalogue", "--candidates", filepath.Join("testdata", "candidates.toml")},
			[]string{"-candidates and a catalogue"}},
		{[]string{"--catalogue", "--this-cpu", "Zilog Z80"},
			[]string{"-this-cpu", "Zilog Z80", "names no catalogue or reference CPU"}},
		{[]string{"--this-cpu", "AMD EPYC 7763"}, []string{"-this-cpu", "needs --catalogue"}},
	} {
		_, _, err := runCLI(t, append([]string{"model", "buy", "--store", path, "--run", run}, tc.args...)...)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("model buy %v: err = %v: want %q", tc.args, err, w)
			}
		}
	}
}
