package curve

import (
	"context"
	"errors"
	"io"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

// Output is what a --curve run prints with --json: its cells, each a
// workload's item T.
type Output[T any] struct {
	Cells []T   `json:"cells"`
	Curve Curve `json:"curve"`
}

// Measure runs plan, a curve's cells (Plan) paced at their fractions of
// the capacity (Pacer), with w, each cell stored with rec and told to prog
// as it is measured; then the curve and its knee (Analyze) of the cells
// as cellOf reads them from w's items, stored and written to out once
// there is a paced cell.
func Measure[T any](ctx context.Context, plan sweep.Plan, w sweep.Workload[T], cellOf func(T) *result.Cell,
	fractions []float64, factor float64, rec sweep.Recorder, prog sweep.Progress[T], out io.Writer) (Output[T], error) {
	measured, err := sweep.Run(ctx, plan, w, rec, prog)
	cells := make([]*result.Cell, len(measured))
	for i, m := range measured {
		cells[i] = cellOf(m)
	}
	cv := Analyze(cells, fractions, factor)
	if len(measured) > 1 {
		err = errors.Join(err, rec.Add(KindCurve.Of(cv)))
		WriteText(out, cv)
	}
	return Output[T]{append([]T{}, measured...), cv}, err
}
