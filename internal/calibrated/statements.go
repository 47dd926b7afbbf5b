package calibrated

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/model"
)

// Statements are what must be shown wherever the calibrated model's numbers
// appear: every assumption with its source, the residual of each measured
// cell, the flags, and the notes.
func (m *Model) Statements() []string {
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
// it was fitted to, the held-out predictions with their errors, and the
// held-out point at another latency with its error.
func (m *Model) Checks() []string {
	var out []string
	for _, r := range m.Residuals {
		out = append(out, fmt.Sprintf("residual of %s: measured %s tps per core, model %s, error %+.2f%%%s",
			orCell(r.Cell), strconv.FormatFloat(r.TPSPerCore, 'f', 1, 64), strconv.FormatFloat(r.FitTPSPerCore, 'f', 1, 64),
			100*r.RelativeErrorTPS, residualNote(m)))
	}
	if m.HeldOut != nil {
		out = append(out, m.HeldOut.String())
	}
	if m.Measured != nil {
		for _, h := range m.Measured.HeldOut {
			out = append(out, h.String())
		}
	}
	if m.Other != nil {
		out = append(out, m.Other.String())
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
func residualNote(m *Model) string {
	switch {
	case m.Fit == nil:
		return " (one latency: the fit passes through its median by construction, so this is the cells' spread, not a test)"
	case m.Fit.Points == 2:
		return " (two points fit A and M exactly: they test nothing)"
	}
	return ""
}

// Assumption returns the named assumption, if stated.
func (m *Model) Assumption(name string) (Assumption, bool) {
	for _, a := range m.Assumptions {
		if a.Name == name {
			return a, true
		}
	}
	return Assumption{}, false
}

// Brief is the assumptions in one clause, for a one-line summary: each
// with its value and whether it was measured or assumed, and the flags'
// count.
func (m *Model) Brief() string {
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

// Derived is A and M with their intervals and what follows from them at
// one socket's latency: cycles per transaction and the stall share
// M·L·f/C. Misses per transaction are at least M (overlapped misses are
// not counted); instructions per cycle need an instruction count, which
// the calibration does not measure (see CheckInstructions).
func (m *Model) Derived() string {
	w := m.Workload
	a, mm := w.Core(), w.Waits()
	var ai, mi string
	if f := m.Fit; f != nil {
		ai, mi = f.AInterval.Parenthesised(), f.MInterval.Parenthesised()
	}
	return fmt.Sprintf("C = A + M·L·f with A = %s core cycles%s and M = %s memory waits per transaction%s; at "+
		"one socket's %s ns and %s GHz C = %s cycles, %s of them waiting for memory (the stall share), and at least "+
		"%s last-level misses per transaction",
		model.Thousands(a), ai, model.Thousands(mm), mi, model.Fixed(m.OneSocketNS, 1), model.Fixed(m.GHz, 2),
		model.Thousands(model.CyclesPerTxn(w, m.OneSocketNS, m.GHz)), model.Percent(m.StallShare), model.Thousands(mm))
}

// LatencyWords says which latency is which in one clause: the measured
// one is "the DRAM latency".
func (m *Model) LatencyWords() string {
	if m.RemoteAssumed {
		return fmt.Sprintf("one socket: the DRAM latency, %s ns; several sockets: local %s ns and remote %s ns, "+
			"assumed from the published ratios",
			model.Fixed(m.OneSocketNS, 1), model.Fixed(m.LocalNS, 1), model.Fixed(m.RemoteNS, 1))
	}
	return fmt.Sprintf("several sockets: local: the DRAM latency, %s ns, and remote %s ns, measured; one socket "+
		"%s ns, assumed from the published ratio",
		model.Fixed(m.LocalNS, 1), model.Fixed(m.RemoteNS, 1), model.Fixed(m.OneSocketNS, 1))
}
