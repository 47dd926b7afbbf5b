package sentinel

import "github.com/numalab/numalab/internal/result"

// MemoryFor maps the memory reference over more than the largest cache of
// machine t (MemoryBytes; 64 MiB when t is nil or names no cache).
func MemoryFor(t *result.Topology) (*Memory, error) {
	var llc int64
	if t != nil {
		for _, c := range t.Caches {
			llc = max(llc, c.SizeBytes)
		}
	}
	return NewMemory(MemoryBytes(llc))
}
