package model

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestEvaluate(t *testing.T) {
	mc := Machine{LocalNS: 67, RemoteNS: 125, BufferNS: 15, BufferMinSockets: 4, Locality: -1, CoresPerSocket: 1}
	tab, err := Evaluate(Default(), mc, Grid{GHz: []float64{3}, SMT: []int{1, 2}, Sockets: []int{1, 2, 4}})
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 6 || len(tab.Scaling) != 6 {
		t.Fatalf("%d rows, %d scalings; want 6 and 6", len(tab.Rows), len(tab.Scaling))
	}
	r2 := tab.Rows[1] // 2 sockets, SMT 1
	// 96 ns, 288 cycles, C = 1.535e8, tps/core = 19.544, total = 2·19.544
	if r2.Sockets != 2 || !near(r2.LatencyNS, 96) || !near(r2.LatencyCycles, 288) || !near(r2.CyclesPerTxn, 1.535e8) ||
		!near(r2.TotalTPS, 2*3e9/1.535e8) {
		t.Errorf("2S row = %+v", r2)
	}
	// per core vs 1S = 1.1e8/1.535e8 = 0.7166; total = 2·0.7166 = 1.4332
	if !near(r2.PerCoreVs1S, 1.1e8/1.535e8) || !near(r2.TotalVs1S, 2.2e8/1.535e8) {
		t.Errorf("2S ratios = %v, %v", r2.PerCoreVs1S, r2.TotalVs1S)
	}
	if r2.Match1SNS == nil || !near(*r2.Match1SNS, 134.5/3) {
		t.Errorf("2S match = %v, want 44.83", r2.Match1SNS)
	}
	want := []struct {
		from, to     int
		total, perCo float64
	}{
		{1, 2, 2.2e8 / 1.535e8, 1.1e8 / 1.535e8},      // 1.433, 0.717
		{1, 4, 4.4e8 / 1.9775e8, 1.1e8 / 1.9775e8},    // 2.225, 0.556
		{2, 4, 3.07e8 / 1.9775e8, 1.535e8 / 1.9775e8}, // 1.552, 0.776
	}
	for i, w := range want {
		s := tab.Scaling[i]
		if s.From != w.from || s.To != w.to || !near(s.TotalRatio, w.total) || !near(s.PerCoreRatio, w.perCo) {
			t.Errorf("scaling %d = %+v, want %+v", i, s, w)
		}
	}
	// SMT 2, 1 socket: the published gain 1.1; total ratios relative to
	// SMT-2 one socket stay as with SMT 1.
	r := tab.Rows[3]
	if r.SMT != 2 || !near(r.SMTGain, 1.1) || !near(r.TPSPerCore, 1.1*3e9/1.1e8) ||
		!near(tab.Rows[4].TotalVs1S, r2.TotalVs1S) {
		t.Errorf("SMT2 rows = %+v / %+v", r, tab.Rows[4])
	}
}

func TestEvaluateScalingPairs(t *testing.T) {
	mc := Machine{LocalNS: 67, RemoteNS: 125, TwoHopNS: 190, Locality: -1, CoresPerSocket: 1}
	tab, err := Evaluate(Default(), mc, Grid{GHz: []float64{3}, SMT: []int{1}, Sockets: []int{1, 2, 4, 8}})
	if err != nil {
		t.Fatal(err)
	}
	// Each count to the next, and the first to every other.
	var got []string
	for _, s := range tab.Scaling {
		got = append(got, fmt.Sprintf("%d>%d", s.From, s.To))
	}
	if strings.Join(got, " ") != "1>2 1>4 1>8 2>4 4>8" {
		t.Errorf("scaling pairs %v", got)
	}
}

func TestEvaluateBadInput(t *testing.T) {
	mc := Machine{LocalNS: 67, RemoteNS: 125, Locality: -1, CoresPerSocket: 1}
	g := Grid{GHz: []float64{3}, SMT: []int{1}, Sockets: []int{1, 2}}
	for name, c := range map[string]struct {
		w  Workload
		mc Machine
		g  Grid
	}{
		"zero GHz":  {Default(), mc, Grid{GHz: []float64{0}, SMT: []int{1}, Sockets: []int{1}}},
		"SMT 0":     {Default(), mc, Grid{GHz: []float64{3}, SMT: []int{0}, Sockets: []int{1}}},
		"0 sockets": {Default(), mc, Grid{GHz: []float64{3}, SMT: []int{1}, Sockets: []int{0}}},
		"miss 2":    {Workload{1e7, 2}, mc, g},
		"0 cores":   {Default(), Machine{LocalNS: 67, RemoteNS: 125, Locality: -1}, g},
		"local -1":  {Default(), Machine{LocalNS: -1, RemoteNS: 125, Locality: -1, CoresPerSocket: 1}, g},
	} {
		if _, err := Evaluate(c.w, c.mc, c.g); !errors.Is(err, ErrInput) {
			t.Errorf("%s: err = %v, want ErrInput", name, err)
		}
	}
}
