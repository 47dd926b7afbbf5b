package place

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
)

// core describes one physical core for build: its package, NUMA node,
// core ID within the package and logical CPUs.
type core struct {
	pkg, node, id int
	cpus          []int
}

// build makes a Topology the way internal/topo would: CPUs sorted by ID
// with Core indexes into Cores sorted by (package, die, ID). memOnly adds
// NUMA nodes that have memory and no CPUs.
func build(cores []core, memOnly ...int) *result.Topology {
	slices.SortFunc(cores, func(a, b core) int {
		if a.pkg != b.pkg {
			return a.pkg - b.pkg
		}
		return a.id - b.id
	})
	t := &result.Topology{Source: "test"}
	nodes := map[int][]int{}
	pkgs := map[int][]int{}
	for i, c := range cores {
		t.Cores = append(t.Cores, result.Core{Package: c.pkg, ID: c.id, CPUs: c.cpus})
		for _, id := range c.cpus {
			t.CPUs = append(t.CPUs, result.CPU{ID: id, Package: c.pkg, Core: i, Node: c.node})
			nodes[c.node] = append(nodes[c.node], id)
			pkgs[c.pkg] = append(pkgs[c.pkg], id)
		}
	}
	slices.SortFunc(t.CPUs, func(a, b result.CPU) int { return a.ID - b.ID })
	for _, n := range memOnly {
		nodes[n] = nil
	}
	for _, id := range sortedKeys(nodes) {
		if id < 0 {
			continue // CPUs with no NUMA node
		}
		cpus := slices.Sorted(slices.Values(nodes[id]))
		t.Nodes = append(t.Nodes, result.Node{ID: id, CPUs: cpus, MemBytes: 1 << 30})
	}
	for _, id := range sortedKeys(pkgs) {
		t.Packages = append(t.Packages, result.Package{ID: id, CPUs: slices.Sorted(slices.Values(pkgs[id]))})
	}
	return t
}

func sortedKeys(m map[int][]int) []int {
	var k []int
	for id := range m {
		k = append(k, id)
	}
	slices.Sort(k)
	return k
}

// twoSocket: 2 packages, one node each, 4 cores each, 2 threads per core,
// numbered the Intel way (siblings n and n+8), plus memory-only node 2
// (a CXL expander).
func twoSocket() *result.Topology {
	var cs []core
	for p := range 2 {
		for k := range 4 {
			first := p*4 + k
			cs = append(cs, core{pkg: p, node: p, id: k, cpus: []int{first, first + 8}})
		}
	}
	return build(cs, 2)
}

// amdStyle: one package, two nodes (NPS2), 4 cores, siblings adjacent
// (core k has CPUs 2k and 2k+1), core IDs not in CPU order.
func amdStyle() *result.Topology {
	return build([]core{
		{0, 0, 0, []int{0, 1}}, {0, 0, 1, []int{2, 3}},
		{0, 1, 8, []int{4, 5}}, {0, 1, 9, []int{6, 7}},
	})
}

// nodeless: like hwloc's offline-cpu0-node0 capture: package 0's node is
// offline, so its CPUs (0, 2) have no NUMA node; package 1 is node 1.
func nodeless() *result.Topology {
	return build([]core{
		{0, -1, 0, []int{0}}, {0, -1, 1, []int{2}},
		{1, 1, 0, []int{1}}, {1, 1, 1, []int{3}},
	})
}

// vm2: this kind of machine: one node, two vCPUs, each its own core; CPU 2
// exists but is offline.
func vm2() *result.Topology {
	t := build([]core{{0, 0, 0, []int{0}}, {0, 0, 1, []int{1}}})
	t.Offline = []int{2}
	return t
}

func TestResolve(t *testing.T) {
	tests := []struct {
		topo  *result.Topology
		sel   string
		cpus  []int
		nodes []int
		cores int
		data  int
	}{
		{twoSocket(), "", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, []int{0, 1}, 8, -1},
		{twoSocket(), "node=1", []int{4, 5, 6, 7, 12, 13, 14, 15}, []int{1}, 4, -1},
		{twoSocket(), "node=0,1", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, []int{0, 1}, 8, -1},
		{twoSocket(), "node=0-1,smt=off", []int{0, 1, 2, 3, 4, 5, 6, 7}, []int{0, 1}, 8, -1},
		{twoSocket(), "smt=off", []int{0, 1, 2, 3, 4, 5, 6, 7}, []int{0, 1}, 8, -1},
		{twoSocket(), "smt=on", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, []int{0, 1}, 8, -1},
		{twoSocket(), "cores=2", []int{0, 1, 8, 9}, []int{0}, 2, -1},
		{twoSocket(), "cores=2,smt=off", []int{0, 1}, []int{0}, 2, -1},
		// Filled node by node: 6 cores = all of node 0 and two of node 1.
		{twoSocket(), "cores=6,smt=off", []int{0, 1, 2, 3, 4, 5}, []int{0, 1}, 6, -1},
		{twoSocket(), "node=1,smt=off,cores=4", []int{4, 5, 6, 7}, []int{1}, 4, -1},
		{twoSocket(), "cores=3,node=1,smt=off", []int{4, 5, 6}, []int{1}, 3, -1},
		{twoSocket(), "cpus=0-3,8", []int{0, 1, 2, 3, 8}, []int{0}, 4, -1},
		// smt=off keeps the lowest chosen sibling: CPU 8 is core 0's only chosen CPU.
		{twoSocket(), "cpus=8,9,1,smt=off", []int{1, 8}, []int{0}, 2, -1},
		{twoSocket(), "cpus=0-3,8,smt=off", []int{0, 1, 2, 3}, []int{0}, 4, -1},
		{twoSocket(), "cpus=0-15,node=1", []int{4, 5, 6, 7, 12, 13, 14, 15}, []int{1}, 4, -1},
		// cores= counts cores that have a chosen CPU; it keeps only chosen siblings.
		{twoSocket(), "cpus=0,9,10,cores=2", []int{0, 9}, []int{0}, 2, -1},
		{twoSocket(), "node=0,data=node2", []int{0, 1, 2, 3, 8, 9, 10, 11}, []int{0}, 4, 2},
		{twoSocket(), "data=1", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, []int{0, 1}, 8, 1},
		{twoSocket(), " Node = 1 , SMT=Off ", []int{4, 5, 6, 7}, []int{1}, 4, -1},
		{twoSocket(), "nodes=0,1,cpu=1,2,9", []int{1, 2, 9}, []int{0}, 2, -1},
		{amdStyle(), "smt=off", []int{0, 2, 4, 6}, []int{0, 1}, 4, -1},
		{amdStyle(), "cores=3", []int{0, 1, 2, 3, 4, 5}, []int{0, 1}, 3, -1},
		{amdStyle(), "node=1,cores=1,smt=off", []int{4}, []int{1}, 1, -1},
		{nodeless(), "", []int{0, 1, 2, 3}, []int{-1, 1}, 4, -1},
		// Cores with no node come after every node's.
		{nodeless(), "cores=3", []int{0, 1, 3}, []int{-1, 1}, 3, -1},
		{nodeless(), "node=1", []int{1, 3}, []int{1}, 2, -1},
		{vm2(), "", []int{0, 1}, []int{0}, 2, -1},
		{vm2(), "node=0", []int{0, 1}, []int{0}, 2, -1},
		{vm2(), "cores=1", []int{0}, []int{0}, 1, -1},
		{vm2(), "smt=off,cores=2", []int{0, 1}, []int{0}, 2, -1},
		{vm2(), "cpus=1", []int{1}, []int{0}, 1, -1},
	}
	for _, tt := range tests {
		p, err := Resolve(tt.topo, tt.sel)
		if err != nil {
			t.Errorf("Resolve(%q): %v", tt.sel, err)
			continue
		}
		if !slices.Equal(p.CPUs, tt.cpus) || !slices.Equal(p.Nodes, tt.nodes) || p.Cores != tt.cores ||
			p.DataNode != tt.data {
			t.Errorf("Resolve(%q) = cpus %s nodes %v cores %d data %d, want cpus %s nodes %v cores %d data %d",
				tt.sel, FormatCPUs(p.CPUs), p.Nodes, p.Cores, p.DataNode, FormatCPUs(tt.cpus), tt.nodes, tt.cores, tt.data)
		}
		if p.Selector != tt.sel {
			t.Errorf("Resolve(%q).Selector = %q", tt.sel, p.Selector)
		}
		cpus, err := Select(tt.topo, tt.sel)
		if err != nil || !slices.Equal(cpus, p.CPUs) {
			t.Errorf("Select(%q) = %v, %v; Resolve gave %v", tt.sel, cpus, err, p.CPUs)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	tests := []struct {
		topo *result.Topology
		sel  string
		want string // the whole message
		err  error
	}{
		{vm2(), "node=3", `selector "node=3": no NUMA node 3 (this machine has node 0)`, ErrUnsatisfiable},
		{twoSocket(), "node=3", `selector "node=3": no NUMA node 3 (this machine has nodes 0-2)`, ErrUnsatisfiable},
		{twoSocket(), "node=2", `selector "node=2": node 2 has memory but no CPUs (nodes with CPUs: 0-1)`, ErrUnsatisfiable},
		{vm2(), "cores=64", `selector "cores=64": only 2 physical cores (in node 0: 2)`, ErrUnsatisfiable},
		{twoSocket(), "cores=9", `selector "cores=9": only 8 physical cores (in node 0: 4, node 1: 4)`, ErrUnsatisfiable},
		{twoSocket(), "node=1,cores=5",
			`selector "node=1,cores=5": only 4 physical cores in the selection (in node 1: 4)`, ErrUnsatisfiable},
		{nodeless(), "cores=5", `selector "cores=5": only 4 physical cores (in node 1: 2, no node: 2)`, ErrUnsatisfiable},
		{vm2(), "cpus=9", `selector "cpus=9": no CPU 9 (this machine's usable CPUs: 0-1)`, ErrUnsatisfiable},
		{vm2(), "cpus=1-2",
			`selector "cpus=1-2": CPU 2 is offline or outside this process's cpuset (usable CPUs: 0-1)`, ErrUnsatisfiable},
		{twoSocket(), "cpus=0-3,node=1",
			`selector "cpus=0-3,node=1": no CPU is both in cpus=0-3 and in node 1 (whose CPUs are 4-7,12-15)`, ErrUnsatisfiable},
		{vm2(), "data=node1",
			`selector "data=node1": data=node1: no NUMA node 1 (this machine has node 0)`, ErrUnsatisfiable},
		{vm2(), "smt=maybe", `selector "smt=maybe": smt=maybe: expected smt=on or smt=off`, ErrSelector},
		{vm2(), "sockets=1",
			`selector "sockets=1": unknown key "sockets" (expected cpus=LIST, node=N, cores=N, smt=on|off, data=nodeN)`,
			ErrSelector},
		{vm2(), "cores=0",
			`selector "cores=0": cores=0: expected a positive number of physical cores such as cores=4`, ErrSelector},
		{vm2(), "cores=two",
			`selector "cores=two": cores=two: expected a positive number of physical cores such as cores=4`, ErrSelector},
		{vm2(), "cpus=", `selector "cpus=": cpus=: expected a CPU list such as cpus=0-3,8`, ErrSelector},
		{vm2(), "cpus=3-1", `selector "cpus=3-1": cpus=3-1: expected a CPU list such as cpus=0-3,8`, ErrSelector},
		{vm2(), "node=x",
			`selector "node=x": node=x: expected a NUMA node number such as node=0 (or a list, node=0,1)`, ErrSelector},
		{vm2(), "data=disk", `selector "data=disk": data=disk: expected a NUMA node such as data=node0`, ErrSelector},
		{vm2(), "node=0,node=0", `selector "node=0,node=0": node= given twice`, ErrSelector},
		{vm2(), "cpus=0,cpu=1", `selector "cpus=0,cpu=1": cpus= given twice`, ErrSelector},
		{vm2(), "smt=off,1",
			`selector "smt=off,1": "1" is not key=value (expected cpus=LIST, node=N, cores=N, smt=on|off, data=nodeN)`,
			ErrSelector},
		{vm2(), "node=0,,smt=off",
			`selector "node=0,,smt=off": empty term (expected terms like cpus=LIST, node=N, cores=N, smt=on|off, ` +
				`data=nodeN, separated by commas)`, ErrSelector},
		{&result.Topology{}, "", `selector "": the topology has no usable CPUs`, ErrUnsatisfiable},
	}
	for _, tt := range tests {
		_, err := Resolve(tt.topo, tt.sel)
		if err == nil {
			t.Errorf("Resolve(%q) succeeded, want error %q", tt.sel, tt.want)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("Resolve(%q) error\n got %s\nwant %s", tt.sel, err, tt.want)
		}
		if !errors.Is(err, tt.err) {
			t.Errorf("Resolve(%q) error does not wrap %v", tt.sel, tt.err)
		}
	}
}

func TestParse(t *testing.T) {
	sp, err := Parse("cpus=0-3,8,node=0,1,smt=off,cores=2,data=node1")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sp.CPUs, []int{0, 1, 2, 3, 8}) || !slices.Equal(sp.Nodes, []int{0, 1}) ||
		sp.SMT != SMTOff || sp.Cores != 2 || sp.DataNode != 1 {
		t.Errorf("Parse = %+v", sp)
	}
	sp, err = Parse("")
	if err != nil || sp.CPUs != nil || sp.Nodes != nil || sp.Cores != 0 || sp.SMT != SMTAny || sp.DataNode != -1 {
		t.Errorf("Parse(\"\") = %+v, %v; want nothing selected", sp, err)
	}
}

// A topology with no core information (an hwloc XML without cores, say):
// CPU and node selectors work, smt= and cores= are refused.
func TestResolveNoCores(t *testing.T) {
	topo := &result.Topology{
		CPUs:  []result.CPU{{ID: 0, Core: -1}, {ID: 1, Core: -1}},
		Nodes: []result.Node{{ID: 0, CPUs: []int{0, 1}, MemBytes: 1 << 30}},
	}
	if cpus, err := Select(topo, "node=0,cpus=1"); err != nil || !slices.Equal(cpus, []int{1}) {
		t.Errorf("Select(node=0,cpus=1) = %v, %v", cpus, err)
	}
	for _, sel := range []string{"smt=off", "cores=1"} {
		_, err := Select(topo, sel)
		if !errors.Is(err, ErrUnsatisfiable) || !strings.Contains(err.Error(), "which core") {
			t.Errorf("Select(%q) error = %v, want one saying core information is missing", sel, err)
		}
	}
}

func TestPlacementString(t *testing.T) {
	p, err := Resolve(twoSocket(), "node=0,smt=off,data=node2")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.String(), "cpus 0-3 (4 cores, node 0), data on node 2"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	p, _ = Resolve(nodeless(), "cpus=0,1")
	if got, want := p.String(), "cpus 0-1 (2 cores, node 1 and CPUs with no node)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	p, _ = Resolve(twoSocket(), "cores=5")
	if got, want := p.String(), "cpus 0-4,8-12 (5 cores, nodes 0-1)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestCoresFirst(t *testing.T) {
	tests := []struct {
		topo *result.Topology
		cpus []int
		want []int
	}{
		// Intel numbering: first threads are already 0-7.
		{twoSocket(), []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
			[]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
		// AMD numbering: siblings adjacent, so order by core first.
		{amdStyle(), []int{0, 1, 2, 3, 4, 5, 6, 7}, []int{0, 2, 4, 6, 1, 3, 5, 7}},
		{amdStyle(), []int{7, 1, 0, 99}, []int{0, 7, 1, 99}},
	}
	for _, tt := range tests {
		if got := CoresFirst(tt.topo, tt.cpus); !slices.Equal(got, tt.want) {
			t.Errorf("CoresFirst(%v) = %v, want %v", tt.cpus, got, tt.want)
		}
	}
}

func TestCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		out  string
	}{
		{"", nil, ""},
		{"0", []int{0}, "0"},
		{"0-3,8", []int{0, 1, 2, 3, 8}, "0-3,8"},
		{"0-1\n", []int{0, 1}, "0-1"},
		{"8,0-3,2", []int{0, 1, 2, 3, 8}, "0-3,8"},
		{"1,3,5-7, 9", []int{1, 3, 5, 6, 7, 9}, "1,3,5-7,9"},
		{"4-4", []int{4}, "4"},
	}
	for _, tt := range tests {
		got, err := ParseCPUList(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
		if s := FormatCPUs(got); s != tt.out {
			t.Errorf("FormatCPUs(%v) = %q, want %q", got, s, tt.out)
		}
	}
	for _, bad := range []string{"a", "1-", "-1", "3-1", "1,,2", "0-99999999", "1.5"} {
		_, err := ParseCPUList(bad)
		if !errors.Is(err, sysfs.ErrFormat) || !strings.Contains(err.Error(), "want e.g. 0-3") {
			t.Errorf("ParseCPUList(%q) error = %v, want sysfs.ErrFormat with an example", bad, err)
		}
	}
	if s := FormatCPUs([]int{5, 3, 4, 3, 0}); s != "0,3-5" {
		t.Errorf("FormatCPUs unsorted = %q", s)
	}
}

// TestPlacementStringCores: a placement says how many physical cores its
// CPUs are, on this kind of 2-vCPU VM (two cores) and on 4 sockets x 2
// cores x 2 threads (siblings 0 and 8, 4 and 12).
func TestPlacementStringCores(t *testing.T) {
	for _, c := range []struct{ fixture, sel, want string }{
		{"kvm-2vcpu-zen", "cpus=0-1", "cpus 0-1 (2 cores, node 0)"},
		{"kvm-2vcpu-zen", "smt=off", "cpus 0-1 (2 cores, node 0)"},
		{"16em64t-4s2c2t", "cpus=0,8", "cpus 0,8 (1 core, node 0)"},
		{"16em64t-4s2c2t", "cpus=0,4", "cpus 0,4 (2 cores, node 0)"},
		{"16em64t-4s2c2t", "cores=2", "cpus 0,4,8,12 (2 cores, node 0)"},
		{"16em64t-4s2c2t", "smt=off,cores=2", "cpus 0,4 (2 cores, node 0)"},
	} {
		p, err := Resolve(captured(t, c.fixture), c.sel)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.String(); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.fixture, c.sel, got, c.want)
		}
	}
}
