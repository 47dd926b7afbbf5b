package eval

import (
	"testing"
	"time"

	"github.com/numalab/numalab/internal/evalplan"
)

// TestPagesConfig: the page-size step runs at the probe's clock, its
// repeats bounded by the budget's end, and none once the end has passed.
func TestPagesConfig(t *testing.T) {
	cfg := NewConfigs(evalplan.Plan{PagePairs: 4, PageCell: 650 * time.Millisecond}, "d")
	if c := cfg.Pages; c.DB != cfg.OLTP.DB || c.Pairs != 4 || c.Repeats != 2 || c.CPU != -1 ||
		c.Tolerance != SentinelTolerance || c.Check() != nil {
		t.Fatalf("the step's configuration %+v (%v)", c, c.Check())
	}
	c := pagesConfig(cfg.Pages, 7, time.Now().Add(90*time.Second))
	if c.ProbeRun != 7 || c.Repeats != 2 || c.RepeatWithin <= 80*time.Second || c.RepeatWithin > 90*time.Second {
		t.Errorf("90 s before the end: %+v", c)
	}
	if c := pagesConfig(cfg.Pages, 7, time.Now().Add(-time.Second)); c.Repeats != 0 ||
		c.RepeatWithin != 0 || c.Check() != nil {
		t.Errorf("past the end: repeats %d within %v (%v); want none", c.Repeats, c.RepeatWithin, c.Check())
	}
}
