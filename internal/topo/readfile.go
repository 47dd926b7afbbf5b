package topo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/numalab/numalab/internal/result"
)

// ReadFile reads a topology from a file: hwloc XML, or the JSON numalab prints for a
// topology (a result.Topology, or a stored run with its machine).
func ReadFile(path string) (*result.Topology, error) {
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
			return nil,
				fmt.Errorf("reading topology %q: JSON without cpus or nodes (want 'numalab topo --json' output or hwloc XML)", path)
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
	t, err := FromHwlocXML(f)
	if err != nil {
		return nil,
			fmt.Errorf("reading topology %q: %w (want hwloc XML from 'lstopo --of xml', or numalab topology JSON)", path, err)
	}
	if !strings.Contains(t.Source, filepath.Base(path)) {
		t.Source = "hwloc:" + path
	}
	return t, nil
}
