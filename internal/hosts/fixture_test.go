package hosts

import (
	"cmp"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

// spec is one host of a fixture: its machine, what its OLTP run measured
// and the tps of its repeats at 1 and at 2 streams (2 streams is the best
// cell).
type spec struct {
	host       string
	cores, smt int
	engine     string
	warehouses int
	curve      bool
	version    string
	one, two   []float64 // tps of each repeat at 1 and 2 streams
	warning    string    // a preflight warning affecting OLTP, "" for none
	started    time.Time
	latencyNS  float64
	// now, when set, is the host's clock: each run starts at now(), as
	// a command's does, instead of at started.
	now func() time.Time
}

// topology is a one-socket, one-node machine of cores × smt CPUs.
func topology(host string, cores, smt int) *result.Topology {
	t := &result.Topology{Source: "test", Host: host, CPUModel: "Test CPU " + host, SMT: "on"}
	var all []int
	for c := range cores {
		var cpus []int
		for k := range smt {
			id := c + k*cores
			cpus = append(cpus, id)
			all = append(all, id)
		}
		t.Cores = append(t.Cores, result.Core{Package: 0, ID: c, CPUs: cpus})
	}
	for _, id := range all {
		t.CPUs = append(t.CPUs, result.CPU{ID: id, Core: id % cores, Node: 0, MaxMHz: 3000, Governor: "performance"})
	}
	t.Packages = []result.Package{{ID: 0, CPUs: all}}
	t.Nodes = []result.Node{{ID: 0, CPUs: all, MemBytes: 8 << 30}}
	return t
}

// write stores s's memory probe and OLTP run in st.
func write(t *testing.T, st *store.Store, s spec) {
	t.Helper()
	s.engine = cmp.Or(s.engine, "sqlite")
	s.version = cmp.Or(s.version, "test")
	s.warehouses = max(s.warehouses, 1)
	if s.started.IsZero() {
		s.started = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	}
	if s.latencyNS == 0 {
		s.latencyNS = 90
	}
	machine := topology(s.host, s.cores, s.smt)
	pf := preflight.Report{Settings: []preflight.Setting{{Name: "hypervisor", Value: "none detected"}}}
	if s.warning != "" {
		pf.Warnings = []preflight.Warning{{Setting: s.warning, Effect: "OLTP figures will read low", Fix: "fix it",
			Affects: []preflight.Figure{preflight.OLTP}}}
	}
	if s.now != nil {
		s.started = s.now()
	}
	probe := result.Run{Kind: result.RunProbeMem, Command: "numalab probe mem", Version: s.version,
		Host: s.host, Machine: machine,
		Started: s.started, Status: result.StatusComplete}
	put(t, st, &probe, preflight.Kind.Of(pf),
		memlat.KindSummary.Of(
			memlat.Summary{GHz: 3, DRAMNS4K: s.latencyNS, LocalNS: s.latencyNS, Nodes: []int{0}, CPUNodes: []int{0}}))
	cfg := tpcc.DefaultRunConfig()
	cfg.Engine, cfg.Warehouses, cfg.Repeat, cfg.Curve = s.engine, s.warehouses, len(s.two), s.curve
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	oltp := result.Run{Kind: result.RunOLTP, Command: "numalab run oltp", Config: raw, Version: s.version,
		Host: s.host, Machine: machine,
		Started: s.started.Add(time.Minute), Status: result.StatusComplete}
	if s.now != nil {
		oltp.Started = s.now()
	}
	items := []result.Entry{preflight.Kind.Of(pf)}
	for streams, reps := range [][]float64{nil, s.one, s.two} {
		for i, tps := range reps {
			items = append(items,
				result.KindCell.Of(result.Cell{Engine: s.engine, Workload: "tpcc-ro", Streams: streams, DOP: 1, Cores: streams,
					DataNode: -1, Repeat: i, TPS: tps, TPSPerCore: tps / float64(streams)}))
		}
	}
	put(t, st, &oltp, items...)
}

// put stores r with its items, as a command does.
func put(t *testing.T, st *store.Store, r *result.Run, items ...result.Entry) {
	t.Helper()
	status := r.Status
	r.Status = result.StatusRunning
	if err := st.Begin(r); err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if _, err := st.Add(r.ID, it); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Finish(r.ID, r.Started.Add(time.Minute), status, "", ""); err != nil {
		t.Fatal(err)
	}
}

// newStore is a new SQLite store in the test's directory.
func newStore(t *testing.T, name string) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// compareSpecs writes each spec into a store of its own and compares them
// at the prices given.
func compareSpecs(t *testing.T, prices []Price, specs ...spec) (*Comparison, error) {
	t.Helper()
	var stores []Store
	var names []string
	for _, s := range specs {
		st := newStore(t, s.host+".db")
		write(t, st, s)
		stores = append(stores, st)
		names = append(names, st.Path())
	}
	srcs, _, err := Select(stores, Selection{})
	if err != nil {
		return nil, err
	}
	return Compare(names, srcs, prices)
}
