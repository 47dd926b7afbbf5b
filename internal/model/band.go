package model

import (
	"fmt"
)

// Band is the fit's uncertainty as workloads at its ends.
type Band struct {
	Text     string
	Variants []Workload
}

// StallBand is the band of the published stall share: A and M at its ends,
// through the same cycles per transaction at the anchor (latency ns,
// clock) as w.
func StallBand(w Workload, anchorNS, ghz float64) Band {
	c := CyclesPerTxn(w, anchorNS, ghz)
	x := LatencyCycles(anchorNS, ghz)
	b := PublishedStallShare
	out := Band{Text: fmt.Sprintf("a stall share from %s to %s at %s ns and %s GHz (%s), A and M refitted each "+
		"time to the same %s cycles per transaction there: two latency points would narrow it",
		Percent(b.Low), Percent(b.High), Fixed(anchorNS, 1), Fixed(ghz, 2), b.Source, Thousands(c))}
	for _, s := range []float64{b.Low, b.High} {
		out.Variants = append(out.Variants, FromCycles(CyclesAtShare(c, x, s)))
	}
	return out
}
