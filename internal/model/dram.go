package model

import (
	"fmt"
	"strconv"
	"strings"
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
