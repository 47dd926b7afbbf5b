// Package topotest reads the repository's captured machines
// (testdata/topology) for tests, each once per test binary: the large ones
// take seconds to unpack.
package topotest

import (
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/topo"
)

var (
	mu   sync.Mutex
	read = map[string]*result.Topology{}
)

// Fixture is the captured machine name of testdata/topology, as
// topo.Load reads it; the test fails when it cannot be read.
func Fixture(t testing.TB, name string) *result.Topology {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if m, ok := read[name]; ok {
		return m
	}
	_, file, _, _ := runtime.Caller(0)
	m, _, err := topo.Load(filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "topology", name), "")
	if err != nil {
		t.Fatal(err)
	}
	read[name] = m
	return m
}
