package model

import (
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
