package modelinput

import (
	"encoding/json"
	"flag"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/decide"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
)

// TestMachineFlagsCheck: a machine named twice, a run ID that is none
// and a latency no machine has are refused together, each naming its
// flag; the figures given make the spec.
func TestMachineFlagsCheck(t *testing.T) {
	fs := flag.NewFlagSet("model", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	m := AddMachineFlags(fs)
	if err := fs.Parse([]string{"--topology", "t.xml", "--from-run", "-1", "--local-ns", "20000"}); err != nil {
		t.Fatal(err)
	}
	err := m.Check()
	for _, want := range []string{"-topology and -from-run: choose one source of the machine",
		`-from-run: "-1" is not a run ID`, "-local-ns"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check = %v; want %q", err, want)
		}
	}
	fs = flag.NewFlagSet("model", flag.ContinueOnError)
	m = AddMachineFlags(fs)
	if err := fs.Parse([]string{"--local-ns", "90", "--remote-ns", "140", "--cores", "8"}); err != nil {
		t.Fatal(err)
	}
	s, err := m.Spec()
	if err != nil || m.Check() != nil || s.LocalNS != 90 || s.RemoteNS != 140 || s.CoresPerSocket != 8 ||
		s.Locality != -1 || s.Topology != nil {
		t.Errorf("Spec = %+v, %v (Check %v); want the figures given", s, err, m.Check())
	}
}

// TestSecondsPerUnit: a stored run that is not a tpch run is refused
// naming --run and what to try; a run the store lacks is an error.
func TestSecondsPerUnit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r := &result.Run{Kind: result.RunProbeMem, Command: "numalab probe mem", Config: json.RawMessage(`{}`),
		Started: time.Unix(1700000000, 0)}
	if err := st.Begin(r); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	want := "-run: run 1 is a probe-mem run, not a tpch run (try 'numalab runs --kind tpch')"
	if _, err := SecondsPerUnit(path, r.ID); err == nil || err.Error() != want {
		t.Errorf("SecondsPerUnit(probe run) = %v; want %q", err, want)
	}
	if _, err := SecondsPerUnit(path, 99); err == nil {
		t.Error("SecondsPerUnit(no such run) = nil")
	}
}

// TestBuyRead: the catalogue and the candidates are one set or the
// other, --this-cpu needs a catalogue that has it; with neither file,
// this CPU's figures anchor the built-in candidates, and the purchase is
// made from them.
func TestBuyRead(t *testing.T) {
	for _, c := range []struct {
		b    Buy
		want string
	}{
		{Buy{Catalogue: true, CatalogueFile: "c.json"}, "-catalogue and -catalogue-file: give one"},
		{Buy{Catalogue: true, Candidates: "c.toml"}, "-candidates and a catalogue: choose among one set of candidates"},
		{Buy{Candidates: filepath.Join(t.TempDir(), "none.toml")}, "-candidates: open "},
		{Buy{CatalogueFile: filepath.Join(t.TempDir(), "none.json")}, "-catalogue-file: open "},
		{Buy{ThisCPU: "AMD EPYC 7763"}, `-this-cpu: "AMD EPYC 7763" needs --catalogue or --catalogue-file`},
		{Buy{Catalogue: true, ThisCPU: "no such CPU"}, `-this-cpu: "no such CPU" names no catalogue or reference CPU`},
	} {
		b := c.b
		if got := joined(b.Read()); !strings.Contains(got, c.want) {
			t.Errorf("%+v: Read = %q; want %q", c.b, got, c.want)
		}
	}
	b := Buy{Workload: model.Workload{Instructions: model.DefaultInstructions, Miss: model.DefaultMiss}}
	if errs := b.Read(); joined(errs) != "" || !b.NeedsCPU() {
		t.Fatalf("Read = %v, needs this CPU's figures %v; want none and true", errs, b.NeedsCPU())
	}
	b.CPU = &decide.GivenCPUFigures{GHz: 3, Latencies: model.Latencies{LocalNS: 90}, Cores: 8, SMT: 2}
	p, err := b.Purchase()
	if err != nil || len(p.Rows) == 0 {
		t.Errorf("Purchase = %+v, %v; want the built-in candidates", p, err)
	}
	cat := Buy{Catalogue: true}
	if errs := cat.Read(); joined(errs) != "" || cat.NeedsCPU() {
		t.Errorf("the built-in catalogue: Read = %v, needs this CPU's figures %v; want none and false", errs, cat.NeedsCPU())
	}
}

// joined is the errors' text, nil ones left out.
func joined(errs []error) string {
	var s []string
	for _, err := range errs {
		if err != nil {
			s = append(s, err.Error())
		}
	}
	return strings.Join(s, "\n")
}

// TestResults: the built-in published results, and a file that cannot
// be read refused naming --results.
func TestResults(t *testing.T) {
	if r, err := Results(""); err != nil || r == nil {
		t.Errorf("built-in results: %v", err)
	}
	_, err := Results(filepath.Join(t.TempDir(), "none.json"))
	if err == nil || !strings.HasPrefix(err.Error(), "-results: open ") {
		t.Errorf("a missing file: %v", err)
	}
}
