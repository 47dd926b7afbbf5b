package eval

import (
	"context"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/workload/tpcc"
)

func TestCurveStep(t *testing.T) {
	oltp := tpcc.DefaultRunConfig()
	oltp.DB, oltp.Streams, oltp.Warmup, oltp.Duration, oltp.Repeat = "w1.db", []int{1, 2}, 5*time.Second, 20*time.Second, 3
	c := curveConfig(oltp)
	if c.DB != "w1.db" || len(c.Streams) != 1 || c.Warmup != time.Second || c.Duration != 3*time.Second ||
		c.Repeat != 1 || !c.Curve || c.Arrivals != "uniform" {
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
	var got tpcc.RunConfig
	st := curveStep(cfg, func(_ context.Context, _ Stored, c tpcc.RunConfig) error { got = c; return nil })
	if st.est() != curveTime(c) || st.essential {
		t.Errorf("the curve step's planned time %v, essential %v: want %v, not essential",
			st.est(), st.essential, curveTime(c))
	}
	if err := st.run(context.Background(), nil); err != nil || got.DB != "w1.db" || !got.Curve {
		t.Errorf("the curve step ran %+v: %v", got, err)
	}
}
