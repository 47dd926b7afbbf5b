package model

import (
	"errors"
	"testing"

	"github.com/numalab/numalab/internal/result"
)

func TestMatrixLatency(t *testing.T) {
	two := [][]float64{{67, 125}, {125, 67}}
	// Row mean: (67 + 125)/2 = 96, the 2-socket AverageLatency.
	if got := RowMeanLatency(two, 0, nil); !near(got, 96) {
		t.Errorf("RowMeanLatency = %v, want 96", got)
	}
	// 80% local: 0.8·67 + 0.2·125 = 78.6.
	if got := LocalityRowLatency(two, 1, nil, 0.8); !near(got, 78.6) {
		t.Errorf("LocalityRowLatency = %v, want 78.6", got)
	}
	m := [][]float64{
		{10, 20, 30},
		{20, 10, 40},
		{30, 40, 10},
	}
	// Row means 60/3 = 20, 70/3, 80/3; their mean = 210/9 = 23.333.
	if got := SetLatency(m, nil, -1); !near(got, 210.0/9) {
		t.Errorf("SetLatency = %v, want %v", got, 210.0/9)
	}
	// Nodes {0, 2} only: row 0 (10+30)/2 = 20, row 2 (30+10)/2 = 20 → 20.
	if got := SetLatency(m, []int{0, 2}, -1); !near(got, 20) {
		t.Errorf("SetLatency{0,2} = %v, want 20", got)
	}
	// Row 0 at 50% local: 0.5·10 + 0.5·(20+30)/2 = 5 + 12.5 = 17.5.
	if got := LocalityRowLatency(m, 0, nil, 0.5); !near(got, 17.5) {
		t.Errorf("LocalityRowLatency = %v, want 17.5", got)
	}
	// p = 1/n is the plain row mean: 1/3·10 + 2/3·25 = 20.
	if got := LocalityRowLatency(m, 0, nil, 1.0/3); !near(got, 20) {
		t.Errorf("LocalityRowLatency(1/3) = %v, want 20", got)
	}
	// Distances scaled to a local latency: 80·21/10 = 168.
	d := DistanceMatrix([][]int{{10, 21}, {21, 10}}, 80)
	if d[0][0] != 80 || !near(d[0][1], 168) || !near(d[1][0], 168) {
		t.Errorf("DistanceMatrix = %v", d)
	}
	for _, bad := range [][][]float64{nil, {{1, 2}}, {{1, 0}, {1, 1}}, {{1, -5}, {1, 1}}} {
		if err := CheckMatrix(bad); !errors.Is(err, ErrInput) {
			t.Errorf("CheckMatrix(%v) = %v, want ErrInput", bad, err)
		}
	}
}

// fourNodeTwoPackage is a 2-package machine with 2 NUMA nodes per package
// (like an AMD Opteron 4s2n), 4 single-thread cores per package, plus a
// memory-only node 4.
func fourNodeTwoPackage() *result.Topology {
	t := &result.Topology{Source: "test"}
	for i := range 8 {
		t.CPUs = append(t.CPUs, result.CPU{ID: i, Package: i / 4, Core: i, Node: i / 2})
		t.Cores = append(t.Cores, result.Core{Package: i / 4, ID: i % 4, CPUs: []int{i}})
	}
	t.Packages = []result.Package{{ID: 0, CPUs: []int{0, 1, 2, 3}}, {ID: 1, CPUs: []int{4, 5, 6, 7}}}
	for n := range 4 {
		t.Nodes = append(t.Nodes, result.Node{ID: n, CPUs: []int{2 * n, 2*n + 1}})
	}
	t.Nodes = append(t.Nodes, result.Node{ID: 4})
	t.Distances = [][]int{
		{10, 16, 22, 22, 17},
		{16, 10, 22, 22, 17},
		{22, 22, 10, 16, 17},
		{22, 22, 16, 10, 17},
		{17, 17, 17, 17, 10},
	}
	return t
}

func TestTopologyMachine(t *testing.T) {
	topo := fourNodeTwoPackage()
	mc, err := TopologyMachine(topo, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	if mc.CoresPerSocket != 4 || len(mc.Sockets) != 2 || len(mc.Sockets[0]) != 2 || mc.Sockets[1][0] != 2 {
		t.Fatalf("machine = %+v", mc)
	}
	// One socket: nodes 0,1 at 100 and 160 ns (16·100/10): (100+160)/2 = 130.
	if l, err := mc.Latency(1); err != nil || !near(l, 130) {
		t.Errorf("Latency(1) = %v, %v; want 130", l, err)
	}
	// Two sockets: every row is 100, 160, 220, 220 → 700/4 = 175.
	if l, err := mc.Latency(2); err != nil || !near(l, 175) {
		t.Errorf("Latency(2) = %v, %v; want 175", l, err)
	}
	if _, err := mc.Latency(3); !errors.Is(err, ErrInput) {
		t.Errorf("Latency(3) = %v, want ErrInput (2 sockets)", err)
	}
	if _, err := Evaluate(Default(), mc, Grid{GHz: []float64{3}, SMT: []int{1}, Sockets: []int{1, 4}}); !errors.Is(err, ErrInput) {
		t.Errorf("Evaluate 4 sockets on 2 = %v, want ErrInput", err)
	}
	// A measured matrix wins over distances.
	topo.LatencyNS = [][]float64{
		{90, 140, 200, 200, 150},
		{140, 90, 200, 200, 150},
		{200, 200, 90, 140, 150},
		{200, 200, 140, 90, 150},
		{150, 150, 150, 150, 300},
	}
	mc, err = TopologyMachine(topo, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	// (90 + 140)/2 = 115 on one socket; 80% local: 0.8·90 + 0.2·140 = 100.
	if l, _ := mc.Latency(1); !near(l, 115) {
		t.Errorf("measured Latency(1) = %v, want 115", l)
	}
	mc.Locality = 0.8
	if l, _ := mc.Latency(1); !near(l, 100) {
		t.Errorf("80%% local Latency(1) = %v, want 100", l)
	}
	// Distances without a local latency cannot be scaled.
	topo.LatencyNS = nil
	if _, err := TopologyMachine(topo, 0, 0); !errors.Is(err, ErrInput) {
		t.Errorf("distances without local latency: %v, want ErrInput", err)
	}
	// Neither matrix nor distances: local on the diagonal, remote elsewhere.
	// Two sockets = 4 nodes: each row 67, 125, 125, 125 → 442/4 = 110.5.
	topo.Distances = nil
	mc, err = TopologyMachine(topo, 67, 125)
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := mc.Latency(2); !near(l, 110.5) {
		t.Errorf("uniform-topology Latency(2) = %v, want 110.5", l)
	}
	if _, err := TopologyMachine(topo, 67, 0); !errors.Is(err, ErrInput) {
		t.Errorf("no distances, no remote: %v, want ErrInput", err)
	}
}

func TestTopologyMachineByNode(t *testing.T) {
	// No packages (as in synthetic hwloc XML): each node is a socket.
	topo := fourNodeTwoPackage()
	topo.Packages = nil
	mc, err := TopologyMachine(topo, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(mc.Sockets) != 4 || mc.CoresPerSocket != 2 {
		t.Fatalf("sockets %v, cores %d; want 4 groups of 2 cores", mc.Sockets, mc.CoresPerSocket)
	}
	// Nodes 0,1: rows (100+160)/2 = 130 each.
	if l, _ := mc.Latency(2); !near(l, 130) {
		t.Errorf("Latency(2) = %v, want 130", l)
	}
}

func TestUniformMachine(t *testing.T) {
	mc := Machine{LocalNS: 67, RemoteNS: 125, BufferNS: 15, BufferMinSockets: 4, Locality: -1}
	for _, c := range []struct {
		s    int
		want float64
	}{{1, 67}, {2, 96}, {4, 125.5}, {8, (67+3*125+4*183)/8.0 + 15}} {
		if l, err := mc.Latency(c.s); err != nil || !near(l, c.want) {
			t.Errorf("Latency(%d) = %v, %v; want %v", c.s, l, err, c.want)
		}
	}
	// One socket apart (76 ns against 89 local): one socket at 76, and
	// eight sockets pay the 13 ns coherency check a second time.
	mc = Machine{OneSocketNS: 76, LocalNS: 89, RemoteNS: 139, Locality: -1}
	for _, c := range []struct {
		s    int
		want float64
	}{{1, 76}, {2, 114}, {8, (89+3*139+4*189)/8.0 + 13}} {
		if l, err := mc.Latency(c.s); err != nil || !near(l, c.want) {
			t.Errorf("one socket apart: Latency(%d) = %v, %v; want %v", c.s, l, err, c.want)
		}
	}
	// The uniform model equals the matrix model on a matrix with local on
	// the diagonal and remote elsewhere: 4 sockets → 125.5 - 15 = 110.5.
	m := [][]float64{{67, 125, 125, 125}, {125, 67, 125, 125}, {125, 125, 67, 125}, {125, 125, 125, 67}}
	if got := SetLatency(m, nil, -1); !near(got, 110.5) {
		t.Errorf("uniform matrix = %v, want 110.5", got)
	}
}
