package calib

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/setting"
)

// Predict evaluates w on the machine of s over g: its sockets default to
// the machine's (model.Machine.DefaultSockets: 1, 2 and 4 without a
// topology), its clocks to the machine's clock. socketsFlag is --sockets
// as given, for its error.
func (s MachineSpec) Predict(w model.Workload, g model.Grid, socketsFlag string) (model.Table, error) {
	mc, t, machineGHz, err := s.Build(maxOr(g.Sockets, model.PublishedSockets))
	if err != nil {
		return model.Table{}, err
	}
	if len(g.Sockets) == 0 {
		g.Sockets = mc.DefaultSockets()
	}
	if err := socketsFit(socketsFlag, g.Sockets, mc, t); err != nil {
		return model.Table{}, err
	}
	if len(g.GHz) == 0 && machineGHz > 0 {
		g.GHz = []float64{machineGHz}
	}
	if len(g.GHz) == 0 {
		return model.Table{},
			setting.New("ghz", "missing: give the core clock, e.g. --ghz 3 (or several with --ghz-list 3,2,1)")
	}
	tab, err := model.Evaluate(w, mc, g)
	if err != nil {
		return model.Table{}, fmt.Errorf("evaluating the model: %w", err)
	}
	return tab, nil
}

// socketsFit refuses socket counts ss that topology t (the one that
// limits mc) does not have; flagValue is --sockets as given ("": not
// given).
func socketsFit(flagValue string, ss []int, mc model.Machine, t *result.Topology) error {
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
	return setting.Errorf("sockets",
		"%q does not fit topology %s: it has %d socket(s) (try --sockets %s)", flagValue, t.Source, n, strings.Join(def, ","))
}

func maxOr(s []int, def int) int {
	if len(s) == 0 {
		return def
	}
	return slices.Max(s)
}

// Size sizes z on the machine of s (z.Machine is built here), its socket
// counts limited by the topology's; socketsFlag is --sockets as given,
// for its error. It returns z with its machine, and Size's rows.
func (s MachineSpec) Size(z model.Sizing, socketsFlag string) (model.Sizing, []model.SizeRow, error) {
	mc, t, _, err := s.Build(maxOr(z.Sockets, 1))
	if err != nil {
		return z, nil, err
	}
	if err := socketsFit(socketsFlag, z.Sockets, mc, t); err != nil {
		return z, nil, err
	}
	z.Machine = mc
	rows, err := model.Size(z)
	if err != nil {
		return z, nil, fmt.Errorf("sizing: %w", err)
	}
	return z, rows, nil
}

// Check refuses the figures given in s that no machine has: latencies
// and a buffer's extra latency outside the plausible ranges (unless
// unchecked), and latencies out of their physical order
// (model.Latencies.Check, always).
func (s MachineSpec) Check(unchecked bool) error {
	var errs []error
	for _, f := range []struct {
		name string
		v    float64
	}{{"local-ns", s.LocalNS}, {"one-socket-ns", s.OneSocketNS}, {"remote-ns", s.RemoteNS}} {
		if f.v > 0 {
			errs = append(errs, model.Plausible(f.name, []float64{f.v}, nil, nil, unchecked))
		}
	}
	if s.TwoHopNS > 0 {
		errs = append(errs, model.Plausible("remote-ns", []float64{s.TwoHopNS}, nil, nil, unchecked))
	}
	errs = append(errs,
		model.Latencies{LocalNS: s.LocalNS, OneSocketNS: s.OneSocketNS, RemoteNS: s.RemoteNS, TwoHopNS: s.TwoHopNS}.Check())
	if s.BufferNS > model.PlausibleMaxNS && !unchecked {
		errs = append(errs,
			setting.Errorf("buffer-ns", "%q is not a plausible extra latency: want up to %g ns (--unchecked accepts it)",
				fmt.Sprint(s.BufferNS), model.PlausibleMaxNS))
	}
	return errors.Join(errs...)
}
