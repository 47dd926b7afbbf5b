package model

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/result"
)

// Predict evaluates w on the machine of s over g: its sockets default to
// the machine's (built for up to defSockets), its clocks to the machine's
// clock. socketsFlag is --sockets as given, for its error.
func (s MachineSpec) Predict(w Workload, g Grid, socketsFlag string, defSockets int) (Table, error) {
	mc, t, machineGHz, err := s.Build(maxOr(g.Sockets, defSockets))
	if err != nil {
		return Table{}, err
	}
	if len(g.Sockets) == 0 {
		g.Sockets = mc.DefaultSockets()
	}
	if err := socketsFit(socketsFlag, g.Sockets, mc, t); err != nil {
		return Table{}, err
	}
	if len(g.GHz) == 0 && machineGHz > 0 {
		g.GHz = []float64{machineGHz}
	}
	if len(g.GHz) == 0 {
		return Table{}, errors.New("-ghz: missing: give the core clock, e.g. --ghz 3 (or several with --ghz-list 3,2,1)")
	}
	tab, err := Evaluate(w, mc, g)
	if err != nil {
		return Table{}, fmt.Errorf("evaluating the model: %w", err)
	}
	return tab, nil
}

// socketsFit refuses socket counts ss that topology t (the one that
// limits mc) does not have; flagValue is --sockets as given ("": not
// given).
func socketsFit(flagValue string, ss []int, mc Machine, t *result.Topology) error {
	n := mc.MaxSockets()
	if n == 0 || t == nil || len(ss) == 0 || slices.Max(ss) <= n {
		return nil
	}
	if flagValue == "" {
		flagValue = fmt.Sprint(slices.Max(ss))
	}
	def := make([]string, len(mc.DefaultSockets()))
	for i, v := range mc.DefaultSockets() {
		def[i] = strconv.Itoa(v)
	}
	return fmt.Errorf("-sockets: %q does not fit topology %s: it has %d socket(s) (try --sockets %s)", flagValue, t.Source, n, strings.Join(def, ","))
}

func maxOr(s []int, def int) int {
	if len(s) == 0 {
		return def
	}
	return slices.Max(s)
}
