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
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit,omitempty"`
	Basis  string  `json:"basis"` // Measured, Fitted or Assumed
	Source string  `json:"source"`
}

// Bases of an assumption.
const (
	Measured = "measured"
	Fitted   = "fitted"
	Assumed  = "assumed"
)

// value is the value with its unit.
func (a Assumption) value() string {
	v := fmtValue(a.Value)
	switch a.Unit {
	case "":
	case "×":
		v += a.Unit
	default:
		v += " " + a.Unit
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
	if v == math.Trunc(v) && math.Abs(v) >= 1000 {
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

// Plausible ranges of the fitted workload. The model's formulas were written
// for a transaction of about DefaultInstructions instructions of which
// DefaultMiss wait (docs/model.md); a fit an order of magnitude away from
// either describes another kind of work, or (with one point, m assumed) says
// the assumed m is wrong. Independently of the defaults, the formulas bound
// I for a measured point: every instruction takes at least one cycle, so
// I ≤ C, and at most all of them wait, so I ≥ C / (L·f).
const (
	PlausibleInstructionsLow  = DefaultInstructions / 10
	PlausibleInstructionsHigh = DefaultInstructions * 10
	PlausibleMissLow          = DefaultMiss / 10
	PlausibleMissHigh         = DefaultMiss * 10
)

// plausibility flags a fitted workload outside the plausible ranges, and
// says what the measured point allows.
func (m *Calibration) plausibility() {
	if len(m.Points) == 0 {
		return
	}
	w := m.Workload
	p := m.Points[0]
	c := p.GHz * 1e9 / p.TPSPerCore
	x := LatencyCycles(p.LatencyNS, p.GHz)
	if w.Instructions < PlausibleInstructionsLow || w.Instructions > PlausibleInstructionsHigh {
		m.Flags = append(m.Flags, fmt.Sprintf("fitted I = %s instructions is outside the plausible %s to %s (a tenth to ten times the default %s the model's formulas were written for): %s",
			thousands(w.Instructions), thousands(PlausibleInstructionsLow), thousands(PlausibleInstructionsHigh), thousands(DefaultInstructions), m.instructionsWhy(c, x)))
	}
	if w.Miss < PlausibleMissLow || w.Miss > PlausibleMissHigh {
		m.Flags = append(m.Flags, fmt.Sprintf("fitted m = %s is outside the plausible %s to %s (a tenth to ten times the default %s): the fit says %s of the work waits for memory, which the model's formulas were not written for",
			strconv.FormatFloat(w.Miss, 'g', 4, 64), strconv.FormatFloat(PlausibleMissLow, 'g', 4, 64), strconv.FormatFloat(PlausibleMissHigh, 'g', 4, 64),
			strconv.FormatFloat(DefaultMiss, 'g', 4, 64), percent(w.Miss)))
	}
}

// instructionsWhy explains an implausible I against the measured point.
func (m *Calibration) instructionsWhy(c, x float64) string {
	s := fmt.Sprintf("the measured point (%s cycles per transaction at L·f = %s cycles) allows I from C/(L·f) = %s to C = %s",
		thousands(c), strconv.FormatFloat(x, 'f', 0, 64), thousands(c/x), thousands(c))
	if DefaultInstructions > c {
		s += fmt.Sprintf(", so the default %s is impossible here (it needs at least one cycle per instruction)", thousands(DefaultInstructions))
	}
	if m.Fit == nil {
		s += fmt.Sprintf("; with one point I = C/((1 − m) + m·L·f) follows from the assumed m = %s, and the socket ratios depend on m alone, so they are only as good as that assumption",
			strconv.FormatFloat(m.Workload.Miss, 'g', 4, 64))
	}
	return s
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
		return " (one point fits I exactly: it tests nothing)"
	case m.Fit.Points == 2:
		return " (two points fit I and m exactly: they test nothing)"
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
	AssumeLocal        = "local latency"
	AssumeRemote       = "remote latency"
	AssumeBuffer       = "buffer latency"
	AssumeSMT          = "SMT factor"
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

// GivenCPU is a CPU given by --ghz, --local-ns, --remote-ns, --cores and
// --smt rather than measured, and the assumptions it rests on: its remote
// latency is remoteNS, or when that is 0, localNS × AssumedRemoteRatio.
func GivenCPU(ghz, localNS, remoteNS float64, cores, smt int) (CPU, []Assumption) {
	r, src := remoteNS, "--remote-ns"
	if r == 0 {
		r = localNS * AssumedRemoteRatio
		src = "no --remote-ns: 1.87× --local-ns, the ratio of docs/model.md's 2-socket example (67 ns local, 125 ns remote)"
	}
	return CPU{GHz: ghz, CoresPerSocket: cores, SMT: smt, LocalNS: localNS, RemoteNS: r}, []Assumption{
		{Name: AssumeClock, Value: ghz, Unit: "GHz", Basis: Assumed, Source: "--ghz"},
		{Name: AssumeLocal, Value: localNS, Unit: "ns", Basis: Assumed, Source: "--local-ns"},
		{Name: AssumeRemote, Value: r, Unit: "ns", Basis: Assumed, Source: src},
	}
}
