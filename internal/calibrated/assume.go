package calibrated

import (
	"fmt"
	"strconv"

	"github.com/numalab/numalab/internal/model"
)

// Assumption is one input of a calibrated prediction, with its value and
// where it came from: measured (which run and which measurement), fitted
// (to which run) or assumed (the default and why).
type Assumption struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
	Basis string  `json:"basis"` // Measured, Fitted or Assumed
	// Low and High are the band the value may lie in (a fit's 95%
	// interval, a published range); both 0: none.
	Low    float64 `json:"low,omitempty"`
	High   float64 `json:"high,omitempty"`
	Source string  `json:"source"`
}

// Banded says whether the assumption has a band.
func (a Assumption) Banded() bool { return a.Low != 0 || a.High != 0 }

// Bases of an assumption.
const (
	Measured = "measured"
	Fitted   = "fitted"
	Assumed  = "assumed"
)

// value is the value with its unit.
func (a Assumption) value() string {
	withUnit := func(v float64) string {
		s := model.Figure(v)
		switch a.Unit {
		case "":
		case "×":
			s += a.Unit
		default:
			s += " " + a.Unit
		}
		return s
	}
	v := withUnit(a.Value)
	if a.Banded() {
		v += " (" + withUnit(a.Low) + " to " + withUnit(a.High) + ")"
	}
	return v
}

// String is the assumption in one line: "remote latency 387.0 ns
// (assumed: ...)".
func (a Assumption) String() string {
	return fmt.Sprintf("%s %s (%s: %s)", a.Name, a.value(), a.Basis, a.Source)
}

// CheckInstructions compares a fit with an independent instruction count
// per transaction on a core that retires at most width instructions per
// cycle: A must be at least instructions/width (the core cannot retire
// them faster) and at most the measured cycles per transaction C. It
// returns the comparison in words and whether both hold.
func CheckInstructions(a, measuredC, instructions float64, width int) (string, bool) {
	low := instructions / float64(width)
	ok := a >= low && a <= measuredC
	return fmt.Sprintf("A = %s cycles against %s instructions per transaction: at least %s (%d-wide core) %s, "+
		"at most the measured C = %s %s; IPC at that C %s",
		model.Thousands(a), model.Thousands(instructions), model.Thousands(low), width, holds(a >= low),
		model.Thousands(measuredC), holds(a <= measuredC),
		strconv.FormatFloat(instructions/measuredC, 'f', 2, 64)), ok
}

func holds(ok bool) string {
	if ok {
		return "holds"
	}
	return "fails"
}

// Names of the calibration's assumptions.
const (
	AssumeClock        = "clock"
	AssumeOneSocket    = "one-socket latency"
	AssumeLocal        = "multi-socket local latency"
	AssumeRemote       = "remote latency"
	AssumeBuffer       = "buffer latency"
	AssumeSMT          = "SMT gain"
	AssumeA            = "core cycles per transaction A"
	AssumeM            = "memory waits per transaction M"
	AssumeInstructions = "instructions per transaction I"
	AssumeMiss         = "miss fraction m"
)
