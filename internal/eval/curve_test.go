package eval

import (
	"errors"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/workload/tpcc"
)

func TestCurveStep(t *testing.T) {
	oltp := tpcc.DefaultRunConfig()
	oltp.DB, oltp.Streams, oltp.Warmup, oltp.Duration, oltp.Repeat = "w1.db", []int{1, 2}, 5*time.Second, 20*time.Second, 3
	c := curveConfig(oltp)
	if c.DB != "w1.db" || len(c.Streams) != 1 || c.Warmup != time.Second || c.Duration != 3*time.Second || c.Repeat != 1 || !c.Curve || c.Arrivals != "uniform" {
		t.Errorf("curve config %+v", c)
	}
	if err := c.Check(); err != nil {
		t.Errorf("eval's curve is refused: %v", err)
	}
	if curveTime(c) != 8*4*time.Second {
		t.Errorf("curve time %v", curveTime(c))
	}
	short := oltp
	short.Warmup, short.Duration = 200*time.Millisecond, time.Second
	if c := curveConfig(short); c.Warmup != 200*time.Millisecond || c.Duration != time.Second {
		t.Errorf("a shorter OLTP step's cells: %v + %v", c.Warmup, c.Duration)
	}
	cfg := &Configs{OLTP: oltp}
	ran := false
	run := func(Stored, tpcc.RunConfig) error { ran = true; return nil }
	need := curveTime(c) + curveMargin
	if err := curveStep(cfg, func() time.Duration { return need - time.Second }, run).run(nil); !errors.Is(err, errNoRoom) || ran {
		t.Errorf("with too little budget left: %v, ran %v", err, ran)
	}
	if err := curveStep(cfg, func() time.Duration { return need }, run).run(nil); err != nil || !ran {
		t.Errorf("with room: %v, ran %v", err, ran)
	}
}
