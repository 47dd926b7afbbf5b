package dram

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/numalab/numalab/internal/model"
)

// Timings are a DDR module's CAS latency, RAS-to-CAS delay and row
// precharge, in memory clock cycles, as printed on a module: CL-tRCD-tRP.
type Timings struct {
	CL  int `json:"cl"`
	RCD int `json:"trcd"`
	RP  int `json:"trp"`
}

// ParseTimings reads "CL-tRCD-tRP", e.g. "19-19-19".
func ParseTimings(s string) (Timings, error) {
	parts := strings.Split(strings.TrimSpace(s), "-")
	if len(parts) != 3 {
		return Timings{}, fmt.Errorf("timings %q: want CL-tRCD-tRP in clock cycles, e.g. 19-19-19: %w", s, model.ErrInput)
	}
	var v [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n <= 0 {
			return Timings{}, fmt.Errorf("timings %q: %q is not a positive cycle count (want CL-tRCD-tRP, e.g. 19-19-19): %w",
				s, p, model.ErrInput)
		}
		v[i] = n
	}
	return Timings{CL: v[0], RCD: v[1], RP: v[2]}, nil
}

// ClockNS is the memory clock period of DDR memory at mts MT/s: the
// clock runs at half the transfer rate, so the period is 2000/R ns.
func ClockNS(mts float64) float64 {
	return 2000 / mts
}

// AccessNS is the random-row access time at the DRAM, in ns: precharge
// the open row, activate the new one, then read:
// (tRP + tRCD + CL) · 2000/R.
func AccessNS(mts float64, t Timings) float64 {
	return float64(t.RP+t.RCD+t.CL) * ClockNS(mts)
}

// RowCycle is a module's row cycle time tRC: the shortest time from one
// ACTIVATE to the next in the same bank (tRAS + tRP). A chain of dependent
// random reads that each open a new row in one bank, pointer chasing
// at its worst, can go no faster than one access per tRC, so tRC and not
// tRP + tRCD + CL is the DRAM's share of such an access.
type RowCycle struct {
	NS float64 `json:"ns"`
	// How it was given: Clocks when in memory clocks; RASNS and RP when
	// derived as tRAS + tRP; neither when given in ns.
	Clocks float64 `json:"clocks,omitempty"`
	RASNS  float64 `json:"tras_ns,omitempty"`
	RP     int     `json:"trp,omitempty"`
}

// ParseClockSpan reads a DRAM timing given with its unit: "45.75ns" in
// nanoseconds or "8clk" in memory clocks (of DDR at mts MT/s, 2000/R ns
// each). It returns the span in ns and, when given in clocks, the clocks.
func ParseClockSpan(s string, mts float64) (ns, clocks float64, err error) {
	v := strings.TrimSpace(s)
	var unit string
	for _, u := range []string{"ns", "clk"} {
		if strings.HasSuffix(v, u) {
			v, unit = strings.TrimSpace(strings.TrimSuffix(v, u)), u
			break
		}
	}
	n, perr := strconv.ParseFloat(v, 64)
	if unit == "" || perr != nil || !(n > 0) {
		return 0, 0,
			fmt.Errorf("timing %q: want a positive time with its unit, nanoseconds or memory clocks, e.g. 45.75ns or 8clk: %w",
				s, model.ErrInput)
	}
	if unit == "ns" {
		return n, 0, nil
	}
	return n * ClockNS(mts), n, nil
}

// ParseRowCycle reads tRC as ParseClockSpan does.
func ParseRowCycle(s string, mts float64) (RowCycle, error) {
	ns, clocks, err := ParseClockSpan(s, mts)
	if err != nil {
		return RowCycle{}, fmt.Errorf("row cycle time tRC: %w", err)
	}
	return RowCycle{NS: ns, Clocks: clocks}, nil
}

// RowCycleFromRAS is tRC = tRAS + tRP, with tRAS in ns (data sheets give
// it so: 32 ns for DDR4 at 2400 MT/s and up) and tRP from the timings.
func RowCycleFromRAS(mts, rasNS float64, t Timings) RowCycle {
	return RowCycle{NS: rasNS + float64(t.RP)*ClockNS(mts), RASNS: rasNS, RP: t.RP}
}

// Access is the timing arithmetic of one DDR module, and the access in
// core cycles when a core clock is given. Timings or RowCycle may be
// absent (a module is described by either or both).
type Access struct {
	MTs      float64   `json:"mts"`
	Timings  *Timings  `json:"timings,omitempty"`
	ClockNS  float64   `json:"clock_ns"`
	CASNS    float64   `json:"cas_ns,omitempty"`
	AccessNS float64   `json:"random_row_access_ns,omitempty"`
	RowCycle *RowCycle `json:"row_cycle,omitempty"`
	CoreGHz  float64   `json:"core_ghz,omitempty"`
	// CoreCycles is AccessNS in core cycles; RowCycleCoreCycles tRC's.
	CoreCycles         float64 `json:"core_cycles,omitempty"`
	RowCycleCoreCycles float64 `json:"row_cycle_core_cycles,omitempty"`
}

// Compute is the timing arithmetic of a module at mts MT/s with timings t
// and row cycle rc (either nil: not given); ghz (0: none) expresses the
// accesses in core cycles too.
func Compute(mts float64, t *Timings, rc *RowCycle, ghz float64) Access {
	a := Access{MTs: mts, Timings: t, ClockNS: ClockNS(mts), RowCycle: rc, CoreGHz: ghz}
	if t != nil {
		a.CASNS = float64(t.CL) * a.ClockNS
		a.AccessNS = AccessNS(mts, *t)
		a.CoreCycles = a.AccessNS * ghz
	}
	if rc != nil {
		a.RowCycleCoreCycles = rc.NS * ghz
	}
	return a
}

// Write prints a module's timing arithmetic, each figure with how it
// is computed.
func Write(w io.Writer, a Access) error {
	fmt.Fprintf(w, "DDR at %s MT/s", model.Num(a.MTs))
	if t := a.Timings; t != nil {
		fmt.Fprintf(w, ", CL-tRCD-tRP %d-%d-%d", t.CL, t.RCD, t.RP)
	}
	if rc := a.RowCycle; rc != nil {
		fmt.Fprintf(w, ", tRC %.2f ns", rc.NS)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  memory clock period\t%.3f ns\t2000 / %s MT/s\n", a.ClockNS, model.Num(a.MTs))
	if t := a.Timings; t != nil {
		fmt.Fprintf(tw, "  CAS latency\t%.3f ns\tCL %d × %.3f ns\n", a.CASNS, t.CL, a.ClockNS)
		fmt.Fprintf(tw, "  random-row access at the DRAM\t%.3f ns\t(tRP %d + tRCD %d + CL %d) × %.3f ns\n",
			a.AccessNS, t.RP, t.RCD, t.CL, a.ClockNS)
		if a.CoreGHz > 0 {
			fmt.Fprintf(tw, "  the same in core cycles\t%.1f cycles\tat %s GHz\n", a.CoreCycles, model.Num(a.CoreGHz))
		}
	}
	if rc := a.RowCycle; rc != nil {
		var how string
		switch {
		case rc.RASNS > 0:
			how = fmt.Sprintf("tRAS %s ns + tRP %d × %.3f ns", model.Num(rc.RASNS), rc.RP, a.ClockNS)
		case rc.Clocks > 0:
			how = fmt.Sprintf("%s clocks × %.3f ns", model.Num(rc.Clocks), a.ClockNS)
		default:
			how = "as given"
		}
		fmt.Fprintf(tw, "  random access by row cycle (tRC)\t%.3f ns\t%s\n", rc.NS, how)
		if a.CoreGHz > 0 {
			fmt.Fprintf(tw, "  the same in core cycles\t%.1f cycles\tat %s GHz\n", a.RowCycleCoreCycles, model.Num(a.CoreGHz))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if a.RowCycle != nil {
		_, err := fmt.Fprintln(w, "Dependent random reads that open a new row in one bank (pointer chasing) go no\n"+
			"faster than one per tRC; tRP + tRCD + CL is the latency of one such read alone.")
		return err
	}
	return nil
}
