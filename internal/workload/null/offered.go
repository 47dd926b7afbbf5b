package null

import (
	"strings"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/setting"
	"github.com/numalab/numalab/internal/sweep"
)

// Offered are c's cells on machine t, their layout and the matrix (Cells);
// an error, naming --pairing and why each pairing is unavailable, when t
// offers none of the pairings c asks for.
func (c RunConfig) Offered(t *result.Topology) ([]sweep.Cell, []Layout, []Pairing, error) {
	cells, layout, matrix := c.Cells(t)
	if len(cells) == 0 {
		var why []string
		for _, p := range Select(matrix, c.Pairings) {
			why = append(why, p.String())
		}
		return nil, nil, nil, setting.Errorf("pairing", "this machine offers none of %s (%s)",
			strings.Join(c.Pairings, ", "), strings.Join(why, "; "))
	}
	return cells, layout, matrix, nil
}

// Kind is the kind a run of c is stored under (before pacing): the null
// transaction's, or the point select's.
func (c RunConfig) Kind() string {
	if c.Call == CallPointSelect {
		return PointSelectKind
	}
	return RunKind
}
