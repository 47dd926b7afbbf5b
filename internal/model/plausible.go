package model

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/numalab/numalab/internal/setting"
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

// CheckSMTGain refuses an SMT gain given without a measurement that lies
// outside the published band (PublishedSMTGain, with its source), or
// above the smallest thread count above one of threads: k hardware
// threads share one core, so together they do at most k times what one
// thread does. A measured gain (SMTRunHint) is checked by neither: it is
// what the machine did.
func CheckSMTGain(gain float64, threads []int) error {
	least := 0
	for _, k := range threads {
		if k > 1 && (least == 0 || k < least) {
			least = k
		}
	}
	b := PublishedSMTGain
	var errs []error
	if least > 0 && gain > float64(least) {
		errs = append(errs, setting.Errorf("smt-gain", "%q is above %d, the --smt thread count: %d hardware threads "+
			"share one core, so together they do at most %d× one thread's work (the published OLTP gains are %s)",
			AsGiven(gain), least, least, least, b))
	}
	if gain < b.Low || gain > b.High {
		errs = append(errs, setting.Errorf("smt-gain",
			"%q is outside the published band, %s to %s (%s): without a measurement the model takes no gain outside it; %s",
			AsGiven(gain), Sig(b.Low, 4), Sig(b.High, 4), b.Source, SMTRunHint))
	}
	return errors.Join(errs...)
}

// SMTRunHint says how to give a measured SMT gain.
const SMTRunHint = "to use a measured gain, give --smt-run ID, a stored OLTP run with smt=on and smt=off cells " +
	"on the same cores (as eval's SMT step stores)"

// Check refuses latencies no machine has: a remote latency below the
// local one (a remote access crosses the link between sockets on top of
// what a local one does), or one socket's above a multi-socket server's
// local one (one socket skips the other sockets' coherency check). Only
// latencies given (above 0) are checked.
func (l Latencies) Check() error {
	var errs []error
	if l.RemoteNS > 0 && l.LocalNS > 0 && l.RemoteNS < l.LocalNS {
		errs = append(errs,
			setting.Errorf("remote-ns", "%q is below --local-ns (%s ns): a remote access crosses the link between sockets "+
				"on top of a local one, so it takes at least the local latency", AsGiven(l.RemoteNS), AsGiven(l.LocalNS)))
	}
	if l.TwoHopNS > 0 && l.TwoHopNS < l.RemoteNS {
		errs = append(errs, setting.Errorf("remote-ns", "two hops' %q is below one hop's %s ns: an access two hops "+
			"away crosses one more link, so it takes at least one hop's latency", AsGiven(l.TwoHopNS), AsGiven(l.RemoteNS)))
	}
	if l.OneSocketNS > 0 && l.LocalNS > 0 && l.OneSocketNS > l.LocalNS {
		errs = append(errs,
			setting.Errorf("one-socket-ns", "%q is above --local-ns (%s ns): one socket skips the other sockets' coherency "+
				"check, so its latency is at most a multi-socket server's local one", AsGiven(l.OneSocketNS), AsGiven(l.LocalNS)))
	}
	return errors.Join(errs...)
}
