package vmtest

import (
	"encoding/json"
	"flag"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/evalplan"
	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
)

// machineCase is one machine of the matrix and what its guest runs beyond
// the checks every machine gets (topology, selectors, --data-node on every
// node, probe mem's N×N matrix and labels, run oltp local against remote).
//
// eval, the main job, runs at its smallest budget (2 minutes, or the least
// the machine has room for, which it keeps) on the machines of the shapes
// it exists for: SMT on two nodes, and two sockets of two nodes each with
// a memory-only node, where its quick probe's matrix is not square. Its
// quick probe is cut at its share of the budget, which under TCG may come
// before the matrix: then the summary must say so, and probe mem's matrix
// beside it is checked as on every machine. (The memory-only node was a
// machine of its own, with 2 CPU nodes and an eval of its own: joined to
// the two-socket machine, its checks run on one eval's guest, which saves
// the suite one eval budget and one boot.) The suite runs the SMT
// machine's eval; the two-socket one's only with -eval-memory-only
// (evalOnFlag): its 2 minutes of emulated CPUs were a sixth of the
// suite's CPU time, and what it alone covered is tested on this host
// (a cut probe's matrix with empty rows in every format: internal/memlat's
// TestWriteTextCut and cmd/numalab's TestCutRenders; eval's plan on
// memory-only and two-socket machines: internal/evalplan's tests of the
// captured machines). An eval killed (exit 137) shows
// the guest kernel's OOM report: the one seen (this machine, at 1.5 GiB a
// CPU node) was eval itself grown to 6 GiB by an endless loop of the
// report's chart ticks, fixed in internal/report's Scale; not the guest's
// size, so its nodes are back to 1 GiB.
//
// (Two nodes without SMT were a third guest, of their own: their checks,
// the host tests, a placed DuckDB cell and --data-node on ext4, now run in
// the SMT guest, which has the same two nodes. The memory-only guest is
// the one without SMT. That saves the suite a boot and a second run of
// every common check, about 2 minutes of a guest.)
//
// --data-node is checked for every node on tmpfs and on the RAM disk's
// filesystem (ext4) on the 2-node machine; on the other for every node
// once, on tmpfs and the RAM disk's (ext2) by turns.
//
// A guest's commands cost far more than its boot (a few seconds), but
// every guest runs the matrix's checks of its own, so a test of another
// file that needs one of these machines adds its commands to the
// machine's guest run (extra) instead of booting its own: see matrixRun.
type machineCase struct {
	name   string
	m      Machine
	bothFS bool     // --data-node for every node on both filesystems
	eval   evalWhen // eval --budget 2m (its minimum), with its quick probe
	// extra adds other tests' sections to the guest's script, after the
	// matrix's own, and returns the host files they need beyond guestFiles.
	extra func(t *testing.T, s *script, m Machine) []string
}

// evalWhen is when a matrix machine's guest runs eval.
type evalWhen int

const (
	evalAlways evalWhen = iota
	evalOnFlag          // with -eval-memory-only
)

var evalMemoryOnly = flag.Bool("eval-memory-only", false,
	"run eval in the two-socket guest with a memory-only node too (about 2 more minutes of an emulated guest)")

// runsEval says whether mc's guest runs eval in this test binary's run.
func (mc machineCase) runsEval() bool {
	return mc.eval == evalAlways || mc.eval == evalOnFlag && *evalMemoryOnly
}

var matrix = []machineCase{
	{"2sockets-4nodes-memory-only", Machine{Nodes: 4, CPUsPerNode: 1, Sockets: 2, MemOnlyMiB: 768, RAMDiskMiB: 256,
		Distances: map[[2]int]int{{0, 1}: 12, {2, 3}: 12, {0, 2}: 32, {0, 3}: 32, {1, 2}: 32, {1, 3}: 32}},
		false, evalOnFlag, nil},
	{"2nodes-smt",
		Machine{Nodes: 2, CPUsPerNode: 2, ThreadsPerCore: 2, RAMDiskMiB: 256, RAMDiskFS: "ext4"}, true, evalAlways,
		func(t *testing.T, s *script, m Machine) []string {
			addSMTDOP(t, s, m) // TestReportPlacement's smt=off cell too
			addSQL(s)
			addReportPlacement(s, "node=1", m.DiskFS())
			return addHostTests(t, s)
		}},
}

// guestRun is the one run of a matrix machine's guest that the matrix and
// the tests that add to it (machineCase.extra) all read.
type guestRun struct {
	once sync.Once
	secs map[string]section
	fail string // why there are no sections, for the tests after the first
	// readBy are the tests that read this run: one asking again is the
	// next round of go test -count, which gets a run of its own.
	readBy map[string]bool
}

var guestRuns = map[string]*guestRun{}

// matrixMachine is the machine of the matrix named name.
func matrixMachine(t *testing.T, name string) Machine {
	t.Helper()
	i := slices.IndexFunc(matrix, func(mc machineCase) bool { return mc.name == name })
	if i < 0 {
		t.Fatalf("no matrix machine %q", name)
	}
	return matrix[i].m
}

// matrixRun is the sections of the guest run of the matrix machine name,
// with every test's commands; the first test to ask boots it, whichever
// that is (so running one of those tests alone boots the whole run), and
// each round of go test -count boots it again.
// Each test's commands clean up after themselves, and the matrix's run
// first, so that its checks see the guest as they did on a guest of
// their own.
func matrixRun(t *testing.T, name string) map[string]section {
	t.Helper()
	i := slices.IndexFunc(matrix, func(mc machineCase) bool { return mc.name == name })
	if i < 0 {
		t.Fatalf("no matrix machine %q", name)
	}
	mc := matrix[i]
	g := guestRuns[name]
	if g == nil || g.readBy[t.Name()] {
		g = &guestRun{readBy: map[string]bool{}}
		guestRuns[name] = g
	}
	g.readBy[t.Name()] = true
	g.once.Do(func() {
		// Set until the run is read: a t.Fatal or t.Skip below ends the
		// first test, and the others must fail, saying where to look.
		g.fail = fmt.Sprintf(
			"the %s guest's run did not finish in %s, the first test that booted it: see its log", name, t.Name())
		h := host(t)
		files := guestFiles(t)
		s := machineScript(mc)
		timeout := 12 * time.Minute
		if mc.extra != nil {
			files = append(files, mc.extra(t, s, mc.m)...)
			timeout += 4 * time.Minute
		}
		g.secs = runScript(t, h, mc.m, files, s, timeout)
		g.fail = ""
	})
	if g.fail != "" {
		t.Fatal(g.fail)
	}
	return g.secs
}

// placeCheck is one --data-node run: data on node, in a file on fs.
type placeCheck struct {
	fs   string // tmpfs, or the RAM disk's: ext2 or ext4
	node int
}

func (p placeCheck) name() string { return fmt.Sprintf("data-node-%s-%d", p.fs, p.node) }

func (mc machineCase) placeChecks() []placeCheck {
	var out []placeCheck
	for _, fs := range []string{"tmpfs", mc.m.DiskFS()} {
		for n := range mc.m.AllNodes() {
			if mc.bothFS || (n%2 == 0) == (fs == "tmpfs") {
				out = append(out, placeCheck{fs, n})
			}
		}
	}
	return out
}

// TestMachineMatrix boots each machine of the matrix once and checks what
// numalab sees and does there against the guest's own sysfs. It asserts
// structure and the truth of labels, never latency or throughput: QEMU
// does not model NUMA distance.
func TestMachineMatrix(t *testing.T) {
	host(t)
	for _, mc := range matrix {
		t.Run(mc.name, func(t *testing.T) {
			start := time.Now()
			secs := matrixRun(t, mc.name)
			sys := parseSysfs(t, secs["sysfs"].Out)
			t.Run("harness", func(t *testing.T) {
				checkHarness(t, mc.m, sys)
				if fs := strings.TrimSpace(string(secs["disk"].Out)); fs != mc.m.DiskFS() {
					t.Errorf("/data is %q, want the RAM disk's %s", fs, mc.m.DiskFS())
				}
			})
			t.Run("topo", func(t *testing.T) { checkTopo(t, secs["topo"], sys) })
			t.Run("selectors", func(t *testing.T) { checkSelectors(t, mc.m, secs, sys) })
			t.Run("data-node", func(t *testing.T) { checkDataNode(t, mc, secs) })
			t.Run("probe", func(t *testing.T) { checkProbe(t, mc.m, secs["probe"], sys) })
			t.Run("oltp", func(t *testing.T) { checkOLTP(t, mc.m, secs, sys) })
			switch {
			case mc.runsEval():
				t.Run("eval", func(t *testing.T) { checkEval(t, mc.m, secs, sys) })
			case mc.eval == evalOnFlag:
				t.Run("eval", func(t *testing.T) {
					t.Skip("left out of the suite: about 2 minutes of an emulated guest's eval, whose parts this host's tests " +
						"cover (see machineCase); run it with: go test ./internal/vmtest -run 'TestMachineMatrix/" + mc.name +
						"' -eval-memory-only")
				})
			}
			t.Logf("%s: %v in all", mc.name, time.Since(start).Round(time.Second))
		})
	}
}

// farthest is the node with CPUs farthest from node from (the lowest such
// ID on a tie), or from itself when it is the only one.
func farthest(m Machine, from int) int {
	best := from
	for n := range m.Nodes {
		if m.Distance(from, n) > m.Distance(from, best) {
			best = n
		}
	}
	return best
}

// otherCPUNode is a node with CPUs other than n, or n on a one-node machine.
func otherCPUNode(m Machine, n int) int {
	for c := range m.Nodes {
		if c != n {
			return c
		}
	}
	return n
}

// oltpShort's warm-up takes the first calls of a fresh process, which in
// an emulated guest on a loaded host took longer than a 500 ms window with
// no warm-up ("no call completed").
const oltpShort = "--warehouses 1 --streams 1 --duration 500ms --warmup 1s"

func machineScript(mc machineCase) *script {
	m := mc.m
	s := newScript()
	s.add("sysfs", `for d in /sys/devices/system/node/node[0-9]*; do
	echo "node ${d##*node} cpus=$(cat $d/cpulist) dist=$(tr ' ' , <$d/distance) memkb=$(awk '/MemTotal/{print $4}' $d/meminfo)"
done
for d in /sys/devices/system/cpu/cpu[0-9]*; do
	echo "cpu ${d##*cpu} pkg=$(cat $d/topology/physical_package_id) sib=$(cat $d/topology/thread_siblings_list)"
done`)
	s.add("disk", `awk '$2 == "/data" {print $3}' /proc/mounts`)
	s.add("topo", "numalab topo --json")
	for n := range m.AllNodes() {
		s.add(fmt.Sprintf("select-node%d", n), fmt.Sprintf("numalab topo --select node=%d --json", n))
	}
	s.add("select-smt-off", "numalab topo --select smt=off --json")
	s.add("select-smt-on", "numalab topo --select smt=on --json")
	dirs := map[string]string{"tmpfs": "/tmp/place", m.DiskFS(): "/data/place"}
	for _, fs := range []string{"tmpfs", m.DiskFS()} {
		dir := dirs[fs]
		s.raw(fmt.Sprintf("mkdir -p %s && cp /opt/bin/%s %s/", dir, tpccDB, dir))
		for _, pc := range mc.placeChecks() {
			if pc.fs != fs {
				continue
			}
			store := fmt.Sprintf("%s/data%d.db", dir, pc.node)
			s.add(pc.name(), fmt.Sprintf(
				"numalab run oltp %s --db %s/%s --placement node=%d --data-node %d --store %s >&2 && "+
					"numalab runs show --json --store %s 1",
				oltpShort, dir, tpccDB, otherCPUNode(m, pc.node), pc.node, store, store))
		}
		s.raw("rm -rf " + dir)
	}
	// Every machine runs probe mem: eval's own quick probe is cut at its
	// share of the budget, which under TCG may come before its matrix.
	s.add("probe", "numalab probe mem --json --no-store "+probeFlags)
	s.raw("mkdir -p /tmp/oltp && cp /opt/bin/" + tpccDB + " /tmp/oltp/")
	s.add("oltp", fmt.Sprintf(
		"numalab run oltp --warehouses 1 --streams 1,2 --duration 1s --warmup 1s --db /tmp/oltp/%s "+
			"--placement 'node=0;node=%d' --data-node 0 --store /tmp/oltp/s.db >&2 && "+
			"numalab runs show --json --store /tmp/oltp/s.db 1",
		tpccDB, farthest(m, 0)))
	if m.threads() > 1 {
		s.add("oltp-smt", fmt.Sprintf(
			"numalab run oltp --warehouses 1 --streams 2 --duration 1s --warmup 1s --db /tmp/oltp/%s "+
				"--placement 'smt=on;smt=off' --store /tmp/oltp/smt.db >&2 && "+
				"numalab runs show --json --store /tmp/oltp/smt.db 1",
			tpccDB))
	}
	s.raw("rm -rf /tmp/oltp")
	if mc.runsEval() {
		s.raw(fmt.Sprintf("mkdir -p /tmp/ev && cp /opt/bin/%s /opt/bin/%s /tmp/ev/", tpccDB, transtatsDB))
		s.add("eval",
			"numalab eval --budget "+evalBudget(m).String()+" --dir /tmp/ev --store /tmp/ev/s.db --out /tmp/ev/r.html")
		// The kernel's word on a killed eval (the OOM killer's report).
		s.add("eval-kernel", "dmesg | grep -i -A70 -m1 'invoked oom-killer'; dmesg | grep -i 'killed process'; free")
		s.add("eval-report", "tail -c 100 /tmp/ev/r.html")
		for id := 1; id <= evalRuns; id++ {
			s.add(fmt.Sprintf("eval-run%d", id), fmt.Sprintf("numalab runs show --json --store /tmp/ev/s.db %d", id))
		}
	}
	return s
}

// guestSys is what the guest's sysfs says.
type guestSys struct {
	nodes map[int]sysNode
	cpus  map[int]sysCPU
}

type sysNode struct {
	cpus  []int
	dist  []int
	memKB int64
}

type sysCPU struct {
	pkg  int
	sibs []int
}

func parseSysfs(t *testing.T, out []byte) guestSys {
	t.Helper()
	g := guestSys{nodes: map[int]sysNode{}, cpus: map[int]sysCPU{}}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		id, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatalf("sysfs line %q", line)
		}
		kv := map[string]string{}
		for _, p := range f[2:] {
			k, v, _ := strings.Cut(p, "=")
			kv[k] = v
		}
		list := func(s string) []int {
			ids, err := place.ParseCPUList(s)
			if err != nil {
				t.Fatalf("sysfs line %q: %v", line, err)
			}
			return ids
		}
		switch f[0] {
		case "node":
			n := sysNode{cpus: list(kv["cpus"])}
			for d := range strings.SplitSeq(kv["dist"], ",") {
				v, _ := strconv.Atoi(d)
				n.dist = append(n.dist, v)
			}
			n.memKB, _ = strconv.ParseInt(kv["memkb"], 10, 64)
			g.nodes[id] = n
		case "cpu":
			pkg, _ := strconv.Atoi(kv["pkg"])
			g.cpus[id] = sysCPU{pkg: pkg, sibs: list(kv["sib"])}
		}
	}
	if len(g.nodes) == 0 || len(g.cpus) == 0 {
		t.Fatalf("no nodes or CPUs in the guest's sysfs:\n%s", out)
	}
	return g
}

// checkHarness: the guest is the machine asked for.
func checkHarness(t *testing.T, m Machine, g guestSys) {
	if len(g.nodes) != m.AllNodes() || len(g.cpus) != m.CPUs() {
		t.Fatalf("guest has %d nodes and %d CPUs, want %d and %d", len(g.nodes), len(g.cpus), m.AllNodes(), m.CPUs())
	}
	pkgs := map[int]bool{}
	for id, c := range g.cpus {
		pkgs[c.pkg] = true
		if len(c.sibs) != m.threads() || !slices.Contains(c.sibs, id) {
			t.Errorf("CPU %d: siblings %v, want %d threads per core", id, c.sibs, m.threads())
		}
	}
	if len(pkgs) != m.sockets() {
		t.Errorf("guest has %d packages, want %d", len(pkgs), m.sockets())
	}
	for i := range m.AllNodes() {
		n := g.nodes[i]
		want := []int(nil)
		if i < m.Nodes {
			for c := i * m.CPUsPerNode; c < (i+1)*m.CPUsPerNode; c++ {
				want = append(want, c)
			}
		}
		if !slices.Equal(n.cpus, want) {
			t.Errorf("node %d: CPUs %v, want %v", i, n.cpus, want)
		}
		for j := range m.AllNodes() {
			if j < len(n.dist) && n.dist[j] != m.Distance(i, j) {
				t.Errorf("distance %d→%d = %d, want %d", i, j, n.dist[j], m.Distance(i, j))
			}
		}
		if n.memKB == 0 {
			t.Errorf("node %d has no memory", i)
		}
	}
}

// decode unmarshals a section's output, failing on a bad exit or JSON.
func decode(t *testing.T, name string, sec section, v any) {
	t.Helper()
	if sec.Code != 0 {
		t.Fatalf("%s: exit %d\nstderr:\n%s\nstdout:\n%s", name, sec.Code, sec.Err, sec.Out)
	}
	if err := json.Unmarshal(sec.Out, v); err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", name, err, sec.Out, sec.Err)
	}
}

func checkTopo(t *testing.T, sec section, g guestSys) {
	var tp result.Topology
	decode(t, "topo --json", sec, &tp)
	if len(tp.Nodes) != len(g.nodes) {
		t.Fatalf("topo: %d nodes, sysfs %d", len(tp.Nodes), len(g.nodes))
	}
	for i, n := range tp.Nodes {
		s, ok := g.nodes[n.ID]
		if !ok {
			t.Errorf("topo: node %d, not in sysfs", n.ID)
			continue
		}
		if !slices.Equal(n.CPUs, s.cpus) {
			t.Errorf("topo: node %d CPUs %v, sysfs %v", n.ID, n.CPUs, s.cpus)
		}
		if i < len(tp.Distances) && !slices.Equal(tp.Distances[i], s.dist) {
			t.Errorf("topo: node %d distances %v, sysfs %v", n.ID, tp.Distances[i], s.dist)
		}
		if n.MemBytes <= 0 {
			t.Errorf("topo: node %d has no memory, sysfs %d kB", n.ID, s.memKB)
		}
	}
	if len(tp.CPUs) != len(g.cpus) {
		t.Errorf("topo: %d CPUs, sysfs %d", len(tp.CPUs), len(g.cpus))
	}
	for _, c := range tp.CPUs {
		s := g.cpus[c.ID]
		if c.Package != s.pkg {
			t.Errorf("topo: CPU %d in package %d, sysfs %d", c.ID, c.Package, s.pkg)
		}
		if c.Core < 0 || c.Core >= len(tp.Cores) || !slices.Equal(tp.Cores[c.Core].CPUs, s.sibs) {
			t.Errorf("topo: CPU %d's core is %+v, sysfs siblings %v", c.ID, c.Core, s.sibs)
		}
	}
	if len(tp.Packages) != len(distinctPkgs(g)) {
		t.Errorf("topo: %d packages, sysfs %d", len(tp.Packages), len(distinctPkgs(g)))
	}
	// QEMU's TCG is not KVM, though it sets the CPUID hypervisor bit.
	if tp.Hypervisor == "KVM" {
		t.Errorf("topo: hypervisor %q under TCG", tp.Hypervisor)
	}
}

func distinctPkgs(g guestSys) map[int]bool {
	p := map[int]bool{}
	for _, c := range g.cpus {
		p[c.pkg] = true
	}
	return p
}

// distinctCores says whether cpus are on as many physical cores as CPUs.
func distinctCores(g guestSys, cpus []int) bool {
	seen := map[int]bool{}
	for _, c := range cpus {
		first := g.cpus[c].sibs[0]
		if seen[first] {
			return false
		}
		seen[first] = true
	}
	return true
}

func checkSelectors(t *testing.T, m Machine, secs map[string]section, g guestSys) {
	for n := range m.AllNodes() {
		name := fmt.Sprintf("select-node%d", n)
		if n >= m.Nodes {
			if sec := secs[name]; sec.Code == 0 || !strings.Contains(string(sec.Err), "memory but no CPUs") {
				t.Errorf("node=%d (memory only): exit %d, stderr %q; want a refusal saying it has no CPUs", n, sec.Code, sec.Err)
			}
			continue
		}
		var p place.Placement
		decode(t, name, secs[name], &p)
		if !slices.Equal(p.CPUs, g.nodes[n].cpus) || !slices.Equal(p.Nodes, []int{n}) {
			t.Errorf("node=%d: CPUs %v nodes %v, sysfs node CPUs %v", n, p.CPUs, p.Nodes, g.nodes[n].cpus)
		}
	}
	cores := len(g.cpus) / m.threads()
	var off, on place.Placement
	decode(t, "select-smt-off", secs["select-smt-off"], &off)
	decode(t, "select-smt-on", secs["select-smt-on"], &on)
	if len(off.CPUs) != cores || !distinctCores(g, off.CPUs) || off.Cores != cores {
		t.Errorf("smt=off: CPUs %v (%d cores), want one CPU on each of %d cores", off.CPUs, off.Cores, cores)
	}
	if len(on.CPUs) != len(g.cpus) || on.Cores != cores {
		t.Errorf("smt=on: CPUs %v (%d cores), want all %d CPUs on %d cores", on.CPUs, on.Cores, len(g.cpus), cores)
	}
	if len(on.Streams) != len(on.CPUs) || !distinctCores(g, on.Streams[:cores]) {
		t.Errorf("smt=on: streams take CPUs %v; the first %d are not one per core (siblings: %v)", on.Streams, cores, g.cpus)
	}
}

// storedRun is the part of `numalab runs show --json` the checks read.
type storedRun struct {
	Kind    string `json:"kind"`
	Results []struct {
		Kind string          `json:"kind"`
		Body json.RawMessage `json:"body"`
	} `json:"results"`
}

type storedCell struct {
	Placement string `json:"placement"`
	Streams   int    `json:"streams"`
	CPUs      []int  `json:"cpus"`
	DataNode  int    `json:"data_node"`
}

type storedPrewarm struct {
	Prewarm []struct {
		DataNode int                `json:"data_node"`
		Pages    *place.PageSummary `json:"pages"`
	} `json:"prewarm"`
}

// cells are the stored cells of a run (items with streams and CPUs).
func (r storedRun) cells() []storedCell {
	var out []storedCell
	for _, it := range r.Results {
		var c storedCell
		if json.Unmarshal(it.Body, &c) == nil && c.Streams > 0 && c.Placement != "" {
			out = append(out, c)
		}
	}
	return out
}

func checkDataNode(t *testing.T, mc machineCase, secs map[string]section) {
	for _, pc := range mc.placeChecks() {
		fs, n := pc.fs, pc.node
		var r storedRun
		decode(t, pc.name(), secs[pc.name()], &r)
		found := false
		for _, it := range r.Results {
			var pw storedPrewarm
			if json.Unmarshal(it.Body, &pw) != nil {
				continue
			}
			for _, p := range pw.Prewarm {
				if p.Pages == nil || p.DataNode != n {
					continue
				}
				found = true
				frac := float64(p.Pages.PerNode[n]) / float64(p.Pages.Pages)
				t.Logf("%s: placement node=%d, data on node %d: %v (%.2f%% there)", fs, otherCPUNode(mc.m, n), n, p.Pages, 100*frac)
				if p.Pages.Pages < 20000 || frac < 0.99 {
					t.Errorf("%s, --data-node %d: %v, want at least 99%% of the file's pages on node %d", fs, n, p.Pages, n)
				}
			}
		}
		if !found {
			t.Errorf("%s, --data-node %d: no page locations stored for node %d", fs, n, n)
		}
	}
}

func checkOLTP(t *testing.T, m Machine, secs map[string]section, g guestSys) {
	var r storedRun
	decode(t, "oltp", secs["oltp"], &r)
	far := farthest(m, 0)
	placements := map[string]int{}
	for _, c := range r.cells() {
		var node int
		if _, err := fmt.Sscanf(c.Placement, "node=%d", &node); err != nil {
			t.Errorf("cell placement %q", c.Placement)
			continue
		}
		placements[c.Placement]++
		if c.DataNode != 0 {
			t.Errorf("cell %s: data node %d, want 0", c.Placement, c.DataNode)
		}
		if !slices.Equal(sortedCopy(c.CPUs), g.nodes[node].cpus) {
			t.Errorf("cell %s: CPUs %v, sysfs node %d has %v", c.Placement, c.CPUs, node, g.nodes[node].cpus)
		}
		if k := min(c.Streams, len(c.CPUs)/m.threads()); !distinctCores(g, c.CPUs[:k]) {
			t.Errorf("cell %s, %d streams: stream CPUs %v share a core", c.Placement, c.Streams, c.CPUs[:k])
		}
	}
	want := map[string]int{"node=0": 2, fmt.Sprintf("node=%d", far): 2}
	if m.Nodes == 1 {
		want = map[string]int{"node=0": 4}
	}
	if fmt.Sprint(placements) != fmt.Sprint(want) {
		t.Errorf("cells per placement %v, want %v (local node 0 against the farthest, node %d)", placements, want, far)
	}
	if m.threads() > 1 {
		var s storedRun
		decode(t, "oltp-smt", secs["oltp-smt"], &s)
		cells := s.cells()
		if len(cells) != 2 {
			t.Fatalf("oltp-smt: %d cells, want 2", len(cells))
		}
		for _, c := range cells {
			if len(c.CPUs) < 2 || !distinctCores(g, c.CPUs[:2]) {
				t.Errorf("oltp-smt %s: 2 streams on CPUs %v: siblings, want two cores", c.Placement, c.CPUs)
			}
		}
		if on, off := cells[0], cells[1]; len(on.CPUs) != 2*len(off.CPUs) {
			t.Errorf("smt=on has CPUs %v, smt=off %v: want every sibling against one per core", on.CPUs, off.CPUs)
		}
	}
}

func sortedCopy(ids []int) []int {
	s := slices.Clone(ids)
	slices.Sort(s)
	return s
}

// evalRuns is how many of eval's stored runs the guest prints.
const evalRuns = 12

// evalBudget is the budget eval runs at in the guest of m: the least it
// plans on the machine (2 minutes, or more where 2 leaves too little for
// its cells).
func evalBudget(m Machine) time.Duration {
	return max(evalplan.LeastBudget(standInTopology(m)), evalplan.MinBudget)
}

// evalSteps are the titles of eval's steps; the summary gives each a line.
var evalSteps = []string{"memory probe", "null transaction on SQLite", "null transaction on PostgreSQL",
	"null transaction on MariaDB", "tpcc-ro on SQLite", "tpcc-ro on MariaDB", "page-size points for the model",
	"transtats on DuckDB",
	"TPC-H-derived on DuckDB", "load curve, tpcc-ro on SQLite"}

func checkEval(t *testing.T, m Machine, secs map[string]section, g guestSys) {
	sec := secs["eval"]
	if sec.Code != 0 {
		t.Fatalf("eval: exit %d\nthe guest's kernel log on it:\n%s\nstderr:\n%s\nstdout:\n%s",
			sec.Code, secs["eval-kernel"].Out, sec.Err, sec.Out)
	}
	out := string(sec.Out)
	t.Logf("eval's summary (%.0f s in the guest):\n%s", sec.Seconds, out)
	t.Run("report", func(t *testing.T) {
		if r := secs["eval-report"]; r.Code != 0 || !strings.Contains(string(r.Out), "</html>") {
			t.Errorf("the report's end: exit %d, %q; want a whole HTML file", r.Code, r.Out)
		}
		// The report shows every run eval made: no run is refused.
		if strings.Contains(out+string(sec.Err), "building report") {
			t.Errorf("eval could not build its report:\n%s", sec.Err)
		}
	})
	t.Run("decision", func(t *testing.T) {
		i := strings.Index(out, "== which server")
		if i < 0 {
			t.Fatalf("eval's summary has no decision (== which server):\n%s", out)
		}
		rest := strings.SplitN(out[i:], "\n", 3)
		if len(rest) < 2 || !strings.Contains(rest[1], "tps") && !strings.Contains(strings.ToLower(rest[1]), "cannot tell") {
			t.Errorf("the decision line %q says neither a candidate nor cannot tell", rest[1])
		}
		smt := regexp.MustCompile(`(?m)^  SMT gain [0-9.]+, (measured|assumed)`).FindStringSubmatch(out)
		switch {
		case smt == nil:
			t.Errorf("eval's summary does not state the SMT gain and its source")
		case m.threads() > 1 && smt[1] != "measured":
			t.Errorf("on a machine with SMT the SMT gain is %s, want measured from eval's smt=on and smt=off cells", smt[1])
		}
	})
	t.Run("steps", func(t *testing.T) {
		i := strings.Index(out, "== runs")
		if i < 0 {
			t.Fatalf("eval's summary lists no runs")
		}
		titles := slices.Clone(evalSteps)
		if m.threads() > 1 {
			titles = append(titles, "SMT x DOP on DuckDB, smt=on", "SMT x DOP on DuckDB, smt=off")
		}
		for _, title := range titles {
			line := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(title) +
				`: (run \d+ \(\w+\)|skipped: |failed: )`).FindString(out[i:])
			if line == "" {
				t.Errorf("eval's summary gives step %q no status", title)
			}
		}
		if strings.Contains(out+string(sec.Err), "opening it again would wait forever") {
			t.Errorf("eval reopened a DuckDB file an earlier step's query may still hold")
		}
		if strings.Contains(out, "process already listening on port") {
			t.Errorf("a skip says %q, which is not why it was skipped", "process already listening on port")
		}
		if strings.Contains(out, "SMT x DOP, ") && strings.Contains(out, "; best ") &&
			strings.Contains(out, "fewer than 5 queries") {
			t.Errorf("the SMT x DOP step names a winner from cells of too few queries")
		}
	})
	t.Run("budget", func(t *testing.T) {
		b := evalBudget(m)
		if limit := (b + time.Duration(evalplan.Overrun*float64(b))).Seconds(); sec.Seconds > limit {
			t.Errorf("eval took %.0f s in the guest, over its budget of %v plus 5%% (%.0f s)", sec.Seconds, b, limit)
		} else {
			t.Logf("eval took %.0f s in the guest, its budget %v", sec.Seconds, b)
		}
	})
	var oltp *storedRun
	for id := 1; id <= evalRuns; id++ {
		var r storedRun
		if sec := secs[fmt.Sprintf("eval-run%d", id)]; sec.Code == 0 && json.Unmarshal(sec.Out, &r) == nil &&
			len(r.cells()) > 0 && strings.Contains(r.Kind, "oltp") {
			oltp = &r
		}
	}
	if oltp == nil {
		t.Fatal("eval stored no OLTP run")
	}
	var mx *memlat.Matrix
	for id := 1; id <= evalRuns; id++ {
		var r storedRun
		if json.Unmarshal(secs[fmt.Sprintf("eval-run%d", id)].Out, &r) != nil {
			continue
		}
		for _, it := range r.Results {
			var m memlat.Matrix
			if json.Unmarshal(it.Body, &m) == nil && len(m.NS) > 0 && mx == nil {
				mx = &m
			}
		}
	}
	t.Run("probe", func(t *testing.T) {
		if mx == nil || mx.Cut {
			// Cut at its share before or inside the matrix (a row short
			// of its cells): the summary says so, and probe mem's whole
			// matrix is checked beside it.
			if !regexp.MustCompile(`(?m)^  memory probe: run \d+ \(interrupted\): .*; cut at its share of the budget$`).
				MatchString(string(secs["eval"].Out)) {
				t.Fatalf("eval stored no whole NUMA matrix, "+
					"and its summary does not say its probe was cut at its share of the budget:\n%s", secs["eval"].Out)
			}
			t.Logf("eval's probe was cut at its share of the budget (matrix stored: %v); "+
				"probe mem's matrix is checked in the probe test", mx != nil)
			return
		}
		checkMatrix(t, mx, g)
		checkPages(t, "matrix", mx.Pages, mx.PageBytes, mx.HugeFraction)
		if mx.NoNUMAEffect && !strings.Contains(string(secs["eval"].Out), "no NUMA effect measured") {
			t.Errorf("eval's probe flagged its matrix (%s), and eval's summary does not say \"no NUMA effect measured\":\n%s",
				mx.Caveat(), secs["eval"].Out)
		}
	})
	remote := false
	for _, c := range oltp.cells() {
		if c.Streams > 2*len(c.CPUs) {
			t.Errorf("eval cell %s: %d streams on %d CPUs, want at most 2 per CPU", c.Placement, c.Streams, len(c.CPUs))
		}
		nodes := map[int]bool{}
		for _, id := range c.CPUs {
			for n, sn := range g.nodes {
				if slices.Contains(sn.cpus, id) {
					nodes[n] = true
				}
			}
		}
		if c.DataNode < 0 || len(nodes) != 1 {
			continue
		}
		for n := range nodes {
			if n == c.DataNode {
				continue
			}
			remote = true
			if d, want := m.Distance(n, c.DataNode), m.Distance(c.DataNode, farthest(m, c.DataNode)); d != want {
				t.Errorf("eval cell %s: streams on node %d, data on node %d at distance %d; the farthest node is at %d",
					c.Placement, n, c.DataNode, d, want)
			}
		}
	}
	if !remote {
		t.Errorf("eval on %d nodes ran no remote-data cell", m.Nodes)
	}
}
