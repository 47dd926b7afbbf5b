package eval

import (
	"context"
	"time"

	"github.com/numalab/numalab/internal/workload/tpcc"
)

// curveFractions are the loads of eval's load curve, as fractions of the
// capacity: two at low load for the floor, then up past saturation.
var curveFractions = []float64{0.1, 0.3, 0.5, 0.7, 0.85, 1, 1.2}

// curveConfig is eval's load curve: tpcc-ro on the SQLite database of
// the OLTP step, one stream, short cells (at most 3 s after 1 s of
// warm-up, the OLTP step's when shorter), uniform arrivals.
func curveConfig(oltp tpcc.RunConfig) tpcc.RunConfig {
	c := oltp
	c.Streams, c.Placements, c.Repeat, c.Neighbour, c.StreamsPerCPU = []int{1}, []string{""}, 1, false, 0
	c.Warmup, c.Duration = min(oltp.Warmup, time.Second), min(oltp.Duration, 3*time.Second)
	c.Curve, c.CurveAt, c.KneeFactor, c.Arrivals = true, curveFractions, 2, "uniform"
	return c
}

// curveTime is how long the curve's cells take: a capacity cell and one
// per fraction.
func curveTime(c tpcc.RunConfig) time.Duration {
	return time.Duration(len(c.CurveAt)+1) * (c.Warmup + c.Duration)
}

// curveStep is eval's last step, the load curve on SQLite tpcc-ro, run
// when what is left of the budget holds it (runSteps: the plan gives it
// no time of its own); its run's headline says where the knee is.
func curveStep(cfg *Configs, run func(context.Context, Stored, tpcc.RunConfig) error) *step {
	return &step{title: "load curve, tpcc-ro on SQLite",
		run: func(ctx context.Context, s Stored) error { return run(ctx, s, curveConfig(cfg.OLTP)) },
		est: func() time.Duration { return curveTime(curveConfig(cfg.OLTP)) }}
}
