// Package dop is the rule of thumb for a query's degree of parallelism:
// serial below a plan-cost threshold, then doubling for every 4× of cost,
// capped at one socket's cores, spanning sockets only above a second
// threshold (Rule, Advice); the threshold given as a cost or as a time
// turned into one by the seconds a cost unit takes (Threshold); the DOP of
// a ladder of costs (Ladder, Write). It does no I/O beyond the writer it
// is given and knows no engine: the costs are the caller's.
package dop

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/numalab/numalab/internal/model"
)

// Rule is the rule of thumb for a query's degree of parallelism: none
// below a cost threshold; DOP 2 at the threshold; double the DOP for every
// 4× of cost above it (4T → 4, 16T → 8, ...), capped at the physical cores
// of one socket; spanning sockets only above a separate, higher threshold,
// and rather a lower DOP than a split across sockets below it.
type Rule struct {
	Threshold float64 `json:"threshold"` // T: the cost at which parallelism starts
	// ThresholdSeconds, when T was given as a time, is that time, and
	// SecondsPerUnit the fitted seconds per cost unit that made it T.
	ThresholdSeconds float64 `json:"threshold_seconds,omitempty"`
	SecondsPerUnit   float64 `json:"seconds_per_unit,omitempty"`
	CoresPerSocket   int     `json:"cores_per_socket"`
	SpanThreshold    float64 `json:"span_threshold"` // cost from which a plan may span sockets; 0: never
	Sockets          int     `json:"sockets"`
}

// Validate reports the first parameter out of range.
func (r Rule) Validate() error {
	switch {
	case !(r.Threshold > 0):
		return fmt.Errorf("cost threshold %v: want a positive cost: %w", r.Threshold, model.ErrInput)
	case r.CoresPerSocket < 1:
		return fmt.Errorf("%d cores per socket: want at least 1: %w", r.CoresPerSocket, model.ErrInput)
	case r.SpanThreshold < 0:
		return fmt.Errorf("span threshold %v: want 0 (never span) or a cost above the threshold: %w",
			r.SpanThreshold, model.ErrInput)
	case r.SpanThreshold > 0 && r.SpanThreshold < r.Threshold:
		return fmt.Errorf("span threshold %v is below the cost threshold %v: want a higher one: %w",
			r.SpanThreshold, r.Threshold, model.ErrInput)
	case r.SpanThreshold > 0 && r.Sockets < 2:
		return fmt.Errorf("span threshold given for %d socket(s): spanning needs at least 2: %w", r.Sockets, model.ErrInput)
	}
	return nil
}

// Advice is the rule's answer for one cost.
type Advice struct {
	Cost   float64 `json:"cost"`
	DOP    int     `json:"dop"`
	Raw    int     `json:"uncapped_dop"` // the doubling rule before any cap
	Spans  bool    `json:"spans_sockets"`
	Reason string  `json:"reason"`
}

// DOP applies the rule to a plan cost. Call Validate first.
func (r Rule) DOP(cost float64) Advice {
	a := Advice{Cost: cost, DOP: 1, Raw: 1}
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

// Threshold is where parallelism starts as given: a plan cost, or a
// time that a fitted seconds per cost unit turns into one (Chang's
// proposal: about half a second, cost 30 at a measured 57 units/s).
type Threshold struct {
	Cost    float64 `json:"cost,omitempty"`
	Seconds float64 `json:"seconds,omitempty"`
}

// ParseThreshold reads a threshold: a time with its unit ("0.5s",
// "500ms") or a plain plan cost ("30").
func ParseThreshold(s string) (Threshold, error) {
	v := strings.TrimSpace(s)
	if c, err := strconv.ParseFloat(v, 64); err == nil {
		if !(c > 0) {
			return Threshold{}, fmt.Errorf("threshold %q: want a positive cost or time, e.g. 30 or 0.5s: %w", s, model.ErrInput)
		}
		return Threshold{Cost: c}, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return Threshold{},
			fmt.Errorf("threshold %q: want a plan cost (30) or a time with its unit (0.5s, 500ms): %w", s, model.ErrInput)
	}
	return Threshold{Seconds: d.Seconds()}, nil
}

// String is the threshold as ParseThreshold reads it.
func (t Threshold) String() string {
	if t.Seconds > 0 {
		return (time.Duration(t.Seconds * float64(time.Second))).String()
	}
	return model.Num(t.Cost)
}

// Rule is the DOP rule with this threshold, for one socket of cores: a
// cost as given, or a time divided by secondsPerUnit (0: not known, an
// error for a time).
func (t Threshold) Rule(secondsPerUnit float64, coresPerSocket, sockets int) (Rule, error) {
	r := Rule{Threshold: t.Cost, CoresPerSocket: coresPerSocket, Sockets: sockets}
	if t.Seconds > 0 {
		if !(secondsPerUnit > 0) {
			return Rule{}, fmt.Errorf("threshold %s is a time: it needs the seconds a cost unit takes, fitted from "+
				"measured queries (give one, or give the threshold as a cost): %w", t, model.ErrInput)
		}
		r.Threshold, r.ThresholdSeconds, r.SecondsPerUnit = t.Seconds/secondsPerUnit, t.Seconds, secondsPerUnit
	}
	return r, r.Validate()
}

// Ladder is the DOP rule applied to plan costs.
type Ladder struct {
	Rule   Rule     `json:"rule"`
	Advice []Advice `json:"advice"`
}

// Ladder applies the rule to costs; with none, to a ladder of multiples of
// the threshold from T/2 to 1024T. A rule that is not valid (Validate) is
// refused.
func (r Rule) Ladder(costs []float64) (Ladder, error) {
	if err := r.Validate(); err != nil {
		return Ladder{}, err
	}
	if len(costs) == 0 {
		for f := 0.5; f <= 1024; f *= 2 {
			costs = append(costs, f*r.Threshold)
		}
	}
	l := Ladder{Rule: r}
	for _, c := range costs {
		l.Advice = append(l.Advice, r.DOP(c))
	}
	return l, nil
}

// Write prints the rule in words and the DOP of each cost, and each
// cost in seconds too when the threshold was a time.
func Write(w io.Writer, l Ladder) error {
	r := l.Rule
	if r.SecondsPerUnit > 0 {
		fmt.Fprintf(w, "Threshold %s s at %s s per cost unit (%s units/s): cost %s\n", model.Num(r.ThresholdSeconds),
			sig4(r.SecondsPerUnit), sig4(1/r.SecondsPerUnit), sig4(r.Threshold))
	}
	fmt.Fprintf(w, "Rule: serial below cost %s; DOP 2 at %s; doubled for every 4× above; at most %d (one socket)",
		sig4(r.Threshold), sig4(r.Threshold), r.CoresPerSocket)
	if r.SpanThreshold > 0 {
		fmt.Fprintf(w, "; from cost %s up to %d over %d sockets", model.Num(r.SpanThreshold),
			r.CoresPerSocket*r.Sockets, r.Sockets)
	}
	fmt.Fprint(w, "\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	secs := r.SecondsPerUnit > 0
	if secs {
		fmt.Fprintln(tw, "cost\tseconds\tcost/T\tDOP\tspans sockets\twhy")
	} else {
		fmt.Fprintln(tw, "cost\tcost/T\tDOP\tspans sockets\twhy")
	}
	for _, a := range l.Advice {
		spans := "no"
		if a.Spans {
			spans = "yes"
		}
		why := a.Reason
		if a.Raw != a.DOP {
			why += fmt.Sprintf(" (rule says %d)", a.Raw)
		}
		if secs {
			fmt.Fprintf(tw, "%s\t%s\t", sig4(a.Cost), sig4(a.Cost*r.SecondsPerUnit))
		} else {
			fmt.Fprintf(tw, "%s\t", model.Num(a.Cost))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", sig4(a.Cost/r.Threshold), a.DOP, spans, why)
	}
	return tw.Flush()
}

// sig4 prints x to 4 significant digits, without an exponent or
// trailing zeros; from 1000 on, the whole number.
func sig4(x float64) string {
	if x >= 1000 {
		return strconv.FormatFloat(math.Round(x), 'f', 0, 64)
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 4, 64), 64)
	return model.Num(v)
}
