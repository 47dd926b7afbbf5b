package evalplan

// The budget kept: eval's steps end by the budget plus Overrun (less what
// the report takes to write and a cut step to stop), the step then
// running cut there with what it measured stored; before each step, what it would take at the pace
// the steps so far ran (their time against the plan's) is set against
// what is left, and a step that would not fit is left out, saying so.

import (
	"errors"
	"fmt"
	"time"
)

// ErrNoRoom skips a step the budget had no room for (Plan's shrink, or
// the pace so far: Pace.Fits).
var ErrNoRoom = errors.New("the budget has no room for this step on this machine")

// Overrun is how far past its budget eval may end: its steps stop at the
// budget plus this share, less reportTime.
const Overrun = 0.05

// reportTime is what eval keeps after its steps for the report and the
// summary (reading the store, the fit, writing the HTML), and cutTime
// what a step takes to stop when the deadline cuts it (a DuckDB query is
// interrupted 5 s after its cancel: engine's duckInterruptGrace).
const (
	reportTime = 5 * time.Second
	cutTime    = 6 * time.Second
)

// StepsDeadline is when the steps of an eval that started at start with
// budget must be told to stop.
func StepsDeadline(start time.Time, budget time.Duration) time.Time {
	return start.Add(budget + time.Duration(Overrun*float64(budget)) - reportTime - cutTime)
}

// Pace is how eval's steps have run so far against their plan.
type Pace struct {
	planned, took time.Duration
}

// Add counts a step that was planned to take planned and took took.
func (p *Pace) Add(planned, took time.Duration) {
	p.planned += planned
	p.took += took
}

// Factor is how many times its plan the steps so far took, at least 1:
// a machine faster than the plan leaves the spare to the later steps'
// estimates as it is.
func (p Pace) Factor() float64 {
	if p.planned <= 0 {
		return 1
	}
	return max(1, float64(p.took)/float64(p.planned))
}

// Fits says nil when a step planned to take planned fits in left at pace
// p; otherwise why not (wrapping ErrNoRoom: the step is left out, not
// failed), and what was kept from it: reserve (as planned), for the
// steps after it that the model rests on.
func (p Pace) Fits(planned, left, reserve time.Duration) error {
	need := time.Duration(float64(planned) * p.Factor())
	if need <= left {
		return nil
	}
	pace := ""
	if f := p.Factor(); f > 1.05 {
		pace = fmt.Sprintf(" at this machine's pace (the steps so far took %.1f× their plan)", f)
	}
	kept := ""
	if reserve > 0 {
		kept = fmt.Sprintf(" beside the %v kept for the steps after it that the model rests on",
			Round(time.Duration(float64(reserve)*p.Factor())))
	}
	return fmt.Errorf("%w: it would take about %v%s, and %v of the budget is left%s",
		ErrNoRoom, Round(need), pace, Round(max(left, 0)), kept)
}

// Share is how long a step planned at planned may run, with left of the
// budget left and the essential steps after it planned at reserve, at
// pace factor: an essential step its part of left in proportion to its
// plan beside the reserve (all of left when nothing is reserved), so that
// on a slow machine each step the model rests on is cut to its part and
// none takes the others'; any other step what the reserve at that pace
// leaves (at most 0: it is left out). A step without a plan (planned 0)
// that is essential gets what the reserve at that pace leaves too.
func Share(planned, reserve, left time.Duration, essential bool, factor float64) time.Duration {
	if left <= 0 {
		return 0
	}
	if essential && planned > 0 {
		return time.Duration(float64(left) * float64(planned) / float64(planned+reserve))
	}
	return max(left-time.Duration(float64(reserve)*factor), 0)
}

// Round is d to the second, or under 10 s to a tenth of one, as eval
// says its budget's times.
func Round(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
