package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/decide"
	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
)

// modelExamples are the commands of the README's model section: the
// literature's worked examples, then one of each subcommand.
var modelExamples = []struct{ golden, args string }{
	{"model-3ghz.txt", "model --ghz 3 --local-ns 67 --remote-ns 125 --sockets 1,2,4 --buffer-ns 15"},
	{"model-2ghz-1ghz.txt", "model --ghz-list 2,1 --local-ns 67 --remote-ns 125 --sockets 1,2,4 --buffer-ns 15"},
	{"model-2.2ghz-match.txt", "model --ghz 2.2 --local-ns 67 --remote-ns 125 --sockets 1,2,4 --buffer-ns 15"},
	{"model-smt-csv.txt", "model --ghz 2.2 --local-ns 67 --remote-ns 125 --cores 20 --smt 1,2 --csv"},
	{"model-dram.txt", "model dram --mts 2666 --timings 19-19-19 --tras 32ns --ghz 3"},
	{"model-tier.txt", "model tier --fast-ns 40 --slow-ns 300 --dram-ns 90"},
	{"model-dop.txt", "model dop --threshold 5 --cores-per-socket 16 --span-threshold 1000 --sockets 2"},
	{"model-dop-seconds.txt",
		"model dop --threshold 0.5s --units-per-second 57.135 --cores-per-socket 10 --cost 30,120,480,1057,1349"},
	{"model-fit.txt",
		"model fit --ghz 3 --points 67:27.27,96:19.54,125.5:15.17 --local-ns 67 --remote-ns 125 --sockets 1,2,4 --cores 16"},
	{"model-size.txt", "model size --target-tps 1000 --core-license-cost 7000 --local-ns 67 --remote-ns 125 " +
		"--buffer-ns 15 --sockets 1,2,4 --cpu-cost cores=16,ghz=3.0,price=3000 --cpu-cost cores=28,ghz=2.2,price=9000 " +
		"--system-cost 1:4000,2:9000,4:40000"},
}

func TestModelGolden(t *testing.T) {
	for _, ex := range modelExamples {
		out, stderr, err := runCLI(t, strings.Fields(ex.args)...)
		if err != nil {
			t.Errorf("numalab %s: %v\n%s", ex.args, err, stderr)
			continue
		}
		checkGolden(t, ex.golden, out)
	}
}

// TestModelWorkedExample checks the literature's numbers in the table
// itself, by hand: 3 GHz, 67 ns → 201 cycles; C = 9.5e6 + 5e5·201 =
// 1.1e8 cycles; 3e9/1.1e8 = 27.27 tps per core. Two sockets: (67+125)/2 =
// 96 ns, 288 cycles, C = 1.535e8, 19.54 tps per core, 1.433× in total.
// Four with 15 ns buffer: (67+375)/4+15 = 125.5 ns, 376.5 cycles.
func TestModelWorkedExample(t *testing.T) {
	out, _, err := runCLI(t, strings.Fields(modelExamples[0].args)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range [][]string{
		{"1", "1", "3", "67.0", "201.0", "110.00", "27.27", "27.27", "1.000", "1.000", "67.0"},
		{"2", "1", "3", "96.0", "288.0", "153.50", "19.54", "39.09", "0.717", "1.433", "44.8"},
		{"4", "1", "3", "125.5", "376.5", "197.75", "15.17", "60.68", "0.556", "2.225", "26.6"},
	} {
		if !modelHasRow(out, row) {
			t.Errorf("no row %v in\n%s", row, out)
		}
	}
	// At 2.2 GHz one socket needs 43.7 ns to match 2 sockets
	// ((9.5e6 + 5e5·211.2)/2 = 5.755e7 cycles → 96.1 cycles → 43.68 ns) and
	// 24.9 ns to match 4 ((9.5e6 + 5e5·276.1)/4 → 54.775 cycles → 24.90 ns).
	out, _, err = runCLI(t, strings.Fields(modelExamples[2].args)...)
	if err != nil {
		t.Fatal(err)
	}
	if !modelHasRow(out,
		[]string{"2", "1", "2.2", "96.0", "211.2", "115.10", "19.11", "38.23", "0.723", "1.446", "43.7"}) ||
		!modelHasRow(out, []string{"4", "1", "2.2", "125.5", "276.1", "147.55", "14.91", "59.64", "0.564", "2.256", "24.9"}) {
		t.Errorf("2.2 GHz matching latencies missing:\n%s", out)
	}
}

func modelHasRow(out string, fields []string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Join(strings.Fields(line), " ") == strings.Join(fields, " ") {
			return true
		}
	}
	return false
}

func TestModelJSON(t *testing.T) {
	out, _, err := runCLI(t, "model", "--ghz", "3", "--local-ns", "67", "--remote-ns", "125", "--sockets", "1,2", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var tab model.Table
	if err := json.Unmarshal([]byte(out), &tab); err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 2 || tab.Rows[1].LatencyNS != 96 || math.Abs(tab.Rows[0].TPSPerCore-3e9/1.1e8) > 1e-9 ||
		tab.Rows[1].Match1SNS == nil {
		t.Errorf("JSON table = %+v", tab)
	}
}

func TestModelBadInput(t *testing.T) {
	base := []string{"--ghz", "3", "--local-ns", "67", "--remote-ns", "125"}
	tests := []struct {
		args []string
		want []string // every one must appear in the error
	}{
		{[]string{"model", "--ghz", "0", "--local-ns", "67", "--remote-ns", "125"}, []string{"-ghz", `"0"`}},
		{[]string{"model", "--ghz", "3", "--local-ns", "-5", "--remote-ns", "0", "--miss", "1.5"},
			[]string{"-local-ns", "-remote-ns", "-miss", "from 0 to 1"}},
		{[]string{"model", "--ghz", "3", "--local-ns", "0", "--remote-ns", "125"}, []string{"-local-ns", `"0"`}},
		{[]string{"model", "--ghz", "3", "--local-ns", "67"}, []string{"-remote-ns: missing"}},
		{[]string{"model", "--ghz", "3"}, []string{"-local-ns: missing"}},
		{[]string{"model", "--local-ns", "67", "--remote-ns", "125"}, []string{"-ghz: missing"}},
		{append([]string{"model", "--sockets", "0,2"}, base...), []string{"-sockets"}},
		{append([]string{"model", "--smt", "0"}, base...), []string{"-smt"}},
		{append([]string{"model", "--miss", "-0.1"}, base...), []string{"-miss"}},
		{append([]string{"model", "--instructions", "0"}, base...), []string{"-instructions"}},
		{append([]string{"model", "--ghz-list", "3,0"}, base...), []string{"-ghz-list"}},
		{append([]string{"model", "--buffer-ns", "-15"}, base...), []string{"-buffer-ns"}},
		{append([]string{"model", "--cores", "0"}, base...), []string{"-cores"}},
		{append([]string{"model", "--json", "--csv"}, base...), []string{"-json and -csv"}},
		{[]string{"model", "frobnicate"}, []string{`unknown subcommand "frobnicate"`}},
		// Physical bounds, one check for every subcommand that takes the input.
		{[]string{"model", "--smt", "1,2", "--smt-gain", "100", "--ghz", "3", "--local-ns", "67", "--sockets", "1"},
			[]string{`-smt-gain: "100" is above 2, the --smt thread count`}},
		{[]string{"model", "--ghz", "3", "--local-ns", "200", "--remote-ns", "100"},
			[]string{`-remote-ns: "100" is below --local-ns (200 ns)`}},
		{[]string{"model", "--smt", "1,2", "--smt-gain", "1.5", "--ghz", "3", "--local-ns", "67", "--sockets", "1"},
			[]string{`-smt-gain: "1.5" is outside the published band, 1 to 1.19 (Linchi Shea's`, "--smt-run ID"}},
		{[]string{"model", "--smt", "1,2", "--smt-gain", "1.1", "--smt-run", "3", "--ghz", "3", "--local-ns", "67",
			"--sockets", "1"}, []string{"-smt-run", "give one or the other"}},
		{[]string{"model", "--ghz", "3", "--local-ns", "67", "--remote-ns", "125", "--sockets", "4,8"},
			[]string{`-sockets: 8 sockets need the hops between them`, "--topology FILE", "--remote-ns ONE_HOP,TWO_HOPS"}},
		{[]string{"model", "--ghz", "3", "--local-ns", "67", "--remote-ns", "125,190", "--sockets", "9"},
			[]string{"9 sockets: the remote latency per hop gives at most 8"}},
		{[]string{"model", "--ghz", "3", "--local-ns", "67", "--remote-ns", "125,100"},
			[]string{`-remote-ns: two hops' "100" is below one hop's 125 ns`}},
		{[]string{"model", "--ghz", "3", "--local-ns", "67", "--remote-ns", "125,190,250"},
			[]string{`-remote-ns: "125,190,250" is not valid`}},
		{[]string{"model", "buy", "--ghz", "3", "--local-ns", "67", "--remote-ns", "125,190"},
			[]string{"-remote-ns", "stop at 4 sockets"}},
		{[]string{"model", "size", "--target-tps", "10", "--local-ns", "200", "--remote-ns", "100", "--cpu-cost",
			"cores=8,ghz=3,price=1"}, []string{`-remote-ns: "100" is below --local-ns (200 ns)`}},
		{[]string{"model", "buy", "--ghz", "3", "--local-ns", "200", "--remote-ns", "100"},
			[]string{`-remote-ns: "100" is below --local-ns (200 ns)`}},
		{[]string{"model", "buy", "--ghz", "3", "--local-ns", "67", "--one-socket-ns", "90"},
			[]string{`-one-socket-ns: "90" is above --local-ns (67 ns)`}},
		{[]string{"model", "dram", "--mts", "1e300", "--timings", "19-19-19"},
			[]string{`-mts: "1e+300" is not a DDR transfer rate: want 200 to 8800 MT/s`}},
		{[]string{"model", "dram", "--mts", "2666", "--timings", "999-19-19"},
			[]string{`-timings: "999-19-19" gives CL 999 clocks, 749.44 ns at 2666 MT/s: want 5 to 30 ns`}},
		{[]string{"model", "dram", "--mts", "0", "--timings", "19-19"}, []string{"-mts", "-timings"}},
		{[]string{"model", "dram", "--timings", "19-19-19"}, []string{"-mts: missing: want MT/s above 0, e.g. --mts 2666"}},
		{[]string{"model", "dram", "--mts", "NaN", "--timings", "19-19-19", "--ghz", "-3"},
			[]string{`-mts: "NaN" is not valid`, `-ghz: "-3" is not valid: want GHz above 0`}},
		{[]string{"model", "tier", "--fast-ns", "40", "--slow-ns", "Inf"},
			[]string{`-slow-ns: "Inf" is not valid`, "-dram-ns: missing"}},
		{[]string{"model", "dop", "--threshold", "5", "--cores-per-socket", "8", "--sockets", "0"},
			[]string{`-sockets: "0" is not valid: want a whole number, 1 or more`}},
		{[]string{"model", "tier", "--fast-ns", "100", "--slow-ns", "50", "--dram-ns", "0"}, []string{"-dram-ns"}},
		{[]string{"model", "tier", "--fast-ns", "100", "--slow-ns", "50", "--dram-ns", "80"}, []string{"-slow-ns", "slower"}},
		{[]string{"model", "dop", "--threshold", "0", "--cores-per-socket", "0"},
			[]string{"-threshold", "-cores-per-socket"}},
		{[]string{"model", "dop", "--threshold", "5", "--cores-per-socket", "8", "--span-threshold", "50"},
			[]string{"-sockets", "span"}},
		{[]string{"model", "fit", "--points", "67:27,96:19"}, []string{"-ghz: missing"}},
		{[]string{"model", "fit", "--ghz", "3", "--points", "67:x"}, []string{"-points", "67:x"}},
		{[]string{"model", "fit", "--ghz", "3", "--points", "67:20,96:27"}, []string{"does not fall"}},
		{[]string{"model", "size", "--target-tps", "0", "--local-ns", "67", "--remote-ns", "125"},
			[]string{"-target-tps", "-cpu-cost: missing"}},
		{[]string{"model", "size", "--target-tps", "10", "--local-ns", "67", "--remote-ns", "125", "--cpu-cost",
			"cores=8,price=1"}, []string{"-cpu-cost", "no ghz"}},
		{[]string{"model", "size", "--target-tps", "10", "--local-ns", "67", "--remote-ns", "125", "--cpu-cost",
			"cores=8,ghz=3,price=1", "--system-cost", "2=9"}, []string{"-system-cost"}},
	}
	for _, tt := range tests {
		_, stderr, err := runCLI(t, tt.args...)
		if err == nil {
			t.Errorf("%v: no error", tt.args)
			continue
		}
		msg := err.Error() + stderr
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%v: error %q does not mention %q", tt.args, msg, w)
			}
		}
	}
	// A malformed --cpu-cost is refused as it is parsed, with the other
	// flags' errors.
	_, _, err := runCLI(t, "model", "size", "--cpu-cost", "cores=8,price", "--target-tps", "-1")
	if err == nil || !strings.Contains(err.Error(), `-cpu-cost: "cores=8,price" is not valid`) ||
		!strings.Contains(err.Error(), `-target-tps: "-1" is not valid: want tps above 0`) {
		t.Errorf("bad --cpu-cost and --target-tps: %v", err)
	}
}

// modelTwoPackageTopology is a 2-package machine, 2 NUMA nodes per package,
// 4 cores per package, with firmware distances.
func modelTwoPackageTopology() result.Topology {
	t := result.Topology{Source: "test-machine"}
	for i := range 8 {
		t.CPUs = append(t.CPUs, result.CPU{ID: i, Package: i / 4, Core: i, Node: i / 2, MaxMHz: 2500})
		t.Cores = append(t.Cores, result.Core{Package: i / 4, ID: i % 4, CPUs: []int{i}})
	}
	t.Packages = []result.Package{{ID: 0, CPUs: []int{0, 1, 2, 3}}, {ID: 1, CPUs: []int{4, 5, 6, 7}}}
	for n := range 4 {
		t.Nodes = append(t.Nodes, result.Node{ID: n, CPUs: []int{2 * n, 2*n + 1}})
	}
	t.Distances = [][]int{{10, 16, 22, 22}, {16, 10, 22, 22}, {22, 22, 10, 16}, {22, 22, 16, 10}}
	return t
}

func TestModelTopologyJSON(t *testing.T) {
	topo := modelTwoPackageTopology()
	b, _ := json.Marshal(topo)
	path := filepath.Join(t.TempDir(), "machine.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// Distances scaled to 100 ns: one socket (100+160)/2 = 130 ns; two
	// sockets (100+160+220+220)/4 = 175 ns. Clock from MaxMHz: 2.5 GHz,
	// 4 cores per socket. 130·2.5 = 325 cycles; C = 9.5e6 + 5e5·325 =
	// 1.72e8; 2.5e9/1.72e8 = 14.53 tps/core, ×4 cores = 58.14.
	out, stderr, err := runCLI(t, "model", "--topology", path, "--local-ns", "100")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !modelHasRow(out,
		[]string{"1", "1", "2.5", "130.0", "325.0", "172.00", "14.53", "58.14", "1.000", "1.000", "130.0"}) ||
		!strings.Contains(out, "Cores per socket: 4") || !strings.Contains(out, "\n        2    1  2.5       175.0") {
		t.Errorf("topology table:\n%s", out)
	}
	_, _, err = runCLI(t, "model", "--topology", path, "--local-ns", "100", "--sockets", "1,4")
	if err == nil || !strings.Contains(err.Error(), "-sockets") || !strings.Contains(err.Error(), "2 socket(s)") {
		t.Errorf("4 sockets on a 2-socket topology: %v", err)
	}
	_, _, err = runCLI(t, "model", "--topology", path)
	if err == nil || !strings.Contains(err.Error(), "-local-ns: missing") {
		t.Errorf("distances without --local-ns: %v", err)
	}
}

func TestModelFromRun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "runs.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	topo := modelTwoPackageTopology()
	run := &result.Run{Kind: "topo", Command: "numalab topo", Config: json.RawMessage(`{}`), Machine: &topo,
		Started: time.Unix(1700000000, 0)}
	if err := st.Begin(run); err != nil {
		t.Fatal(err)
	}
	bare := &result.Run{Kind: "topo", Command: "numalab topo", Config: json.RawMessage(`{}`),
		Started: time.Unix(1700000000, 0)}
	if err := st.Begin(bare); err != nil {
		t.Fatal(err)
	}
	st.Close()
	id := func(r *result.Run) string { return strconv.FormatInt(r.ID, 10) }
	out, stderr, err := runCLI(t, "model", "--store", db, "--from-run", id(run), "--local-ns", "100", "--ghz",
		"3", "--cores", "10")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(out, "run "+id(run)) || !strings.Contains(out, "Cores per socket: 10") ||
		!strings.Contains(out, "       175.0") {
		t.Errorf("from-run table:\n%s", out)
	}
	_, _, err = runCLI(t, "model", "--store", db, "--from-run", id(bare), "--local-ns", "100", "--ghz", "3")
	if err == nil || !strings.Contains(err.Error(), "without its machine") {
		t.Errorf("run without machine: %v", err)
	}
}

// storeModelRun stores a complete run with a machine and items, returning its ID.
func storeModelRun(t *testing.T, db string, machine *result.Topology, items ...result.Entry) string {
	t.Helper()
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := &result.Run{Kind: "probe-mem", Command: "numalab probe mem", Config: json.RawMessage(`{}`), Machine: machine,
		Started: time.Unix(1700000000, 0)}
	if err := st.Begin(run); err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if _, err := st.Add(run.ID, it); err != nil {
			t.Fatal(err)
		}
	}
	return strconv.FormatInt(run.ID, 10)
}

func TestModelFromProbeRun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "runs.db")
	// A one-node machine (1 package, 2 cores) whose probe measured 120 ns
	// at 4.2 GHz: other socket counts come from --remote-ns.
	one := result.Topology{Source: "sysfs:/",
		CPUs:     []result.CPU{{ID: 0, Core: 0}, {ID: 1, Core: 1}},
		Cores:    []result.Core{{ID: 0, CPUs: []int{0}}, {ID: 1, CPUs: []int{1}}},
		Packages: []result.Package{{ID: 0, CPUs: []int{0, 1}}},
		Nodes:    []result.Node{{ID: 0, CPUs: []int{0, 1}}},
	}
	id := storeModelRun(t, db, &one,
		memlat.KindSummary.Of(memlat.Summary{GHz: 4.2, Nodes: []int{0}, MatrixNS: [][]float64{{120}}, LocalNS: 120}))
	out, stderr, err := runCLI(t, "model", "--store", db, "--from-run", id, "--remote-ns", "200", "--sockets", "1,2")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	// 120·4.2 = 504 cycles; C = 9.5e6 + 5e5·504 = 2.615e8; 4.2e9/2.615e8 =
	// 16.06 tps per core, ×2 cores = 32.12. Two sockets: (120+200)/2 = 160 ns.
	if !modelHasRow(out,
		[]string{"1", "1", "4.2", "120.0", "504.0", "261.50", "16.06", "32.12", "1.000", "1.000", "120.0"}) ||
		!strings.Contains(out, "run "+id+": measured local latency") ||
		!strings.Contains(out, "        2    1  4.2       160.0") {
		t.Errorf("from probe run:\n%s", out)
	}
	if _, _, err := runCLI(t, "model", "--store", db, "--from-run", id, "--sockets", "1,2"); err == nil ||
		!strings.Contains(err.Error(), "-remote-ns: missing") {
		t.Errorf("2 sockets without --remote-ns: %v", err)
	}
	// A 2-package, 4-node machine with a measured matrix (reordered from
	// the probe's node order 3,2,1,0): one socket = nodes 0,1: rows
	// (90+140)/2 = 115 ns.
	two := modelTwoPackageTopology()
	m := [][]float64{ // rows and columns in node order 3, 2, 1, 0
		{90, 140, 200, 200},
		{140, 90, 200, 200},
		{200, 200, 90, 140},
		{200, 200, 140, 90},
	}
	id = storeModelRun(t, db, &two,
		memlat.KindSummary.Of(memlat.Summary{GHz: 3, Nodes: []int{3, 2, 1, 0}, MatrixNS: m, LocalNS: 90, RemoteNS: 180}))
	out, stderr, err = runCLI(t, "model", "--store", db, "--from-run", id)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	// Two sockets: every row 90, 140, 200, 200 → 157.5 ns.
	if !strings.Contains(out, "measured node latency matrix") ||
		!strings.Contains(out, "        1    1    3       115.0") ||
		!strings.Contains(out, "        2    1    3       157.5") {
		t.Errorf("from probe run with matrix:\n%s", out)
	}
}

func TestModelHwlocXML(t *testing.T) {
	// hwloc's test machine: 8 NUMA nodes of 2 cores, no packages (so
	// each node is a socket), SLIT distances 10 local, 20 remote. Scaled
	// to 100 ns: one socket 100 ns; two: (100+200)/2 = 150 ns, the same
	// as the uniform model with remote = 100·20/10 = 200 ns.
	const fixture = "../../testdata/topology/16amd64-4distances.xml"
	out, stderr, err := runCLI(t, "model", "--topology", fixture, "--local-ns", "100", "--ghz", "2", "--sockets", "1,2,4")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	uniform, _, err := runCLI(t, "model", "--local-ns", "100", "--remote-ns", "200", "--ghz", "2", "--sockets",
		"1,2,4", "--cores", "2")
	if err != nil {
		t.Fatal(err)
	}
	_, rows, _ := strings.Cut(out, "Cores per socket")
	_, urows, _ := strings.Cut(uniform, "Cores per socket")
	if !strings.Contains(out, "hwloc:"+fixture) || rows != urows {
		t.Errorf("hwloc table differs from the uniform model's:\n%s\n%s", out, uniform)
	}
	// Eight sockets from the distances (all one hop here): (100 + 7·200)/8
	// = 187.5 ns, flagged as beyond the published figures.
	out, _, err = runCLI(t, "model", "--topology", fixture, "--local-ns", "100", "--ghz", "2", "--sockets", "1,8")
	if err != nil || !strings.Contains(out, "        8    1    2       187.5") ||
		!strings.Contains(out, "8 sockets: beyond the published figures") {
		t.Errorf("8 sockets from distances: %v\n%s", err, out)
	}
	_, _, err = runCLI(t, "model", "--topology", fixture, "--local-ns", "100", "--ghz", "2", "--sockets", "9")
	if err == nil || !strings.Contains(err.Error(), "-sockets") ||
		!strings.Contains(err.Error(), "it has 8 socket(s) (try --sockets 1,2,3,4,5,6,7,8)") {
		t.Errorf("9 sockets on 8: %v", err)
	}
}

// TestModelFitRun fits the real runs of this VM kept as the report's
// fixture: a quick memory probe and an OLTP run.
func TestModelFitRun(t *testing.T) {
	path := reportStore(t, 1)
	ids := map[string]int64{}
	for id := int64(1); id <= 4; id++ {
		ids[storedRun(t, path, id).Kind] = id
	}
	out, _, err := runCLI(t, "model", "fit", "--store", path, "--run", strconv.FormatInt(ids["oltp"], 10))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Fit of OLTP run", "the published stall share 60% of those cycles is taken as waiting",
		"Predictions for the fitted workload", "C = A + M·L·f with A = "} {
		if !strings.Contains(out, want) {
			t.Errorf("model fit --run output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out,
		fmt.Sprintf("no model-fit run of sqlite on host %q in the store ('numalab run pages --engine sqlite' stores "+
			"one): A and M fitted to OLTP run %d alone", storedRun(t, path, ids["oltp"]).Host, ids["oltp"])) {
		t.Errorf("model fit --run does not say the store has no model-fit run:\n%s", out)
	}
	_, _, err = runCLI(t, "model", "fit", "--store", path, "--run", strconv.FormatInt(ids["probe-mem"], 10))
	if err == nil || !strings.Contains(err.Error(), "not an OLTP run") {
		t.Errorf("fitting a probe run: %v", err)
	}
}

// TestModelFitRunUsesStoredFit: with a model-fit run in the store (the
// guest's eval stored it as run 5 here), 'model fit --run' and 'model buy
// --run' take A and M from it, the newest or the one --fit-run names, and
// say which; --fit-run of another kind of run, or without --run, is
// refused.
func TestModelFitRunUsesStoredFit(t *testing.T) {
	path := reportStore(t, 1)
	addFixtureRuns(t, path, "kvm-2vcpu-model-fit.json")
	if r := storedRun(t, path, 5); r.Kind != calib.RunFit {
		t.Fatalf("run 5 is a %s run, want the stored fit", r.Kind)
	}
	newest := "model-fit run 5, sqlite's tpcc-ro, the newest of sqlite on this host in the store (--fit-run " +
		"ID chooses another)"
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, newest},
		{[]string{"--fit-run", "5"}, "model-fit run 5, sqlite's tpcc-ro, named by --fit-run"},
	} {
		out, _, err := runCLI(t, append([]string{"model", "fit", "--store", path, "--run", "2"}, c.args...)...)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"\n  " + c.want + "\n", "fitted to run 5: tpcc-ro", "A = 381,594 core cycles"} {
			if !strings.Contains(out, want) {
				t.Errorf("model fit --run 2 %q: output lacks %q:\n%s", c.args, want, out)
			}
		}
	}
	out, _, err := runCLI(t, "model", "buy", "--store", path, "--run", "2", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var p decide.Purchase
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if p.FitChoice != newest || math.Abs(p.Workload.Core()-381_594) > 1 {
		t.Errorf("model buy --run 2: fit %q, A %v; want %q and its A", p.FitChoice, p.Workload.Core(), newest)
	}
	out, _, err = runCLI(t, "model", "buy", "--store", path, "--run", "2")
	if err != nil || !strings.Contains(out, "\nFit: "+newest+"\n") {
		t.Errorf("model buy --run 2 does not say which fit (%v):\n%s", err, out)
	}
	for _, args := range [][]string{{"fit", "--run", "2", "--fit-run", "1"}, {"buy", "--run", "2", "--fit-run", "1"}} {
		_, _, err := runCLI(t, append([]string{"model", args[0], "--store", path}, args[1:]...)...)
		if err == nil || !strings.Contains(err.Error(), "-fit-run: run 1 is a probe-mem run, not a model-fit run") {
			t.Errorf("model %q: %v", args, err)
		}
	}
	for _, args := range [][]string{{"fit", "--points", "100:300", "--ghz", "3", "--fit-run", "5"},
		{"buy", "--ghz", "3", "--local-ns", "90", "--fit-run", "5"}} {
		_, _, err := runCLI(t, append([]string{"model", args[0]}, args[1:]...)...)
		if err == nil || !strings.Contains(err.Error(), "-fit-run: \"5\"") || !strings.Contains(err.Error(), "needs --run") {
			t.Errorf("model %q: %v", args, err)
		}
	}
}

// TestModelBeyondFour: more than four sockets come from a topology's
// distances or from the remote latency per hop, and every row beyond four
// is flagged with where its latency came from.
func TestModelBeyondFour(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--topology", "../../testdata/topology/192em64t-24n8c2t.xml", "--local-ns", "76", "--sockets", "4,6,8"},
			"6, 8 sockets: beyond the published figures, which stop at 4 sockets (4 to 8 sockets gave about " +
				"1.5× before NUMA, Joe Chang): the latency comes from hwloc:../../testdata/topology/192em64t-24n8c2t.xml: " +
				"node distances × 76 ns / 10."},
		{[]string{"--local-ns", "67", "--remote-ns", "125,190", "--sockets", "4,5,8"},
			"5, 8 sockets: beyond the published figures, which stop at 4 sockets (4 to 8 sockets gave about 1.5× before " +
				"NUMA, Joe Chang): the latency comes from the remote latency per hop (--remote-ns): three sockets one " +
				"hop away at 125 ns, the rest two hops away at 190 ns."},
	} {
		out, _, err := runCLI(t, append([]string{"model", "--ghz", "3"}, c.args...)...)
		if err != nil || !strings.Contains(out, c.want) {
			t.Errorf("%v: %v\n%s\nwant the line %q", c.args, err, out, c.want)
		}
	}
	// (67 + 3·125 + 4·190)/8 = 150.25 ns for eight sockets by hops.
	out, _, _ := runCLI(t, "model", "--ghz", "3", "--local-ns", "67", "--remote-ns", "125,190", "--sockets", "8")
	if !strings.Contains(strings.Join(strings.Fields(out), " "), " 8 1 3 150.2 450.8 ") {
		t.Errorf("8 sockets by hops:\n%s", out)
	}
}

// TestModelSMTRun: --smt-run takes the gain a stored OLTP run measured,
// here 720/600 = 1.2, above the published band that --smt-gain is held to,
// and says where it came from.
func TestModelSMTRun(t *testing.T) {
	m := &result.Topology{Source: "test", Cores: []result.Core{{ID: 0, CPUs: []int{0, 1}}}}
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r := &result.Run{Kind: result.RunOLTP, Machine: m, Status: result.StatusComplete}
	if err := st.Begin(r); err != nil {
		t.Fatal(err)
	}
	for _, c := range []result.Cell{
		{Placement: "smt=on", CPUs: []int{0, 1}, Cores: 1, Streams: 2, DataNode: -1, TPS: 720},
		{Placement: "smt=off", CPUs: []int{0}, Cores: 1, Streams: 1, DataNode: -1, TPS: 600},
	} {
		if _, err := st.Add(r.ID, result.KindCell.Of(c)); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	id := strconv.FormatInt(r.ID, 10)
	out, _, err := runCLI(t, "model", "--store", path, "--smt-run", id, "--smt", "1,2", "--ghz", "3", "--local-ns",
		"67", "--sockets", "1")
	if err != nil || !modelHasRow(out,
		[]string{"1", "2", "3", "67.0", "201.0", "110.00", "32.73", "32.73", "1.000", "1.000", "1.200", "67.0"}) ||
		!strings.Contains(out, "SMT gain: 1.2, the ratio of a core's throughput with more than one hardware thread "+
			"to one thread's, measured: OLTP run "+id+"'s best smt=on median") {
		t.Errorf("--smt-run %s: %v\n%s", id, err, out)
	}
}
