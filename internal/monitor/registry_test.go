package monitor

import (
	"slices"
	"testing"

	"github.com/numalab/numalab/internal/engine"
)

// TestRegistryFacilities checks that the engine registry's monitoring
// facilities of each engine are exactly this package's facilities of it.
func TestRegistryFacilities(t *testing.T) {
	for _, s := range engine.Specs() {
		var here []string
		for _, f := range Facilities {
			if f.Engine == s.Name {
				here = append(here, f.Name)
			}
		}
		if !slices.Equal(here, s.Monitoring) {
			t.Errorf("%s: the registry names facilities %v, monitor has %v", s.Name, s.Monitoring, here)
		}
	}
}
