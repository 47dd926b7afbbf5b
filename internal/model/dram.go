package model

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
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
		return Timings{}, fmt.Errorf("timings %q: want CL-tRCD-tRP in clock cycles, e.g. 19-19-19: %w", s, ErrInput)
	}
	var v [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n <= 0 {
			return Timings{}, fmt.Errorf("timings %q: %q is not a positive cycle count (want CL-tRCD-tRP, e.g. 19-19-19): %w", s, p, ErrInput)
		}
		v[i] = n
	}
	return Timings{CL: v[0], RCD: v[1], RP: v[2]}, nil
}

// DRAMClockNS is the memory clock period of DDR memory at mts MT/s: the
// clock runs at half the transfer rate, so the period is 2000/R ns.
func DRAMClockNS(mts float64) float64 {
	return 2000 / mts
}

// DRAMAccessNS is the random-row access time at the DRAM, in ns: precharge
// the open row, activate the new one, then read:
// (tRP + tRCD + CL) · 2000/R.
func DRAMAccessNS(mts float64, t Timings) float64 {
	return float64(t.RP+t.RCD+t.CL) * DRAMClockNS(mts)
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
		return 0, 0, fmt.Errorf("timing %q: want a positive time with its unit, nanoseconds or memory clocks, e.g. 45.75ns or 8clk: %w", s, ErrInput)
	}
	if unit == "ns" {
		return n, 0, nil
	}
	return n * DRAMClockNS(mts), n, nil
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
	return RowCycle{NS: rasNS + float64(t.RP)*DRAMClockNS(mts), RASNS: rasNS, RP: t.RP}
}

// DRAMAccess is the timing arithmetic of one DDR module, and the access in
// core cycles when a core clock is given. Timings or RowCycle may be
// absent (a module is described by either or both).
type DRAMAccess struct {
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

// DRAM is the timing arithmetic of a module at mts MT/s with timings t
// and row cycle rc (either nil: not given); ghz (0: none) expresses the
// accesses in core cycles too.
func DRAM(mts float64, t *Timings, rc *RowCycle, ghz float64) DRAMAccess {
	a := DRAMAccess{MTs: mts, Timings: t, ClockNS: DRAMClockNS(mts), RowCycle: rc, CoreGHz: ghz}
	if t != nil {
		a.CASNS = float64(t.CL) * a.ClockNS
		a.AccessNS = DRAMAccessNS(mts, *t)
		a.CoreCycles = a.AccessNS * ghz
	}
	if rc != nil {
		a.RowCycleCoreCycles = rc.NS * ghz
	}
	return a
}

// WriteDRAM prints a module's timing arithmetic, each figure with how it
// is computed.
func WriteDRAM(w io.Writer, a DRAMAccess) error {
	fmt.Fprintf(w, "DDR at %s MT/s", Num(a.MTs))
	if t := a.Timings; t != nil {
		fmt.Fprintf(w, ", CL-tRCD-tRP %d-%d-%d", t.CL, t.RCD, t.RP)
	}
	if rc := a.RowCycle; rc != nil {
		fmt.Fprintf(w, ", tRC %.2f ns", rc.NS)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  memory clock period\t%.3f ns\t2000 / %s MT/s\n", a.ClockNS, Num(a.MTs))
	if t := a.Timings; t != nil {
		fmt.Fprintf(tw, "  CAS latency\t%.3f ns\tCL %d × %.3f ns\n", a.CASNS, t.CL, a.ClockNS)
		fmt.Fprintf(tw, "  random-row access at the DRAM\t%.3f ns\t(tRP %d + tRCD %d + CL %d) × %.3f ns\n", a.AccessNS, t.RP, t.RCD, t.CL, a.ClockNS)
		if a.CoreGHz > 0 {
			fmt.Fprintf(tw, "  the same in core cycles\t%.1f cycles\tat %s GHz\n", a.CoreCycles, Num(a.CoreGHz))
		}
	}
	if rc := a.RowCycle; rc != nil {
		var how string
		switch {
		case rc.RASNS > 0:
			how = fmt.Sprintf("tRAS %s ns + tRP %d × %.3f ns", Num(rc.RASNS), rc.RP, a.ClockNS)
		case rc.Clocks > 0:
			how = fmt.Sprintf("%s clocks × %.3f ns", Num(rc.Clocks), a.ClockNS)
		default:
			how = "as given"
		}
		fmt.Fprintf(tw, "  random access by row cycle (tRC)\t%.3f ns\t%s\n", rc.NS, how)
		if a.CoreGHz > 0 {
			fmt.Fprintf(tw, "  the same in core cycles\t%.1f cycles\tat %s GHz\n", a.RowCycleCoreCycles, Num(a.CoreGHz))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if a.RowCycle != nil {
		_, err := fmt.Fprintln(w, "Dependent random reads that open a new row in one bank (pointer chasing) go no\nfaster than one per tRC; tRP + tRCD + CL is the latency of one such read alone.")
		return err
	}
	return nil
}

// TierBreakEven is the largest fraction x of accesses that may miss a fast
// memory tier (latency fastNS) and go to a slow tier (slowNS) while the pair
// still beats conventional memory (dramNS): x < (D − S)/(I − S). A result
// ≤ 0 means the fast tier is no faster than DRAM (two tiers never win); ≥ 1
// means the slow tier is no slower than DRAM (they always win).
func TierBreakEven(fastNS, slowNS, dramNS float64) (float64, error) {
	for _, v := range []struct {
		name string
		ns   float64
	}{{"fast-tier", fastNS}, {"slow-tier", slowNS}, {"DRAM", dramNS}} {
		if !(v.ns > 0) {
			return 0, fmt.Errorf("%s latency %v ns: want a positive latency: %w", v.name, v.ns, ErrInput)
		}
	}
	if !(slowNS > fastNS) {
		return 0, fmt.Errorf("slow-tier latency %v ns is not above the fast tier's %v ns: %w", slowNS, fastNS, ErrInput)
	}
	return (dramNS - fastNS) / (slowNS - fastNS), nil
}

// TierLatency is the average latency when a fraction x of accesses miss
// the fast tier: (1 − x)·S + x·I.
func TierLatency(fastNS, slowNS, x float64) float64 {
	return (1-x)*fastNS + x*slowNS
}

// TierLevel is the average latency of two tiers at one miss fraction.
type TierLevel struct {
	Miss      float64 `json:"miss_fraction"`
	LatencyNS float64 `json:"latency_ns"`
	VsDRAM    float64 `json:"vs_dram"`
}

// Tiers is a fast tier in front of a slow one against conventional DRAM.
type Tiers struct {
	FastNS    float64     `json:"fast_ns"`
	SlowNS    float64     `json:"slow_ns"`
	DRAMNS    float64     `json:"dram_ns"`
	BreakEven float64     `json:"break_even_miss_fraction"` // TierBreakEven
	Levels    []TierLevel `json:"levels"`
}

// TwoTiers computes the break-even and the average latency at miss
// fractions from 1% to 50%.
func TwoTiers(fastNS, slowNS, dramNS float64) (Tiers, error) {
	x, err := TierBreakEven(fastNS, slowNS, dramNS)
	if err != nil {
		return Tiers{}, err
	}
	t := Tiers{FastNS: fastNS, SlowNS: slowNS, DRAMNS: dramNS, BreakEven: x}
	for _, m := range []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5} {
		l := TierLatency(fastNS, slowNS, m)
		t.Levels = append(t.Levels, TierLevel{m, l, l / dramNS})
	}
	return t, nil
}
