package place

import (
	"slices"

	"github.com/numalab/numalab/internal/result"
)

// CoresFirst orders cpus so that round-robin assignment uses every physical
// core once before using a second sibling: first the lowest chosen sibling
// of each core, cores in node, package and core order; then the second
// siblings in the same core order; and so on. CPUs t does not know keep
// their relative order at the end.
//
// One CPU per stream, rather than the whole set for every stream, makes a
// cell reproducible: which streams share a core or a node is decided by
// the selector, not by the scheduler, and with no more streams than CPUs
// no two streams share a CPU (docs/placement.md: each stream locks its
// goroutine to an OS thread and sets that thread's affinity). The order
// depends on the topology only, not on how the machine numbers its CPUs.
func CoresFirst(t *result.Topology, cpus []int) []int {
	chosen := map[int]bool{}
	byID := map[int]result.CPU{}
	var unknown []int
	for _, id := range cpus {
		c, ok := t.CPU(id)
		if !ok || c.Core < 0 || c.Core >= len(t.Cores) {
			unknown = append(unknown, id)
			continue
		}
		chosen[id] = true
		byID[id] = c
	}
	cores := coresOf(t, chosen, byID)
	var out []int
	for round := 0; ; round++ {
		added := false
		for _, c := range cores {
			var sib []int
			for _, id := range t.Cores[c.index].CPUs {
				if chosen[id] {
					sib = append(sib, id)
				}
			}
			slices.Sort(sib)
			if round < len(sib) {
				out = append(out, sib[round])
				added = true
			}
		}
		if !added {
			break
		}
	}
	return append(out, unknown...)
}
