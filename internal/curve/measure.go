package curve

import (
	"context"
	"errors"
	"io"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

// Output is what a --curve run prints with --json.
type Output struct {
	Cells []*result.Cell `json:"cells"`
	Curve Curve          `json:"curve"`
}

// Measure runs plan, a curve's cells (Plan) paced at their fractions of
// the capacity (Pacer), with w, each cell stored with rec and told to prog
// as it is measured; then the curve and its knee (Analyze), stored and
// written to out once there is a paced cell.
func Measure(ctx context.Context, plan sweep.Plan, w sweep.Workload[*result.Cell], fractions []float64, factor float64,
	rec sweep.Recorder, prog sweep.Progress[*result.Cell], out io.Writer) (Output, error) {
	measured, err := sweep.Run(ctx, plan, w, rec, prog)
	cv := Analyze(measured, fractions, factor)
	if len(measured) > 1 {
		err = errors.Join(err, rec.Add(KindCurve.Of(cv)))
		WriteText(out, cv)
	}
	return Output{append([]*result.Cell{}, measured...), cv}, err
}
