package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

// hostStore writes, into a new store, host's memory probe and OLTP run on
// a one-node machine of cores cores: 2 streams made tps at each repeat.
func hostStore(t *testing.T, dir, host string, cores int, warehouses int, tps ...float64) string {
	t.Helper()
	m := &result.Topology{Source: "test", CPUModel: "CPU of " + host}
	var cpus []int
	for i := range cores {
		cpus = append(cpus, i)
		m.CPUs = append(m.CPUs, result.CPU{ID: i, Core: i, Node: 0})
		m.Cores = append(m.Cores, result.Core{ID: i, CPUs: []int{i}})
	}
	m.Packages = []result.Package{{ID: 0, CPUs: cpus}}
	m.Nodes = []result.Node{{ID: 0, CPUs: cpus, MemBytes: 4 << 30}}
	path := filepath.Join(dir, host+".db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := tpcc.DefaultRunConfig()
	cfg.Warehouses = warehouses
	raw, _ := json.Marshal(cfg)
	add := func(kind string, es ...result.Entry) {
		r := &result.Run{Kind: kind, Host: host, Version: "test", Config: raw, Machine: m,
			Started: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
		if err := st.Begin(r); err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if _, err := st.Add(r.ID, e); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Finish(r.ID, r.Started.Add(time.Minute), result.StatusComplete, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	add(result.RunProbeMem, memlat.KindSummary.Of(memlat.Summary{GHz: 3, LocalNS: 100, WorkingSetBytes: 1 << 30}))
	var cells []result.Entry
	for i, v := range tps {
		cells = append(cells, result.KindCell.Of(result.Cell{Engine: "sqlite", Workload: "tpcc-ro", Streams: 1, Cores: 1,
			DataNode: -1, Repeat: i, TPS: v / 2, TPSPerCore: v / 2}),
			result.KindCell.Of(result.Cell{Engine: "sqlite", Workload: "tpcc-ro", Streams: 2, Cores: 2, DataNode: -1,
				Repeat: i, TPS: v, TPSPerCore: v / 2}))
	}
	add(result.RunOLTP, cells...)
	return path
}

// TestModelBuyHosts: two hosts, each in its own store, compared at their
// prices in every output format; and the bad inputs refused by name.
func TestModelBuyHosts(t *testing.T) {
	dir := t.TempDir()
	a := hostStore(t, dir, "alpha", 4, 1, 400, 410, 405)
	b := hostStore(t, dir, "beta", 8, 1, 600, 606, 612)
	c := hostStore(t, dir, "gamma", 8, 2, 600, 606, 612)
	prices := filepath.Join(dir, "prices.toml")
	if err := os.WriteFile(prices, []byte("licence_per_core = 10\n[[host]]\nname = \"alpha\"\n"+
		"price = 4000\n[[host]]\nname = \"beta\"\nhourly = 1\nhours = 8760\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "model", "buy", "--hosts", "--store", a, "--store", b, "--prices", prices)
	// alpha: 4,000 + 40 over 405 tps = 9,975 per 1,000; beta: 8,760 + 80 over 606 tps = 14,587.
	if err != nil || !strings.HasPrefix(out, "Buy alpha: 9,975 per 1,000 tps") ||
		!strings.Contains(out, "beta: 2 sockets") {
		t.Fatalf("err %v, output:\n%s", err, out)
	}
	out, _, err = runCLI(t, "model", "buy", "--hosts", "--store", a, "--store", b, "--prices", prices, "--csv")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || len(lines) != 3 || !strings.HasPrefix(lines[0], "host,store,run,") ||
		!strings.HasPrefix(lines[1], "alpha,") || !strings.HasSuffix(lines[1], ",buy") {
		t.Fatalf("csv: err %v\n%s", err, out)
	}
	out, _, err = runCLI(t, "model", "buy", "--hosts", "--store", a, "--store", b, "--prices", prices, "--json")
	var got struct{ Decision string }
	if err != nil || json.Unmarshal([]byte(out), &got) != nil || got.Decision != "alpha" {
		t.Fatalf("json: err %v, decision %q\n%s", err, got.Decision, out)
	}
	page := filepath.Join(dir, "hosts.html")
	if _, _, err = runCLI(t, "model", "buy", "--hosts", "--store", a, "--store", b, "--prices", prices,
		"--html", page); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(page); err != nil || !strings.Contains(string(data), "Buy alpha") {
		t.Fatalf("html: %v", err)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--store", a, "--store", b}, "-prices: missing"},
		{[]string{"--store", a, "--store", c, "--prices", prices}, "warehouses 2 against 1"},
		{[]string{"--store", a, "--store", b, "--prices", prices, "--run", "2"}, "with 2 stores a run is named by its UID"},
		{[]string{"--store", a, "--store", b, "--prices", prices, "--run", "2", "--engine", "sqlite"},
			"-engine: chooses each host's latest run"},
		{[]string{"--store", a, "--prices", prices}, "only host alpha has a run to compare"},
		{[]string{"--store", a, "--store", b, "--prices", prices, "--html", a}, "-html"},
	} {
		_, _, err := runCLI(t, append([]string{"model", "buy", "--hosts"}, bad.args...)...)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: got %v, want %q", bad.args, err, bad.want)
		}
	}
}
