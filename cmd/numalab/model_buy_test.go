package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/decide"
	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
)

// buyStore writes a fixture calibration to a new store: a memory probe that
// measured 3 GHz and 100 ns on a one-node machine of two cores, and an OLTP
// run whose one stream made 300 tps. It returns the store and the OLTP run.
func buyStore(t *testing.T) (string, int64) {
	t.Helper()
	m := &result.Topology{Source: "test"}
	for i := range 2 {
		m.CPUs = append(m.CPUs, result.CPU{ID: i, Core: i, Node: 0})
		m.Cores = append(m.Cores, result.Core{ID: i, CPUs: []int{i}})
	}
	m.Packages = []result.Package{{ID: 0, CPUs: []int{0, 1}}}
	m.Nodes = []result.Node{{ID: 0, CPUs: []int{0, 1}}}
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	add := func(kind string, e result.Entry) int64 {
		r := &result.Run{Kind: kind, Machine: m, Status: result.StatusComplete}
		if err := st.Begin(r); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Add(r.ID, e); err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	add(result.RunProbeMem, memlat.KindSummary.Of(memlat.Summary{GHz: 3, LocalNS: 100, WorkingSetBytes: 1 << 30}))
	return path, add(result.RunOLTP,
		result.KindCell.Of(result.Cell{Placement: "smt=off", CPUs: []int{0}, Cores: 1, Streams: 1, DataNode: -1, TPS: 300}))
}

// TestModelBuyHandComputed runs 'model buy' on the fixture calibration with
// testdata/candidates.toml and checks every figure against the arithmetic:
//
// Calibration: one latency, 300 tps at 100 ns and 3 GHz: C = 3e9/300 = 1e7
// cycles; L·f = 300 cycles; the published stall share 0.6 gives
// A = 4e6 core cycles and M = 6e6/300 = 20,000 waits; at the band's ends,
// 0.5 and 0.7, A = 5e6, M = 16,666.7 and A = 3e6, M = 23,333.3.
//
//	A: 1S × 8 cores, 3 GHz, L = 100 ns: C = 1e7, 300 tps per core,
//	   2,400 tps (every end of the band passes through it); cost 10,000 +
//	   8 × 1,000 = 18,000; 18,000 / 2.4 = 7,500 per 1,000 tps.
//	B: 2S × 8 cores, 3 GHz, L = (100 + 200)/2 = 150 ns, L·f = 450:
//	   C = 4e6 + 9e6 = 1.3e7, 230.769 tps per core, × 16 = 3,692.308 tps
//	   (band: 1.25e7 → 3,840, 1.35e7 → 3,555.556); cost 16,000 + 16 × 1,000
//	   = 32,000; 32,000 / 3.692308 = 8,666.7 per 1,000 tps.
//	C: 1S × 4 cores, 4 GHz, L = (20+20+20)·2000/3200 + 62.5 = 100 ns,
//	   L·f = 400: C = 4e6 + 8e6 = 1.2e7, 333.333 tps per core, × 4 =
//	   1,333.333 tps (band: 1.16667e7 → 1,371.429, 1.23333e7 → 1,297.297);
//	   cost 6,100 + 4 × 1,000 = 10,100; 7,575 per 1,000 tps, band 7,364.6
//	   to 7,785.4.
//
// Winners: total tps B, tps per core C, total cost C, cost per 1,000 tps A;
// but C's cost band reaches below A's 7,500: cannot tell, and the fit's
// band is what overlaps.
//
// Break-even: B costs 32,000 per 16·3e9/C tps, i.e. C/1,500 per 1,000 tps,
// with L = 100 + 100·r at remote fraction r. Equal to A's 7,500 at
// C = 1.125e7 = 4e6 + 6e4·L: L = 120.833 ns, r = 20.83%.
//
// Flips against C: C costs 10,100·1e7·(1 + s/3)/16e6 per 1,000 tps at a
// stall share s, 7,500 at s = 0.5644; A's price would flip at 7,575 × 2.4
// − 8,000 = 10,180.
func TestModelBuyHandComputed(t *testing.T) {
	path, oltp := buyStore(t)
	args := []string{"model", "buy", "--store", path, "--run", strconv.FormatInt(oltp, 10), "--candidates",
		filepath.Join("testdata", "candidates.toml")}
	out, _, err := runCLI(t, append(args, "--csv")...)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	want := []map[string]float64{
		{"latency_ns": 100, "tps_per_core": 300, "total_tps": 2400, "total_tps_low": 2400, "total_tps_high": 2400,
			"total_cost": 18000, "cost_per_1000_tps": 7500},
		{"latency_ns": 150, "tps_per_core": 230.7692, "total_tps": 3692.308, "total_tps_low": 3555.556,
			"total_tps_high": 3840, "total_cost": 32000, "cost_per_1000_tps": 8666.667},
		{"latency_ns": 100, "tps_per_core": 333.3333, "total_tps": 1333.333, "total_tps_low": 1297.297,
			"total_tps_high": 1371.429, "total_cost": 10100, "cost_per_1000_tps": 7575},
	}
	best := []string{"cost per 1,000 tps", "total tps", "tps per core; total cost"}
	if len(rows) != 1+len(want) {
		t.Fatalf("%d rows, want %d:\n%s", len(rows)-1, len(want), out)
	}
	for i, w := range want {
		row := rows[i+1]
		for k, v := range w {
			got, err := strconv.ParseFloat(row[col[k]], 64)
			if err != nil || math.Abs(got-v) > 5e-5*v {
				t.Errorf("%s: %s = %s, want %g", row[0], k, row[col[k]], v)
			}
		}
		if row[col["best_on"]] != best[i] {
			t.Errorf("%s: best on %q, want %q", row[0], row[col["best_on"]], best[i])
		}
	}
	out, _, err = runCLI(t, append(args, "--json")...)
	if err != nil {
		t.Fatal(err)
	}
	var p decide.Purchase
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if be := p.BreakEven; be == nil || be.OneSocket != "A 1S 8c 3GHz" || be.MultiSocket != "B 2S 8c 3GHz" ||
		math.Abs(be.RemoteFraction-0.208333) > 1e-5 {
		t.Errorf("break-even %+v, want A against B at 20.83%%", be)
	}
	if p.Decision != "" || len(p.Rivals) != 1 || p.Rivals[0] != "C 1S 4c 4GHz" ||
		!strings.Contains(p.Decider, "more latency points") {
		t.Errorf("decision %q, rivals %q, decider %q; want cannot tell A from C, decided by more latency points",
			p.Decision, p.Rivals, p.Decider)
	}
	flips := map[string]float64{}
	for _, f := range p.Flips {
		flips[f.Input] = f.At
	}
	if math.Abs(flips["stall share at one socket"]-0.56436) > 1e-4 ||
		math.Abs(flips["the price of A 1S 8c 3GHz"]-10180) > 1e-6 {
		t.Errorf("flips %+v, want the stall share at 0.5644 and A's price at 10,180", p.Flips)
	}
	out, _, err = runCLI(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"Cannot tell: A 1S 8c 3GHz is cheapest (7,500 per 1,000 tps, band 7,500 to 7,500; 2,400 tps predicted, band " +
			"2,400 to 2,400), but its cost band overlaps C 1S 4c 4GHz's. The measurement that would decide: more latency points",
		"A 2-socket box (B 2S 8c 3GHz) would win only if the workload's remote fraction were below 20.83% (the model " +
			"assumes 50% with no locality).",
		"Against C 1S 4c 4GHz, the next cheapest, it rests on: stall share at one socket 0.6 (flips at 0.5644); " +
			"the price of A 1S 8c 3GHz 10,000 (flips at 10,180).",
		"Best: total tps B 2S 8c 3GHz; tps per core C 1S 4c 4GHz; total cost C 1S 4c 4GHz; cost per 1,000 tps A 1S 8c 3GHz.",
		"core cycles per transaction A 4,000,000 cycles (3,000,000 cycles to 5,000,000 cycles) (assumed:",
		"Band (low to high tps): the fit: a stall share from 50% to 70%",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("text output lacks %q:\n%s", w, out)
		}
	}
}

// TestModelBuyBuiltin: without a file the candidates come from this CPU,
// as the calibration measured it: 3 GHz, two cores per socket.
func TestModelBuyBuiltin(t *testing.T) {
	path, oltp := buyStore(t)
	out, _, err := runCLI(t, "model", "buy", "--store", path, "--run", strconv.FormatInt(oltp, 10), "--json")
	if err != nil {
		t.Fatal(err)
	}
	var p decide.Purchase
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range p.Rows {
		names = append(names, r.Server.Name)
		if !strings.Contains(r.Server.Note, decide.Illustrative) && !strings.Contains(r.Server.Note, "SMT gain stated") {
			t.Errorf("%s: note %q does not say its price is illustrative", r.Server.Name, r.Server.Note)
		}
	}
	if got := strings.Join(names, "|"); got != "this CPU ×1|this CPU ×2|this CPU ×4|half cores, +25% clock|"+
		"this CPU ×1, SMT 2|this CPU ×1, low-latency DRAM" {
		t.Errorf("built-in candidates %s", got)
	}
	if r := p.Rows[0]; r.TPSPerCore != 300 || r.Server.CoresPerSocket != 2 || r.Server.GHz != 3 {
		t.Errorf("1 socket of this CPU: %+v, want 2 cores at 3 GHz, 300 tps per core (the measured point)", r)
	}
}

func TestModelBuyBadInput(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--ghz", "3", "--local-ns", "90", "--candidates", filepath.Join(dir, "none.toml")},
			[]string{"-candidates:", "no such file"}},
		{[]string{"--candidates", file("bad.toml", "[[server]]\nname = \"x\"\nsockets = = 2\n")}, []string{"bad.toml:3:"}},
		{[]string{"--candidates", file("unknown.toml",
			"[[server]]\nname = \"x\"\nsockets = 1\ncores_per_socket = 4\nghz = 3\nlocal_ns = 90\nprice = 1000\nlicense = 5\n")},
			[]string{`unknown.toml:8: unknown key "server.license"`}},
		{[]string{"--candidates", file("price.toml",
			"[[server]]\nname = \"x\"\nsockets = 1\ncores_per_socket = 0\nghz = 300\nlocal_ns = 90\nprice = -5\n")},
			[]string{`price.toml:4: server "x": cores_per_socket = 0 is not a core count`,
				`price.toml:5: server "x": ghz = 300 is not a core clock`, `price.toml:7: server "x": price = -5 is not a price`}},
		{[]string{"--ghz", "0", "--local-ns", "90"}, []string{"-ghz:"}},
		{[]string{"--ghz", "12", "--local-ns", "90"}, []string{`-ghz: "12" is not valid: want GHz above 0 and up to 10`}},
		{[]string{"--local-ns", "90", "--smt", "0"}, []string{"-ghz: missing", `-smt: "0" is not valid`}},
	} {
		_, _, err := runCLI(t, append([]string{"model", "buy"}, c.args...)...)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("model buy %q: error %v, want it to contain %q", c.args, err, w)
			}
		}
	}
}
