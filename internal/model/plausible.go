package model

import (
	"errors"
	"fmt"
	"strconv"
)

// The ranges of plausible model inputs: a latency, clock or socket count
// outside them is no machine's, more likely a typo or a unit mistaken.
const (
	PlausibleMinNS, PlausibleMaxNS   = 1.0, 10000.0
	PlausibleMinGHz, PlausibleMaxGHz = 0.1, 10.0
	PlausibleMaxSockets              = 64
)

// Implausible finds the first latency (ns), clock (GHz) or socket count
// outside its plausible range: its value as given and what it is not, e.g.
// "a plausible clock: want 0.1 to 10 GHz"; why is "" when all are plausible.
func Implausible(ns, ghz []float64, sockets []int) (value, why string) {
	for _, v := range ns {
		if v < PlausibleMinNS || v > PlausibleMaxNS {
			return fmt.Sprint(v), fmt.Sprintf("a plausible memory latency: want %g to %g ns", PlausibleMinNS, PlausibleMaxNS)
		}
	}
	for _, v := range ghz {
		if v < PlausibleMinGHz || v > PlausibleMaxGHz {
			return fmt.Sprint(v), fmt.Sprintf("a plausible clock: want %g to %g GHz", PlausibleMinGHz, PlausibleMaxGHz)
		}
	}
	for _, v := range sockets {
		if v > PlausibleMaxSockets {
			return strconv.Itoa(v), fmt.Sprintf("a plausible socket count: want 1 to %d", PlausibleMaxSockets)
		}
	}
	return "", ""
}

// Plausible refuses a latency, clock or socket count that no machine has
// (Implausible), unless unchecked: flag names the flag that gave it.
func Plausible(flag string, ns, ghz []float64, sockets []int, unchecked bool) error {
	if v, why := Implausible(ns, ghz, sockets); why != "" && !unchecked {
		return fmt.Errorf("-%s: %q is not %s (--unchecked accepts it)", flag, v, why)
	}
	return nil
}

// Check refuses the figures given in s that no machine has, unless
// unchecked: the local and remote latencies, and the buffer's extra
// latency.
func (s MachineSpec) Check(unchecked bool) error {
	var errs []error
	for _, f := range []struct {
		name string
		v    float64
	}{{"local-ns", s.LocalNS}, {"remote-ns", s.RemoteNS}} {
		if f.v > 0 {
			errs = append(errs, Plausible(f.name, []float64{f.v}, nil, nil, unchecked))
		}
	}
	if s.BufferNS > PlausibleMaxNS && !unchecked {
		errs = append(errs, fmt.Errorf("-buffer-ns: %q is not a plausible extra latency: want up to %g ns (--unchecked accepts it)", fmt.Sprint(s.BufferNS), PlausibleMaxNS))
	}
	return errors.Join(errs...)
}
