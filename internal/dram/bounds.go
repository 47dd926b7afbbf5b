package dram

import (
	"fmt"

	"github.com/numalab/numalab/internal/model"
)

// Physical bounds: a value outside them is no machine's whatever its make
// (--unchecked does not accept it).
const (
	// MinMTS and MaxMTS are the DDR transfer rates JEDEC has standardised,
	// from DDR-200 (DDR, JESD79) to DDR5-8800 (DDR5, JESD79-5): the range
	// any DDR generation's server memory runs at.
	MinMTS, MaxMTS = 200.0, 8800.0
	// MinTimingNS and MaxTimingNS bound the time of one DRAM timing (CL,
	// tRCD or tRP) at its rate, clocks × 2000/MT/s: DDR to DDR5 parts take
	// 10 to 20 ns (DDR-400 CL3 15 ns, DDR4-3200 CL22 13.75 ns, DDR5-4800
	// CL40 16.7 ns), the fastest modules sold about 7 ns.
	MinTimingNS, MaxTimingNS = 5.0, 30.0
)

// RateBound says why mts is no DDR transfer rate, or "" when it is one.
func RateBound(mts float64) string {
	if mts < MinMTS || mts > MaxMTS {
		return fmt.Sprintf("not a DDR transfer rate: want %g to %g MT/s, DDR-200 (the slowest DDR) to DDR5-8800 "+
			"(the fastest DDR5 JEDEC defines)", MinMTS, MaxMTS)
	}
	return ""
}

// CheckRate refuses a transfer rate (MT/s) no DDR generation has
// (RateBound), naming flag.
func CheckRate(flag string, mts float64) error {
	if why := RateBound(mts); why != "" {
		return fmt.Errorf("-%s: %q is %s", flag, model.AsGiven(mts), why)
	}
	return nil
}

// TimingsBound says which of timings t takes, at mts MT/s, a time no DDR
// part has (MinTimingNS to MaxTimingNS), or "" when none does.
func TimingsBound(t Timings, mts float64) string {
	for _, c := range []struct {
		name   string
		clocks int
	}{{"CL", t.CL}, {"tRCD", t.RCD}, {"tRP", t.RP}} {
		if ns := float64(c.clocks) * ClockNS(mts); ns < MinTimingNS || ns > MaxTimingNS {
			return fmt.Sprintf("gives %s %d clocks, %s ns at %s MT/s: want %g to %g ns, the time DDR to DDR5 parts "+
				"take (10 to 20 ns at JEDEC's speed bins)",
				c.name, c.clocks, model.Fixed(ns, 2), model.AsGiven(mts), MinTimingNS, MaxTimingNS)
		}
	}
	return ""
}

// CheckTimings refuses timings t (given as given) of which one takes, at
// mts MT/s, a time no DDR part has (TimingsBound), naming flag.
func CheckTimings(flag, given string, t Timings, mts float64) error {
	if why := TimingsBound(t, mts); why != "" {
		return fmt.Errorf("-%s: %q %s", flag, given, why)
	}
	return nil
}
