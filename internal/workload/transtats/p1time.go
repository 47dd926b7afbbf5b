package transtats

import (
	"time"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

// P1Time is the median over repeats of P1's mean time at DOP 1 and one
// stream in the reporting run; 0 when no such cell finished a query
// (eval sizes its SMT × DOP cells by it).
func P1Time(run *result.Run) (time.Duration, error) {
	cells, err := result.KindQueryCell.All(run)
	if err != nil {
		return 0, err
	}
	var us []float64
	for _, c := range cells {
		if c.Query == P1 && c.Cell != nil && c.Cell.DOP == 1 && c.Cell.Streams == 1 && c.Cell.Total.Count > 0 {
			us = append(us, c.Cell.Total.MeanUS)
		}
	}
	if len(us) == 0 {
		return 0, nil
	}
	return time.Duration(stats.Median(us) * float64(time.Microsecond)), nil
}
