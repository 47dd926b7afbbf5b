package model

import (
	"strings"
	"testing"
)

func TestImplausible(t *testing.T) {
	for _, c := range []struct {
		ns, ghz   []float64
		sockets   []int
		value, is string
	}{
		{[]float64{67, 125}, []float64{3}, []int{1, 2, 64}, "", ""},
		{[]float64{67, 0.5}, nil, nil, "0.5", "a plausible memory latency: want 1 to 10000 ns"},
		{[]float64{1e308}, nil, nil, "1e+308", "a plausible memory latency: want 1 to 10000 ns"},
		{nil, []float64{3, 40}, nil, "40", "a plausible clock: want 0.1 to 10 GHz"},
		{nil, nil, []int{1, 65}, "65", "a plausible socket count: want 1 to 64"},
		{[]float64{0.5}, []float64{40}, nil, "0.5", "a plausible memory latency: want 1 to 10000 ns"},
	} {
		v, why := Implausible(c.ns, c.ghz, c.sockets)
		if v != c.value || why != c.is {
			t.Errorf("Implausible(%v, %v, %v) = %q, %q; want %q, %q", c.ns, c.ghz, c.sockets, v, why, c.value, c.is)
		}
	}
}

// TestBounds: each physical bound refuses what no machine has, naming the
// flag, the value and the bound with its reason, and passes what one has.
func TestBounds(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string // "": no error
	}{
		{"gain 1.19 of 2", CheckSMTGain(1.19, []int{1, 2}), ""},
		{"gain 1 of 2", CheckSMTGain(1, []int{1, 2}), ""},
		{"gain 2 of 2", CheckSMTGain(2, []int{2, 4}),
			`-smt-gain: "2" is outside the published band, 1 to 1.19 (Linchi Shea's`},
		{"gain 1.2 of 2", CheckSMTGain(1.2, []int{2}), `-smt-gain: "1.2" is outside the published band, 1 to 1.19`},
		{"gain 0.9 of 2", CheckSMTGain(0.9, []int{2}), `-smt-gain: "0.9" is outside the published band, 1 to 1.19`},
		{"gain 100 of 2", CheckSMTGain(100, []int{1, 2}), `-smt-gain: "100" is above 2, the --smt thread count`},
		{"gain 3 of 2 and 4", CheckSMTGain(3, []int{4, 2}), `-smt-gain: "3" is above 2`},
		{"gain without SMT", CheckSMTGain(100, []int{1}), `-smt-gain: "100" is outside the published band`},
		{"two hops above one", Latencies{LocalNS: 67, RemoteNS: 125, TwoHopNS: 190}.Check(), ""},
		{"two hops below one", Latencies{LocalNS: 67, RemoteNS: 125, TwoHopNS: 100}.Check(),
			`-remote-ns: two hops' "100" is below one hop's 125 ns`},
		{"remote above local", Latencies{LocalNS: 67, RemoteNS: 125}.Check(), ""},
		{"remote below local", Latencies{LocalNS: 200, RemoteNS: 100}.Check(),
			`-remote-ns: "100" is below --local-ns (200 ns): a remote access crosses`},
		{"one socket below local", Latencies{LocalNS: 89, OneSocketNS: 76}.Check(), ""},
		{"one socket above local", Latencies{LocalNS: 67, OneSocketNS: 90}.Check(),
			`-one-socket-ns: "90" is above --local-ns (67 ns)`},
		{"local only", Latencies{LocalNS: 67}.Check(), ""},
	} {
		got := ""
		if c.err != nil {
			got = c.err.Error()
		}
		if (c.want == "") != (got == "") || !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
