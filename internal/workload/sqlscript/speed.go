package sqlscript

import (
	"fmt"
	"strings"

	"github.com/numalab/numalab/internal/sentinel"
)

// SpeedTolerance is how far off its median the speed sentinel's core
// reference may read next to a cell before the cell is said to have run
// while the machine was not at its usual speed (as run pages' default).
const SpeedTolerance = 0.15

// Speed judges cells by the speed sentinel's core reference timed right
// after each: its verdict's line, and the cells next to a reading off the
// median (a cell is judged by the readings before and after it). It
// says nothing ("") with fewer than three readings, too few for a median
// to mean the machine's usual speed.
func Speed(cells []*Cell) string {
	var s sentinel.Series
	var idx []int // the cell of each sample
	for _, c := range cells {
		if c.Sentinel != nil {
			s.Samples = append(s.Samples, *c.Sentinel)
			idx = append(idx, c.Cell.Index)
		}
	}
	if len(s.Samples) < 3 {
		return ""
	}
	v := s.Check(SpeedTolerance)
	if len(v.Off) == 0 {
		return v.Line()
	}
	var off []string
	for i := range s.Samples {
		if v.Between(max(i-1, 0), i) {
			off = append(off, fmt.Sprint(idx[i]))
		}
	}
	return fmt.Sprintf("%s; cells %s ran next to an off reading: their figures are not of this machine at its "+
		"usual speed (compare them with care, or run again)",
		v.Line(), strings.Join(off, ", "))
}
