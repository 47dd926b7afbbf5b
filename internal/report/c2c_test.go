package report

import (
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/memlat"
)

// TestC2CUnsteady: a pair the probe judged unsteady shows why in the
// report's text and HTML, and no round trip; a steady pair shows its.
func TestC2CUnsteady(t *testing.T) {
	why := "the host (KVM) moved or shared the vCPUs: windows 101-900 ns, the median 4.6x the lowest (above 1.5x); " +
		"no cache-to-cache latency measured"
	m := &Memory{Run: 1, GHz: 3, C2C: &memlat.C2C{GHz: 3, Hypervisor: "KVM", Pairs: []memlat.C2CPair{
		{Class: memlat.PairSMT, CPUs: [2]int{0, 16}, BestNS: 39.2, Cycles: 118, OneWayNS: 19.6},
		{Class: memlat.PairSameLLC, CPUs: [2]int{0, 1}, BestNS: 101, Cycles: 303, OneWayNS: 50.5, Unsteady: why},
	}}}
	var b strings.Builder
	textMemory(&b, m)
	if s := b.String(); !strings.Contains(s, "SMT siblings (CPUs 0,16) 39.2 ns") ||
		!strings.Contains(s, "same LLC (CPUs 0,1) none: "+why) || strings.Contains(s, "101.0 ns") {
		t.Errorf("text: want the SMT pair's round trip and the same-LLC pair's verdict without its figure:\n%s", s)
	}
	s := memorySection(&Report{Memory: m})
	html := strings.Join(s.Notes, "\n")
	if !strings.Contains(html, "Cache-to-cache, same LLC (CPUs 0-1): "+why) {
		t.Errorf("HTML notes lack the verdict: %q", s.Notes)
	}
	for _, tb := range s.Tables {
		for _, row := range tb.Rows {
			if row[0] == memlat.PairSameLLC && row[2] != "–" {
				t.Errorf("HTML row %q shows a round trip for an unsteady pair", row)
			}
		}
	}
}
