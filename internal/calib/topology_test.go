package calib

import (
	"errors"
	"testing"

	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
)

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
	if _, err := mc.Latency(3); !errors.Is(err, model.ErrInput) {
		t.Errorf("Latency(3) = %v, want ErrInput (2 sockets)", err)
	}
	if _, err := model.Evaluate(model.Default(), mc,
		model.Grid{GHz: []float64{3}, SMT: []int{1}, Sockets: []int{1, 4}}); !errors.Is(err, model.ErrInput) {
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
	if _, err := TopologyMachine(topo, 0, 0); !errors.Is(err, model.ErrInput) {
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
	if _, err := TopologyMachine(topo, 67, 0); !errors.Is(err, model.ErrInput) {
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
