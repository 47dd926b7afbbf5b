package monitor

import (
	"fmt"

	"github.com/numalab/numalab/internal/stats"
)

// Analysis is a monitoring run's answer: one Overhead per facility, in
// the order they ran.
type Analysis struct {
	Streams   int        `json:"streams"`
	Placement string     `json:"placement"` // "" = all CPUs
	Overheads []Overhead `json:"overheads"`
}

// Overhead is what one facility costs: throughput with it off and on over
// the repeats (median and interval of each side) and the ratio on/off,
// with its interval (stats.RatioOf). A cell cut short by Ctrl-C is left
// out.
type Overhead struct {
	Facility string         `json:"facility"`
	Off      stats.Interval `json:"off_tps"`
	On       stats.Interval `json:"on_tps"`
	Ratio    stats.Ratio    `json:"ratio"` // tps on / tps off
	Verdict  string         `json:"verdict"`
	// EmptyOff and EmptyOn count the cells that completed no call in
	// their window, left out of the figures.
	EmptyOff int `json:"empty_off,omitempty"`
	EmptyOn  int `json:"empty_on,omitempty"`
}

// Verdicts.
const (
	Costs      = "costs"       // the interval lies below 1
	Faster     = "faster on"   // the interval lies above 1: noise, or a real gain
	CannotTell = "cannot tell" // the interval holds 1, or there is none
)

// Analyze is the analysis of the cells at saturation (AnalyzePaced is
// that of the paced ones).
func Analyze(cells []Cell) Analysis {
	var a Analysis
	sides := map[string]*[2][]float64{}
	empty := map[string]*[2]int{}
	var order []string
	for _, c := range cells {
		if c.Cell.Interrupted || c.Paced {
			continue
		}
		a.Streams, a.Placement = c.Cell.Streams, c.Cell.Placement
		s := sides[c.Facility]
		if s == nil {
			s = &[2][]float64{}
			sides[c.Facility], empty[c.Facility] = s, &[2]int{}
			order = append(order, c.Facility)
		}
		i := 0
		if c.On {
			i = 1
		}
		if c.Cell.Total.Count == 0 {
			empty[c.Facility][i]++
			continue
		}
		s[i] = append(s[i], c.Cell.TPS)
	}
	for _, f := range order {
		s := sides[f]
		o := Overhead{Facility: f, Off: stats.Summarize(s[0]), On: stats.Summarize(s[1]), Ratio: stats.RatioOf(s[0], s[1]),
			EmptyOff: empty[f][0], EmptyOn: empty[f][1]}
		switch {
		case !o.Ratio.HasCI || o.Ratio.Contains(1):
			o.Verdict = CannotTell
		case o.Ratio.Hi < 1:
			o.Verdict = Costs
		default:
			o.Verdict = Faster
		}
		a.Overheads = append(a.Overheads, o)
	}
	return a
}

// Cost is the verdict in words: "costs 3.1% [1.2, 5.0]", "cannot tell
// (-0.4% [-2.1, 1.5])", "cannot tell (too few repeats: n=3+3)".
func (o Overhead) Cost() string {
	s := o.cost()
	if o.EmptyOff+o.EmptyOn > 0 {
		s += fmt.Sprintf("; left out: cells that completed no call, %d off, %d on", o.EmptyOff, o.EmptyOn)
	}
	return s
}

func (o Overhead) cost() string {
	r := o.Ratio
	switch {
	case r.Estimate == 0:
		return fmt.Sprintf("%s (nothing measured on a side: n=%d+%d)", CannotTell, r.NA, r.NB)
	case !r.HasCI:
		return fmt.Sprintf("%s (%+.1f%%, too few repeats for an interval: n=%d+%d)",
			CannotTell, 100*(1-r.Estimate), r.NA, r.NB)
	}
	pct := fmt.Sprintf("%.1f%% [%.1f, %.1f]", 100*(1-r.Estimate), 100*(1-r.Hi), 100*(1-r.Lo))
	switch o.Verdict {
	case Costs:
		return "costs " + pct
	case Faster:
		return "faster on: " + pct
	}
	return CannotTell + " (" + pct + ")"
}
