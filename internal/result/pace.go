package result

import (
	"fmt"
	"strconv"
	"time"
)

// Pace is how a paced cell spaced its calls and what that did; a cell
// without one ran the closed loop with no think time.
//
// In an open-loop cell (Mode "rate") the cell's latency figures (Total,
// Types) run from each call's intended start, so time a call spent
// waiting for its stream counts; Service has them from the call's actual
// start. In a think-time cell (Mode "think") both run from the actual
// start.
type Pace struct {
	Mode string `json:"mode"` // "think" or "rate"
	// Think is the think time after each call (its mean when
	// ThinkDist is "exponential").
	Think     time.Duration `json:"think_ns,omitempty"`
	ThinkDist string        `json:"think_dist,omitempty"` // "fixed" or "exponential"
	// Rate is the calls per second asked for, over all streams together;
	// Arrivals how they were spaced: "poisson" or "uniform".
	Rate     float64 `json:"rate_per_s,omitempty"`
	Arrivals string  `json:"arrivals,omitempty"`
	// Offered is how many calls were due to start in the measured window.
	Offered int64 `json:"offered"`
	// Late counts calls completed in the window that started more than
	// LateAfter after their intended start: their stream was still busy,
	// or its thread woke late.
	Late      int64         `json:"late"`
	LateAfter time.Duration `json:"late_after_ns"`
	// Backlog is how many calls due in the window had not started when
	// it closed.
	Backlog int64 `json:"backlog"`
	// Service is every successful call's latency from its actual start.
	Service TxStats `json:"service"`
}

// Text says in one line how a paced cell went: its pacing, and for an
// open loop the calls due, completed, late and never started, with the
// latency percentiles of total (the cell's Total: from intended start in
// an open loop) and the service time's p99.
func (p *Pace) Text(total TxStats) string {
	ms := func(us float64) string { return strconv.FormatFloat(us/1000, 'f', 2, 64) }
	lat := fmt.Sprintf("p50 %s ms, p99 %s ms", ms(total.P50US), ms(total.P99US))
	if p.Mode != "rate" {
		return fmt.Sprintf("think %v (%s): %d completed; %s", p.Think, p.ThinkDist, total.Count, lat)
	}
	return fmt.Sprintf("%s/s (%s): %d due in the window, %d completed, %d started over %v late, %d never started; "+
		"from intended start %s; service p99 %s ms",
		strconv.FormatFloat(p.Rate, 'g', 4, 64), p.Arrivals, p.Offered, total.Count, p.Late, p.LateAfter, p.Backlog,
		lat, ms(p.Service.P99US))
}
