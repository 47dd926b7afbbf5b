package calib

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
)

// TopologyMachine groups a topology's NUMA nodes by socket and takes its
// latency matrix: the measured LatencyNS when present, else the firmware
// distances scaled to localNS (remote = local·d/10), else — a topology
// that records neither — localNS on the diagonal and remoteNS elsewhere.
// Nodes without CPUs (memory-only nodes) are left out: threads cannot run
// there and the uniform-access assumption does not hold for them. A
// topology without packages is grouped by NUMA node. Cores per socket is
// the smallest number of cores on any socket.
func TopologyMachine(t *result.Topology, localNS, remoteNS float64) (model.Machine, error) {
	var m [][]float64
	var src string
	n := max(len(t.Nodes), 1)
	switch {
	case len(t.LatencyNS) > 0:
		m, src = t.LatencyNS, "measured node latency matrix"
	case len(t.Distances) > 0:
		if !(localNS > 0) {
			return model.Machine{}, fmt.Errorf("scaling node distances needs a measured local latency, got %v ns: %w",
				localNS, model.ErrInput)
		}
		m, src = model.DistanceMatrix(t.Distances, localNS),
			fmt.Sprintf("node distances × %s ns / 10", strconv.FormatFloat(localNS, 'f', -1, 64))
	case localNS > 0 && (n == 1 || remoteNS > 0):
		m = make([][]float64, n)
		for i := range m {
			m[i] = make([]float64, n)
			for j := range m[i] {
				m[i][j] = remoteNS
			}
			m[i][i] = localNS
		}
		src = fmt.Sprintf("no node distances; local %s ns, remote %s ns",
			strconv.FormatFloat(localNS, 'f', -1, 64), strconv.FormatFloat(remoteNS, 'f', -1, 64))
	default:
		return model.Machine{}, fmt.Errorf(
			"topology %s has neither a latency matrix nor node distances, and no local and remote latency were given: %w",
			t.Source, model.ErrInput)
	}
	if err := model.CheckMatrix(m); err != nil {
		return model.Machine{}, err
	}
	if len(m) != n {
		return model.Machine{}, fmt.Errorf("topology %s: latency matrix of %d nodes for %d NUMA nodes: %w",
			t.Source, len(m), len(t.Nodes), model.ErrInput)
	}
	// node index → package, and package → cores.
	cpuPkg := map[int]int{}
	for _, c := range t.CPUs {
		cpuPkg[c.ID] = c.Package
	}
	coresOf := map[int]int{}
	for _, c := range t.Cores {
		coresOf[c.Package]++
	}
	byPkg := len(t.Packages) > 0
	groupOf := map[int][]int{} // package (or node) ID → matrix indices
	var keys []int
	for i, n := range t.Nodes {
		if len(n.CPUs) == 0 {
			continue
		}
		k := n.ID
		if byPkg {
			k = cpuPkg[n.CPUs[0]]
		}
		if _, ok := groupOf[k]; !ok {
			keys = append(keys, k)
		}
		groupOf[k] = append(groupOf[k], i)
	}
	if len(t.Nodes) == 0 {
		keys, groupOf[0] = []int{0}, []int{0}
	}
	if len(keys) == 0 {
		return model.Machine{}, fmt.Errorf("topology %s: no NUMA node has CPUs: %w", t.Source, model.ErrInput)
	}
	slices.Sort(keys)
	mc := model.Machine{Source: src, Matrix: m, Locality: -1}
	cores := 0
	for _, k := range keys {
		mc.Sockets = append(mc.Sockets, groupOf[k])
		n := coresOf[k]
		if !byPkg {
			n = nodeCores(t, groupOf[k])
		}
		if cores == 0 || n < cores {
			cores = n
		}
	}
	mc.CoresPerSocket = max(cores, 1)
	return mc, nil
}

// nodeCores counts the physical cores with a CPU on the given nodes.
func nodeCores(t *result.Topology, idx []int) int {
	on := map[int]bool{}
	for _, i := range idx {
		for _, c := range t.Nodes[i].CPUs {
			on[c] = true
		}
	}
	n := 0
	for _, c := range t.Cores {
		if slices.ContainsFunc(c.CPUs, func(id int) bool { return on[id] }) {
			n++
		}
	}
	return n
}
