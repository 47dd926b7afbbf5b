package calib

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/topo"
)

// fourSockets is a captured machine of 4 sockets, 2 nodes each, with the
// firmware's distances.
func fourSockets(t *testing.T) *result.Topology {
	t.Helper()
	m, _, err := topo.Load(filepath.Join("..", "..", "testdata", "topology", "64amd64-4s2n4ca2co.tar.bz2"), "")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPredict: socket counts and clocks default to the machine's; socket
// counts beyond a topology's and a missing clock are refused by flag.
func TestPredict(t *testing.T) {
	w := model.Workload{Instructions: model.DefaultInstructions, Miss: model.DefaultMiss}
	tab, err := MachineSpec{LocalNS: 67, RemoteNS: 125, Locality: -1}.Predict(w,
		model.Grid{GHz: []float64{3}, SMT: []int{1}}, "")
	if err != nil {
		t.Fatal(err)
	}
	var ss []int
	for _, r := range tab.Rows {
		ss = append(ss, r.Sockets)
	}
	if !slices.Equal(ss, []int{1, 2, 4}) || tab.Rows[0].GHz != 3 {
		t.Errorf("flags only: rows of %v sockets at %g GHz; want 1,2,4 (the published figures' reach) at 3",
			ss, tab.Rows[0].GHz)
	}
	_, err = MachineSpec{LocalNS: 67, RemoteNS: 125, Locality: -1}.Predict(w, model.Grid{SMT: []int{1}}, "")
	if err == nil || !strings.HasPrefix(err.Error(), "-ghz: missing: ") {
		t.Errorf("no clock: %v", err)
	}
	m := fourSockets(t)
	spec := MachineSpec{LocalNS: 90, Locality: -1, Topology: m}
	for _, c := range []struct {
		flag    string
		sockets []int
		want    string
	}{{"8", []int{8}, `-sockets: "8" does not fit`}, {"", []int{8}, `-sockets: "8" does not fit`},
		{"1,8", []int{1, 8}, `-sockets: "1,8" does not fit`}} {
		_, err := spec.Predict(w, model.Grid{GHz: []float64{3}, SMT: []int{1}, Sockets: c.sockets}, c.flag)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) ||
			!strings.HasSuffix(err.Error(), "it has 4 socket(s) (try --sockets 1,2,3,4)") {
			t.Errorf("--sockets %q on 4 sockets: %v", c.flag, err)
		}
	}
}

// TestMachineCheck: implausible figures are refused by flag unless
// unchecked; latencies out of their physical order always.
func TestMachineCheck(t *testing.T) {
	bad := MachineSpec{LocalNS: 0.5, RemoteNS: 1e308, BufferNS: 1e6}
	err := bad.Check(false)
	for _, want := range []string{
		`-local-ns: "0.5" is not a plausible memory latency: want 1 to 10000 ns (--unchecked accepts it)`,
		`-remote-ns: "1e+308" is not a plausible memory latency`,
		`-buffer-ns: "1e+06" is not a plausible extra latency: want up to 10000 ns`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check = %v; want %s", err, want)
		}
	}
	if err := bad.Check(true); err != nil {
		t.Errorf("unchecked: %v", err)
	}
	swapped := MachineSpec{LocalNS: 200, RemoteNS: 100, OneSocketNS: 300}
	for _, unchecked := range []bool{false, true} {
		err := swapped.Check(unchecked)
		for _, want := range []string{`-remote-ns: "100" is below --local-ns (200 ns)`,
			`-one-socket-ns: "300" is above --local-ns (200 ns)`} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("unchecked %v: Check = %v; want %s", unchecked, err, want)
			}
		}
	}
	if err := (MachineSpec{LocalNS: 67, RemoteNS: 125, BufferNS: 15}).Check(false); err != nil {
		t.Errorf("a plausible machine: %v", err)
	}
	if err := model.Plausible("ghz-list", nil, []float64{3, 40}, nil, false); err == nil ||
		err.Error() != `-ghz-list: "40" is not a plausible clock: want 0.1 to 10 GHz (--unchecked accepts it)` {
		t.Errorf("Plausible = %v", err)
	}
}

// TestStoredMachine: a stored probe gives its machine and latencies; a
// run that is not there is refused by --from-run.
func TestStoredMachine(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := &result.Run{Kind: result.RunProbeMem, Command: "numalab probe mem", Config: json.RawMessage(`{}`),
		Machine: fourSockets(t), Started: time.Unix(1700000000, 0)}
	if err := st.Begin(r); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Add(r.ID, memlat.KindSummary.Of(memlat.Summary{GHz: 2.5, LocalNS: 90, RemoteNS: 140})); err != nil {
		t.Fatal(err)
	}
	m, p, err := StoredMachine(st, r.ID)
	if err != nil || p == nil || p.LocalNS != 90 || p.GHz != 2.5 || !strings.HasPrefix(m.Source, "run 1 (") {
		t.Errorf("StoredMachine = %v, %+v, %v", m, p, err)
	}
	if _, _, err := StoredMachine(st, r.ID+1); err == nil || !strings.HasPrefix(err.Error(), "-from-run: ") {
		t.Errorf("no such run: %v", err)
	}
}

func TestRunMachine(t *testing.T) {
	if _, _, err := RunMachine(stored(t, 4, result.RunOLTP, nil)); err == nil ||
		!strings.Contains(err.Error(), "run 4 was stored without") {
		t.Errorf("bare run: %v", err)
	}
	top, p, err := RunMachine(stored(t, 5, result.RunOLTP, oneNode()))
	if err != nil || p != nil || top == nil || top.Source != "run 5 (test)" {
		t.Fatalf("machine only: %+v, %+v, %v", top, p, err)
	}
	probe := stored(t, 6, result.RunProbeMem, nil, memlat.KindSummary.Of(memlat.Summary{GHz: 3, LocalNS: 90}))
	top, p, err = RunMachine(probe)
	if err != nil || top != nil || p == nil || p.LocalNS != 90 {
		t.Errorf("probe only: %+v, %+v, %v", top, p, err)
	}
}

// TestSizeOnSpec: the spec's machine sizes the question; socket counts a
// topology lacks are refused.
func TestSizeOnSpec(t *testing.T) {
	q := model.Sizing{Workload: model.Default(), TargetTPS: 400,
		CPUs: []model.CPUOption{{Name: "8c", Cores: 8, GHz: 3, Price: 1000}}, Sockets: []int{1, 2}, SMT: 1}
	z, rows, err := MachineSpec{LocalNS: 67, RemoteNS: 125, Locality: -1}.Size(q, "1,2")
	if err != nil || z.Machine.LocalNS != 67 || len(rows) != 2 {
		t.Errorf("Size = %+v, %d rows, %v", z.Machine, len(rows), err)
	}
	q.Sockets = []int{8}
	if _, _, err := (MachineSpec{LocalNS: 90, Locality: -1, Topology: fourSockets(t)}).Size(q, "8"); err == nil ||
		!strings.HasPrefix(err.Error(), `-sockets: "8" does not fit`) {
		t.Errorf("8 sockets on 4: %v", err)
	}
}
