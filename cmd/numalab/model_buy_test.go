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

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/model"
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
	return path, add(result.RunOLTP, result.KindCell.Of(result.Cell{Placement: "smt=off", CPUs: []int{0}, Cores: 1, Streams: 1, DataNode: -1, TPS: 300}))
}

// TestModelBuyHandComputed runs 'model buy' on the fixture calibration with
// testdata/candidates.toml and checks every figure against the arithmetic:
//
// Calibration: one point, 300 tps at 100 ns and 3 GHz: C = 3e9/300 = 1e7
// cycles; L·f = 300 cycles; m = 0.05 assumed, so
// I = 1e7/(0.95 + 0.05·300) = 1e7/15.95 = 626,959.25.
// For any server C = I·(0.95 + 0.05·L·f), so tps per core = 300 · 15.95 /
// (0.95 + 0.05·L·f) · f/3.
//
//	A: 1S × 8 cores, 3 GHz, L = 100 ns: C = 1e7, 300 tps per core,
//	   2,400 tps; cost 10,000 + 8 × 1,000 = 18,000; 18,000 / 2.4 = 7,500
//	   per 1,000 tps.
//	B: 2S × 8 cores, 3 GHz, L = (100 + 200)/2 = 150 ns, L·f = 450:
//	   0.95 + 22.5 = 23.45, 300 · 15.95/23.45 = 204.0512 tps per core,
//	   × 16 = 3,264.819 tps; cost 16,000 + 16 × 1,000 = 32,000;
//	   32,000 / 3.264819 = 9,801.5 per 1,000 tps.
//	C: 1S × 4 cores, 4 GHz, L = (20+20+20)·2000/3200 + 62.5 = 100 ns,
//	   L·f = 400: 0.95 + 20 = 20.95, 400 · 15.95/20.95 = 304.5346 tps per
//	   core, × 4 = 1,218.138 tps; cost 6,000 + 4 × 1,000 = 10,000;
//	   10,000 / 1.218138 = 8,209.2 per 1,000 tps.
//
// Winners: total tps B, tps per core C, total cost C, cost per 1,000 tps A.
//
// Band (one point, so m at 0.005 and 0.5 with I refitted to C = 1e7 at
// 300 cycles): A sits at the measured point, 2,400 to 2,400. B at 450
// cycles: m = 0.005, I = 1e7/(0.995 + 1.5) = 4,008,016.0, C = I·(0.995 +
// 2.25) = 13,006,012.0, 3e9/C·16 = 3,690.600; m = 0.5, I = 1e7/(0.5 + 150)
// = 66,445.18, C = I·(0.5 + 225) = 14,983,388.7, 3e9/C·16 = 3,203.547.
//
// Break-even: B costs 32,000 per 16·3e9/C tps, i.e. C/1,500 per 1,000 tps,
// with L = 100 + 100·r at remote fraction r. Equal to A's 7,500 at
// C = 1.125e7 = I·(0.95 + 0.15·L): L = (1.125·15.95 − 0.95)/0.15 =
// 113.2917 ns, r = 13.29%.
func TestModelBuyHandComputed(t *testing.T) {
	path, oltp := buyStore(t)
	args := []string{"model", "buy", "--store", path, "--run", strconv.FormatInt(oltp, 10), "--candidates", filepath.Join("testdata", "candidates.toml")}
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
		{"latency_ns": 100, "tps_per_core": 300, "total_tps": 2400, "total_tps_low": 2400, "total_tps_high": 2400, "total_cost": 18000, "cost_per_1000_tps": 7500},
		{"latency_ns": 150, "tps_per_core": 204.0512, "total_tps": 3264.819, "total_tps_low": 3203.547, "total_tps_high": 3690.600, "total_cost": 32000, "cost_per_1000_tps": 9801.5},
		{"latency_ns": 100, "tps_per_core": 304.5346, "total_tps": 1218.138, "total_cost": 10000, "cost_per_1000_tps": 8209.2},
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
	var p model.Purchase
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if be := p.BreakEven; be == nil || be.OneSocket != "A 1S 8c 3GHz" || be.MultiSocket != "B 2S 8c 3GHz" || math.Abs(be.RemoteFraction-0.132917) > 1e-5 {
		t.Errorf("break-even %+v, want A against B at 13.29%%", be)
	}
	out, _, err = runCLI(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"Buy A 1S 8c 3GHz: 7,500 per 1,000 tps (2,400 tps predicted, band 2,400 to 2,400); a 2-socket box (B 2S 8c 3GHz) would win only if the workload's remote fraction were below 13.29% (the model assumes 50% with no locality).",
		"Best: total tps B 2S 8c 3GHz; tps per core C 1S 4c 4GHz; total cost C 1S 4c 4GHz; cost per 1,000 tps A 1S 8c 3GHz.",
		"remote latency 186.6 ns (assumed: 1.87× the local 100.0 ns",
		"miss fraction m 0.05 (assumed:",
		"Band (low to high tps): m from 0.005 to 0.50 (its plausible range)",
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
	var p model.Purchase
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range p.Rows {
		names = append(names, r.Server.Name)
		if !strings.Contains(r.Server.Note, "assumed") && !strings.Contains(r.Server.Note, "not measured") {
			t.Errorf("%s: note %q does not say what is assumed", r.Server.Name, r.Server.Note)
		}
	}
	if got := strings.Join(names, "|"); got != "this CPU ×1|this CPU ×2|this CPU ×4|half cores, +25% clock|this CPU ×1, SMT 2|this CPU ×1, low-latency DRAM" {
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
		{[]string{"--ghz", "3", "--local-ns", "90", "--candidates", filepath.Join(dir, "none.toml")}, []string{"-candidates:", "no such file"}},
		{[]string{"--candidates", file("bad.toml", "[[server]]\nname = \"x\"\nsockets = = 2\n")}, []string{"bad.toml:3:"}},
		{[]string{"--candidates", file("unknown.toml", "[[server]]\nname = \"x\"\nsockets = 1\ncores_per_socket = 4\nghz = 3\nlocal_ns = 90\nprice = 1000\nlicense = 5\n")},
			[]string{`unknown.toml:8: unknown key "server.license"`}},
		{[]string{"--candidates", file("price.toml", "[[server]]\nname = \"x\"\nsockets = 1\ncores_per_socket = 0\nghz = 300\nlocal_ns = 90\nprice = -5\n")},
			[]string{`price.toml:4: server "x": cores_per_socket = 0 is not a core count`, `price.toml:5: server "x": ghz = 300 is not a core clock`, `price.toml:7: server "x": price = -5 is not a price`}},
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
