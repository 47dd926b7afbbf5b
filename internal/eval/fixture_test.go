package eval

import (
	"path/filepath"
	"testing"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/topo"
)

// fixtures holds the captured machines the tests read, each read once.
var fixtures = map[string]*result.Topology{}

// fixture reads a captured machine of testdata/topology.
func fixture(t *testing.T, name string) *result.Topology {
	t.Helper()
	if m, ok := fixtures[name]; ok {
		return m
	}
	m, _, err := topo.Load(filepath.Join("..", "..", "testdata", "topology", name), "")
	if err != nil {
		t.Fatal(err)
	}
	fixtures[name] = m
	return m
}
