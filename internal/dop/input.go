package dop

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/numalab/numalab/internal/model"
)

// Input is the DOP rule as 'model dop' is given it: the threshold and
// the plan costs as typed ("": not given; no costs is a ladder), the cost
// units a second is worth (0: not given), the stored tpch run that fits
// them instead (RunID, 0: none), one socket's cores, and the span
// threshold (0: never span) with the sockets a spanning plan may use.
type Input struct {
	Threshold, Costs        string
	UnitsPerSecond          float64
	RunID                   int64
	CoresPerSocket, Sockets int
	Span                    float64
}

// bad is the error for a flag's value that parsed but makes no sense, as
// the command line's flags word it.
func bad(flag, value, want string) error {
	return fmt.Errorf("-%s: %q %s", flag, value, want)
}

// Check parses and checks what needs no stored run: the threshold, where
// its time's conversion comes from (--units-per-second or --run, once, and
// only for a time) and the costs. Every refusal names its flag.
func (in Input) Check() (Threshold, []float64, error) {
	var errs []error
	add := func(cond bool, flag, value, want string) {
		if cond {
			errs = append(errs, bad(flag, value, want))
		}
	}
	var th Threshold
	if in.Threshold != "" {
		var err error
		th, err = ParseThreshold(in.Threshold)
		add(err != nil, "threshold", in.Threshold,
			"is not a plan cost or a time: want e.g. --threshold 30 or --threshold 0.5s")
	}
	add(in.UnitsPerSecond > 0 && in.RunID != 0, "run", strconv.FormatInt(in.RunID, 10),
		"gives the cost units per second a second time: want --units-per-second or --run, not both")
	add(th.Seconds > 0 && in.UnitsPerSecond == 0 && in.RunID == 0, "threshold", in.Threshold,
		"is a time: give --units-per-second (e.g. 57.135) or --run ID of a stored tpch run to turn it into a cost")
	add(th.Cost > 0 && (in.UnitsPerSecond > 0 || in.RunID != 0), "threshold", in.Threshold,
		"is a cost already: --units-per-second and --run are for a threshold in time (e.g. 0.5s)")
	var cs []float64
	if in.Costs != "" {
		var err error
		cs, err = model.ParsePositives("cost", in.Costs)
		errs = append(errs, err)
	}
	return th, cs, errors.Join(errs...)
}

// Ladder is the rule of threshold th (Check's) applied to costs:
// runSecondsPerUnit is the stored run's fit when in names one, else
// --units-per-second gives the seconds per cost unit. A span threshold
// below the threshold's cost, or with nothing to span, is refused.
func (in Input) Ladder(th Threshold, costs []float64, runSecondsPerUnit float64) (Ladder, error) {
	secs := runSecondsPerUnit
	if in.RunID == 0 && in.UnitsPerSecond > 0 {
		secs = 1 / in.UnitsPerSecond
	}
	rule, err := th.Rule(secs, in.CoresPerSocket, in.Sockets)
	if err != nil {
		return Ladder{}, err
	}
	rule.SpanThreshold = in.Span
	var errs []error
	if in.Span > 0 && in.Span < rule.Threshold {
		errs = append(errs, bad("span-threshold", model.Num(in.Span),
			fmt.Sprintf("is below the threshold's cost %s: want a higher cost (or 0: never span)", model.Num(rule.Threshold))))
	}
	if in.Span > 0 && in.Sockets < 2 {
		errs = append(errs,
			bad("sockets", strconv.Itoa(in.Sockets), "leaves nothing to span: with --span-threshold give --sockets 2 or more"))
	}
	if err := errors.Join(errs...); err != nil {
		return Ladder{}, err
	}
	return rule.Ladder(costs)
}
