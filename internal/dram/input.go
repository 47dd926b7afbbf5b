package dram

import (
	"errors"
	"fmt"
)

// Input is a module as 'model dram' is given it: the transfer rate (MTS;
// MTSGiven false: not given), the timings CL-tRCD-tRP, tRC and tRAS as
// typed ("": not given), and a core clock (0: none).
type Input struct {
	MTS                float64
	MTSGiven           bool
	Timings, TRC, TRAS string
	GHz                float64
}

// bad is the error for a flag's value that parsed but makes no sense, as
// the command line's flags word it.
func bad(flag, value, want string) error {
	return fmt.Errorf("-%s: %q %s", flag, value, want)
}

// Access parses and checks in and computes the module's timing
// arithmetic (Compute). Every input it refuses is reported at once, each
// naming its flag: timings or tRC missing, tRC given twice (--trc and
// --tras), tRAS without the timings' tRP, a rate or timings outside DDR's
// bounds (CheckRate, CheckTimings), and values that do not parse.
func (in Input) Access() (Access, error) {
	var errs []error
	add := func(cond bool, flag, value, want string) {
		if cond {
			errs = append(errs, bad(flag, value, want))
		}
	}
	add(in.Timings == "" && in.TRC == "", "timings", "",
		"is needed unless --trc is given: want e.g. --timings 19-19-19, --trc 45.75ns, or both")
	add(in.TRC != "" && in.TRAS != "", "tras", in.TRAS, "gives tRC a second time: want --trc or --tras, not both")
	add(in.TRAS != "" && in.Timings == "", "tras", in.TRAS, "needs --timings for tRP (tRC = tRAS + tRP)")
	rateOK := true
	if in.MTSGiven {
		err := CheckRate("mts", in.MTS)
		errs, rateOK = append(errs, err), err == nil
	}
	var t *Timings
	if in.Timings != "" {
		tm, err := ParseTimings(in.Timings)
		add(err != nil, "timings", in.Timings, "is not CL-tRCD-tRP in memory clocks: want e.g. --timings 19-19-19")
		if err == nil && rateOK && in.MTS > 0 {
			errs = append(errs, CheckTimings("timings", in.Timings, tm, in.MTS))
		}
		t = &tm
	}
	var rc *RowCycle
	if in.TRC != "" && in.MTS > 0 {
		r, err := ParseRowCycle(in.TRC, in.MTS)
		add(err != nil, "trc", in.TRC,
			"is not a time with its unit: want e.g. --trc 45.75ns (nanoseconds) or --trc 8clk (memory clocks)")
		rc = &r
	}
	if in.TRAS != "" && in.MTS > 0 && t != nil {
		ns, _, err := ParseClockSpan(in.TRAS, in.MTS)
		add(err != nil, "tras", in.TRAS, "is not a time with its unit: want e.g. --tras 32ns")
		r := RowCycleFromRAS(in.MTS, ns, *t)
		rc = &r
	}
	if err := errors.Join(errs...); err != nil {
		return Access{}, err
	}
	return Compute(in.MTS, t, rc, in.GHz), nil
}
