package sweep

import "github.com/numalab/numalab/internal/result"

// CoresUsed is the divisor of tps per core: the physical cores a cell's
// streams run on, not the placement's. Pinned with spread, stream i runs
// on cpus[i mod len(cpus)] alone (as drive pins it), so it counts the
// distinct cores of the CPUs the streams were given; pinned without
// spread, a stream runs on one core at a time, so it is the fewer of the
// streams and the cores of cpus. Not pinned (no cpus) it is 0: unknown.
func CoresUsed(t *result.Topology, cpus []int, spread bool, streams int) int {
	if len(cpus) == 0 || streams < 1 {
		return 0
	}
	used := cpus
	if spread {
		used = cpus[:min(streams, len(cpus))]
	}
	cores := map[int]bool{}
	for _, id := range used {
		key := -1 - id // a CPU whose core is unknown counts as a core of its own
		if c, ok := t.CPU(id); ok && c.Core >= 0 {
			key = c.Core
		}
		cores[key] = true
	}
	if spread {
		return len(cores)
	}
	return min(streams, len(cores))
}
