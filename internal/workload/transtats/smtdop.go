package transtats

import (
	"fmt"
	"slices"

	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
)

// The SMT × DOP comparison (eval's step of that name): P1 at DOP 1, the
// physical cores and the logical CPUs, once with the query's workers on
// every logical CPU (smt=on) and once on one thread per core (smt=off,
// where DOP = logical CPUs is oversubscribed): whether DOP 2N on N cores
// with SMT beats DOP N without it. Without SMT DOP = cores = CPUs and
// there is nothing to compare.

// SMTPlacements are the comparison's placements, one run each.
var SMTPlacements = []string{"smt=on", "smt=off"}

// SMTDOPs are the comparison's DOPs on t: 1, the physical cores and the
// logical CPUs; nil where t has no SMT.
func SMTDOPs(t *result.Topology) ([]int, error) {
	if t.ThreadsPerCore() <= 1 {
		return nil, nil
	}
	on, err := place.Resolve(t, "smt=on")
	if err != nil {
		return nil, fmt.Errorf("the SMT x DOP comparison: %w", err)
	}
	if on.Cores == len(on.CPUs) {
		return nil, nil
	}
	// One core of two threads would give DOP 1 twice.
	return slices.Compact([]int{1, on.Cores, len(on.CPUs)}), nil
}

// SMTDOPConfigs are the comparison's runs of base (its database, cell
// lengths and repeats): P1 alone at dops, on each of SMTPlacements; none
// when dops is empty.
func SMTDOPConfigs(base RunConfig, dops []int) []RunConfig {
	if len(dops) == 0 {
		return nil
	}
	var out []RunConfig
	for _, sel := range SMTPlacements {
		c := base
		c.Queries, c.DOP, c.Placement = []string{P1}, dops, sel
		out = append(out, c)
	}
	return out
}
