package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/topo"
)

// ReadTopology reads hwloc XML, or the JSON numalab prints for a
// topology (a result.Topology, or a stored run with its machine).
func ReadTopology(path string) (*result.Topology, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading topology: %w", err)
	}
	if trimmed := bytes.TrimSpace(b); len(trimmed) > 0 && trimmed[0] == '{' {
		var probe struct {
			Machine *result.Topology `json:"machine"`
			result.Topology
		}
		if err := json.Unmarshal(b, &probe); err != nil {
			return nil, fmt.Errorf("reading topology %q: not numalab topology JSON: %w", path, err)
		}
		t := &probe.Topology
		if probe.Machine != nil {
			t = probe.Machine
		}
		if len(t.CPUs) == 0 && len(t.Nodes) == 0 {
			return nil, fmt.Errorf("reading topology %q: JSON without cpus or nodes (want 'numalab topo --json' output or hwloc XML)", path)
		}
		if t.Source == "" {
			t.Source = path
		}
		return t, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading topology: %w", err)
	}
	defer f.Close()
	t, err := topo.FromHwlocXML(f)
	if err != nil {
		return nil, fmt.Errorf("reading topology %q: %w (want hwloc XML from 'lstopo --of xml', or numalab topology JSON)", path, err)
	}
	if !strings.Contains(t.Source, filepath.Base(path)) {
		t.Source = "hwloc:" + path
	}
	return t, nil
}

// NodeMatrix is the probe's node latency matrix reordered to t's nodes, or
// nil unless it covers exactly the nodes with CPUs and t has no
// memory-only nodes.
func (p ProbeLatency) NodeMatrix(t *result.Topology) [][]float64 {
	sum := p.Summary
	if sum == nil {
		return nil
	}
	if len(sum.Nodes) != len(t.Nodes) || len(sum.MatrixNS) != len(sum.Nodes) {
		return nil
	}
	pos := map[int]int{}
	for i, id := range sum.Nodes {
		pos[id] = i
	}
	m := make([][]float64, len(t.Nodes))
	for i, a := range t.Nodes {
		pa, ok := pos[a.ID]
		if !ok || len(sum.MatrixNS[pa]) != len(sum.Nodes) {
			return nil
		}
		m[i] = make([]float64, len(t.Nodes))
		for j, b := range t.Nodes {
			pb, ok := pos[b.ID]
			if !ok {
				return nil
			}
			m[i][j] = sum.MatrixNS[pa][pb]
		}
	}
	return m
}

// CoresPerPackage is the topology's physical cores per package (0 unknown).
func CoresPerPackage(t *result.Topology) int {
	if t == nil || len(t.Cores) == 0 {
		return 0
	}
	return len(t.Cores) / max(len(t.Packages), 1)
}

// TopologyGHz is the highest maximum CPU frequency a topology records, in
// GHz, or 0.
func TopologyGHz(t *result.Topology) float64 {
	if t == nil {
		return 0
	}
	var mhz float64
	for _, c := range t.CPUs {
		mhz = max(mhz, c.MaxMHz)
	}
	return mhz / 1000
}
