package dram

import (
	"strings"
	"testing"
)

// TestInputAccess: 'model dram”s inputs give Compute's arithmetic, and
// every bad combination is refused together, each naming its flag.
func TestInputAccess(t *testing.T) {
	a, err := Input{MTS: 2666, MTSGiven: true, Timings: "19-19-19", TRAS: "32ns", GHz: 3}.Access()
	// (19 + 19 + 19)·2000/2666 = 42.76 ns; tRC = 32 + 19·2000/2666 = 46.25 ns.
	if err != nil || a.Timings == nil || a.RowCycle == nil || !(a.AccessNS > 42.75 && a.AccessNS < 42.77) ||
		!(a.RowCycle.NS > 46.25 && a.RowCycle.NS < 46.26) || a.CoreGHz != 3 {
		t.Fatalf("DDR4-2666 19-19-19, tRAS 32 ns: %+v, %v", a, err)
	}
	for _, c := range []struct {
		in   Input
		want []string
	}{
		{Input{MTS: 2666, MTSGiven: true}, []string{`-timings: "" is needed unless --trc is given`}},
		{Input{MTS: 2666, MTSGiven: true, Timings: "19-19-19", TRC: "45ns", TRAS: "32ns"},
			[]string{`-tras: "32ns" gives tRC a second time`}},
		{Input{MTS: 2666, MTSGiven: true, TRAS: "32ns", TRC: "45ns"}, []string{`-tras: "32ns" gives tRC a second time`}},
		{Input{MTS: 2666, MTSGiven: true, TRC: "4x"}, []string{`-trc: "4x" is not a time with its unit`}},
		{Input{MTS: 1e6, MTSGiven: true, Timings: "19-19"},
			[]string{`-mts: "1e+06" is not a DDR transfer rate`, `-timings: "19-19" is not CL-tRCD-tRP`}},
		{Input{MTS: 2666, MTSGiven: true, Timings: "999-19-19"}, []string{`-timings: "999-19-19" gives CL 999 clocks`}},
		{Input{MTS: 2666, MTSGiven: true, Timings: "19-19-19", TRAS: "32"},
			[]string{`-tras: "32" is not a time with its unit`}},
	} {
		_, err := c.in.Access()
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %v, want %q", c.in, err, w)
			}
		}
	}
}
