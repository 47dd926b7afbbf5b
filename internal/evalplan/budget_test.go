package evalplan

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestPace: the steps so far at twice their plan make a step planned at
// 10 s need 20 s; a machine faster than the plan leaves estimates as
// they are.
func TestPace(t *testing.T) {
	var p Pace
	if p.Factor() != 1 || p.Fits(10*time.Second, 10*time.Second, 0) != nil {
		t.Errorf("no step yet: factor %v", p.Factor())
	}
	p.Add(10*time.Second, 20*time.Second)
	if p.Factor() != 2 {
		t.Errorf("factor %v, want 2", p.Factor())
	}
	err := p.Fits(10*time.Second, 15*time.Second, 0)
	if !errors.Is(err, ErrNoRoom) || !strings.Contains(err.Error(),
		"it would take about 20s at this machine's pace (the steps so far took 2.0× their plan), "+
			"and 15s of the budget is left") {
		t.Errorf("fits = %v", err)
	}
	if err := p.Fits(10*time.Second, 21*time.Second, 0); err != nil {
		t.Errorf("fits with room = %v", err)
	}
	p = Pace{}
	p.Add(10*time.Second, 5*time.Second)
	if p.Factor() != 1 {
		t.Errorf("a fast machine: factor %v, want 1", p.Factor())
	}
}

// TestShare: an essential step gets its part of what is left beside the
// essential steps after it, and all of it with none after it; another
// step what the reserve, at the pace so far, leaves.
func TestShare(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		planned, reserve, left time.Duration
		essential              bool
		factor                 float64
		want                   time.Duration
	}{
		{15 * s, 75 * s, 90 * s, true, 1, 15 * s},
		{15 * s, 75 * s, 45 * s, true, 3, 7500 * time.Millisecond}, // half speed: the same part of less
		{40 * s, 0, 60 * s, true, 2, 60 * s},
		{0, 30 * s, 60 * s, true, 1, 30 * s},
		{10 * s, 30 * s, 100 * s, false, 2, 40 * s},
		{10 * s, 30 * s, 50 * s, false, 2, 0},
		{10 * s, 0, -s, true, 1, 0},
	} {
		if got := Share(c.planned, c.reserve, c.left, c.essential, c.factor); got != c.want {
			t.Errorf("Share(%v, %v, %v, %v, %v) = %v, want %v", c.planned, c.reserve, c.left, c.essential, c.factor, got, c.want)
		}
	}
}
