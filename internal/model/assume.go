package model

import (
	"fmt"
	"math"
	"strconv"
	"strings"
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
		s := fmtValue(v)
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

// fmtValue prints an assumption's value: whole numbers with thousands
// separators, others with four significant digits.
func fmtValue(v float64) string {
	if math.Abs(v) >= 1000 {
		return thousands(v)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// thousands prints v rounded to a whole number with comma separators.
func thousands(v float64) string {
	s := strconv.FormatFloat(math.Abs(math.Round(v)), 'f', 0, 64)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if v < 0 {
		s = "-" + s
	}
	return s
}

// plausibility flags a stall share outside the published band: the fit
// then says the transaction waits for memory more or less than OLTP was
// measured to on real cores.
func (m *Calibration) plausibility() {
	if len(m.Points) == 0 || m.Fit == nil {
		return
	}
	b := PublishedStallShare
	if m.StallShare < b.Low || m.StallShare > b.High {
		m.Flags = append(m.Flags, fmt.Sprintf("the fit's stall share at one socket's %s ns, M·L·f/C = %s, is outside the published %s to %s (%s)",
			fmtF(m.OneSocketNS, 1), percent(m.StallShare), percent(b.Low), percent(b.High), b.Source))
	}
}

// CheckInstructions compares a fit with an independent instruction count
// per transaction on a core that retires at most width instructions per
// cycle: A must be at least instructions/width (the core cannot retire
// them faster) and at most the measured cycles per transaction C. It
// returns the comparison in words and whether both hold.
func CheckInstructions(a, measuredC, instructions float64, width int) (string, bool) {
	low := instructions / float64(width)
	ok := a >= low && a <= measuredC
	return fmt.Sprintf("A = %s cycles against %s instructions per transaction: at least %s (%d-wide core) %s, at most the measured C = %s %s; IPC at that C %s",
		thousands(a), thousands(instructions), thousands(low), width, holds(a >= low), thousands(measuredC), holds(a <= measuredC),
		strconv.FormatFloat(instructions/measuredC, 'f', 2, 64)), ok
}

func holds(ok bool) string {
	if ok {
		return "holds"
	}
	return "fails"
}

// Statements are what must be shown wherever the calibrated model's numbers
// appear: every assumption with its source, the residual of each measured
// cell, the flags, and the notes.
func (m *Calibration) Statements() []string {
	var out []string
	for _, a := range m.Assumptions {
		out = append(out, a.String())
	}
	out = append(out, m.Checks()...)
	for _, f := range m.Flags {
		out = append(out, "flag: "+f)
	}
	return append(out, m.Notes...)
}

// Checks are how well the model fits: the residual of each measured cell
// it was fitted to, and the held-out prediction with its error.
func (m *Calibration) Checks() []string {
	var out []string
	for _, r := range m.Residuals {
		out = append(out, fmt.Sprintf("residual of %s: measured %s tps per core, model %s, error %+.2f%%%s",
			orCell(r.Cell), strconv.FormatFloat(r.TPSPerCore, 'f', 1, 64), strconv.FormatFloat(r.FitTPSPerCore, 'f', 1, 64), 100*r.RelativeErrorTPS, residualNote(m)))
	}
	if m.HeldOut != nil {
		out = append(out, m.HeldOut.String())
	}
	if m.Measured != nil {
		for _, h := range m.Measured.HeldOut {
			out = append(out, h.String())
		}
	}
	return out
}

func orCell(s string) string {
	if s == "" {
		return "a point"
	}
	return s
}

// residualNote says why residuals are zero when the fit has as many
// parameters as points.
func residualNote(m *Calibration) string {
	switch {
	case m.Fit == nil:
		return " (one latency: the fit passes through its median by construction, so this is the cells' spread, not a test)"
	case m.Fit.Points == 2:
		return " (two points fit A and M exactly: they test nothing)"
	}
	return ""
}

// Assumption returns the named assumption, if stated.
func (m *Calibration) Assumption(name string) (Assumption, bool) {
	for _, a := range m.Assumptions {
		if a.Name == name {
			return a, true
		}
	}
	return Assumption{}, false
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

// Brief is the assumptions in one clause, for a one-line summary: each
// with its value and whether it was measured or assumed, and the flags'
// count.
func (m *Calibration) Brief() string {
	var parts []string
	for _, a := range m.Assumptions {
		parts = append(parts, fmt.Sprintf("%s %s %s", a.Name, a.value(), a.Basis))
	}
	s := strings.Join(parts, ", ")
	if n := len(m.Flags); n > 0 {
		s += fmt.Sprintf("; %d fitted parameter(s) outside the plausible range", n)
	}
	return s
}

// GivenWorkload is the assumptions of a workload given by --instructions
// and --miss rather than fitted to a run.
func GivenWorkload(w Workload) []Assumption {
	src := "--instructions and --miss (default: docs/model.md's, the literature's example transaction); not fitted: give --run to fit them"
	return []Assumption{
		{Name: AssumeInstructions, Value: w.Instructions, Basis: Assumed, Source: src},
		{Name: AssumeMiss, Value: w.Miss, Basis: Assumed, Source: src},
	}
}

// GivenCPU is a CPU given by --ghz, --local-ns (one socket's latency),
// --remote-ns, --cores and --smt rather than measured, and the assumptions
// it rests on: a multi-socket server's local latency is
// PublishedMultiSocketLocal × localNS, its remote latency remoteNS or,
// when that is 0, PublishedRemoteRatio × that local latency.
func GivenCPU(ghz, localNS, remoteNS float64, cores, smt int) (CPU, []Assumption) {
	ml, rr := PublishedMultiSocketLocal, PublishedRemoteRatio
	multi := localNS * ml.Value
	remote := Assumption{Name: AssumeRemote, Value: remoteNS, Unit: "ns", Basis: Assumed, Source: "--remote-ns"}
	if remoteNS == 0 {
		remote.Value, remote.Low, remote.High = multi*rr.Value, multi*rr.Low, multi*rr.High
		remote.Source = fmt.Sprintf("no --remote-ns: %s× the multi-socket local latency: %s", sig(rr.Value, 4), rr.Source)
	}
	return CPU{GHz: ghz, CoresPerSocket: cores, SMT: smt, OneSocketNS: localNS, LocalNS: multi, RemoteNS: remote.Value, RemoteAssumed: remoteNS == 0},
		[]Assumption{
			{Name: AssumeClock, Value: ghz, Unit: "GHz", Basis: Assumed, Source: "--ghz"},
			{Name: AssumeOneSocket, Value: localNS, Unit: "ns", Basis: Assumed, Source: "--local-ns"},
			{Name: AssumeLocal, Value: multi, Unit: "ns", Basis: Assumed, Low: localNS * ml.Low, High: localNS * ml.High,
				Source: fmt.Sprintf("%s× --local-ns: %s", sig(ml.Value, 4), ml.Source)},
			remote,
		}
}
