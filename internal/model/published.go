package model

import (
	"fmt"
)

// Range is a figure the model assumes where nothing was measured: a
// default inside a band, both from published measurements, with the
// source (see /work/shared/notes/published-figures.md and docs/model.md).
type Range struct {
	Value  float64 `json:"value"`
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
	Source string  `json:"source"`
}

// String is "1.1 (1 to 1.19)".
func (r Range) String() string {
	return fmt.Sprintf("%s (%s to %s)", Sig(r.Value, 4), Sig(r.Low, 4), Sig(r.High, 4))
}

// The published bands the model falls back on.
var (
	// PublishedSMTGain is the throughput of a core with two hardware
	// threads over one: measured OLTP gains run from none to +19%, so the
	// default is the middle of that band, never the 2× that overlapping
	// every memory wait would give.
	PublishedSMTGain = Range{Value: 1.10, Low: 1.00, High: 1.19,
		Source: "Linchi Shea's hyperthreading measurements of read-only OLTP (Order-Status + Stock-Level, SQL Server, " +
			"HT on against off in the BIOS): +5% on 4 × E7-4870 (40 cores), about +7.5% on 20 cores, +9% to +14% at " +
			"16 to 40 cores after a service pack, +19% on 2 × X5690 (12 cores, 100 users), no significant change for " +
			"a heavier query mix; the default is the middle of 0 to +19%"}
	// PublishedMultiSocketLocal is a multi-socket server's local latency
	// over a one-socket server's: every access also checks a remote
	// node's cache for coherency.
	PublishedMultiSocketLocal = Range{Value: 91.0 / 76, Low: 89.0 / 76, High: 93.0 / 76,
		Source: "Joe Chang, \"Memory Latency - Return to Single Processor\" (2018): one socket 76 ns, two sockets " +
			"89 ns local (Xeon SP 8180) or 93 ns (Xeon E5 v4), the difference a remote-node L3 check for coherency; " +
			"the default is their middle, 91/76"}
	// PublishedRemoteRatio is remote over local latency on a
	// multi-socket server.
	PublishedRemoteRatio = Range{Value: 139.0 / 89, Low: 1.43, High: 1.67,
		Source: "remote/local ratios Joe Chang cites: 1.43 (100/70 ns, Dell Xeon 5500), 1.56 (139/89 ns, Xeon SP " +
			"8180), 1.59 (148/93 ns, Xeon E5 v4), 1.67 (100/60 ns); the default is the Xeon SP's"}
	// PublishedStallShare is the share of an OLTP transaction's cycles
	// stalled on memory, for a fit of one latency point, where M cannot be
	// fitted.
	PublishedStallShare = Range{Value: 0.6, Low: 0.5, High: 0.7,
		Source: "OLTP spends about half (Ailamaki et al., VLDB 1999) to 70% (Sirin et al., VLDB Journal 2021) of " +
			"its cycles stalled; the default is the middle"}
)

// PublishedSockets is the largest socket count the published figures
// cover: predictions for more are flagged as beyond them.
const PublishedSockets = 4

// CyclesAtShare is the fit of one point of c cycles per transaction at
// latency x cycles when a share s of the cycles waits: M = s·c / x,
// A = (1 − s)·c.
func CyclesAtShare(c, x, s float64) (a, m float64) {
	return (1 - s) * c, s * c / x
}
