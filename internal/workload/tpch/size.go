package tpch

import (
	"fmt"
	"github.com/numalab/numalab/internal/engine"
)

// EstimatedBytes is about how many bytes a load of scale factor sf writes
// into engine ("sqlite", "duckdb", "postgres" or "mariadb"), an upper estimate, to
// check the space before loading and to size caches.
func EstimatedBytes(sf float64, eng string) (int64, error) {
	if _, err := CountsFor(sf); err != nil {
		return 0, fmt.Errorf("estimating a tpch load: %w", err)
	}
	_, l, ok := loaderOf(eng)
	if !ok {
		return 0, fmt.Errorf("estimating a tpch load: no estimate for engine %q (expected %s)", eng, engine.List(nil))
	}
	return int64(l.fixed + l.perSF*sf), nil
}
