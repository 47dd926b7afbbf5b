package topo

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadFile reads the same machine as hwloc XML, as topology JSON and
// as a stored run's JSON with its machine, and refuses JSON that is no
// topology.
func TestReadFile(t *testing.T) {
	xmlPath := filepath.Join(fixtures, "16amd64-4distances.xml")
	fromXML, err := ReadFile(xmlPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(fromXML.CPUs) != 16 || len(fromXML.Nodes) != 8 {
		t.Fatalf("hwloc XML: %d CPUs, %d nodes; want 16 and 8", len(fromXML.CPUs), len(fromXML.Nodes))
	}
	dir := t.TempDir()
	write := func(name string, v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, p := range []string{
		write("topo.json", fromXML),
		write("run.json", map[string]any{"id": 3, "machine": fromXML}),
	} {
		got, err := ReadFile(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if len(got.CPUs) != 16 || len(got.Nodes) != 8 || got.Source != fromXML.Source {
			t.Errorf("%s: %d CPUs, %d nodes, source %q; want the XML's 16, 8, %q",
				p, len(got.CPUs), len(got.Nodes), got.Source, fromXML.Source)
		}
	}
	if _, err := ReadFile(write("other.json", map[string]any{"rows": 1})); err == nil ||
		!strings.Contains(err.Error(), "without cpus or nodes") {
		t.Errorf("JSON of something else: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing.xml")); err == nil {
		t.Error("a missing file: no error")
	}
}
