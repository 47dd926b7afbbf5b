package model

import "fmt"

// DOPRule is the rule of thumb for a query's degree of parallelism: none
// below a cost threshold; DOP 2 at the threshold; double the DOP for every
// 4× of cost above it (4T → 4, 16T → 8, ...), capped at the physical cores
// of one socket; spanning sockets only above a separate, higher threshold,
// and rather a lower DOP than a split across sockets below it.
type DOPRule struct {
	Threshold      float64 `json:"threshold"` // T: the cost at which parallelism starts
	CoresPerSocket int     `json:"cores_per_socket"`
	SpanThreshold  float64 `json:"span_threshold"` // cost from which a plan may span sockets; 0: never
	Sockets        int     `json:"sockets"`
}

// Validate reports the first parameter out of range.
func (r DOPRule) Validate() error {
	switch {
	case !(r.Threshold > 0):
		return fmt.Errorf("cost threshold %v: want a positive cost: %w", r.Threshold, ErrInput)
	case r.CoresPerSocket < 1:
		return fmt.Errorf("%d cores per socket: want at least 1: %w", r.CoresPerSocket, ErrInput)
	case r.SpanThreshold < 0:
		return fmt.Errorf("span threshold %v: want 0 (never span) or a cost above the threshold: %w", r.SpanThreshold, ErrInput)
	case r.SpanThreshold > 0 && r.SpanThreshold < r.Threshold:
		return fmt.Errorf("span threshold %v is below the cost threshold %v: want a higher one: %w", r.SpanThreshold, r.Threshold, ErrInput)
	case r.SpanThreshold > 0 && r.Sockets < 2:
		return fmt.Errorf("span threshold given for %d socket(s): spanning needs at least 2: %w", r.Sockets, ErrInput)
	}
	return nil
}

// DOPAdvice is the rule's answer for one cost.
type DOPAdvice struct {
	Cost   float64 `json:"cost"`
	DOP    int     `json:"dop"`
	Raw    int     `json:"uncapped_dop"` // the doubling rule before any cap
	Spans  bool    `json:"spans_sockets"`
	Reason string  `json:"reason"`
}

// DOP applies the rule to a plan cost. Call Validate first.
func (r DOPRule) DOP(cost float64) DOPAdvice {
	a := DOPAdvice{Cost: cost, DOP: 1, Raw: 1}
	if cost < r.Threshold {
		a.Reason = "below the cost threshold: serial"
		return a
	}
	d := 2
	for next := 4 * r.Threshold; cost >= next; next *= 4 {
		d *= 2
	}
	a.Raw, a.DOP = d, d
	a.Reason = "doubling rule"
	if d <= r.CoresPerSocket {
		return a
	}
	if r.SpanThreshold > 0 && cost >= r.SpanThreshold && r.Sockets > 1 {
		all := r.CoresPerSocket * r.Sockets
		a.DOP, a.Spans = min(d, all), true
		a.Reason = "above the span threshold: spans sockets"
		if d > all {
			a.Reason += ", capped at all cores"
		}
		return a
	}
	a.DOP = r.CoresPerSocket
	a.Reason = "capped at one socket's cores"
	return a
}
