package monitor

import (
	"bytes"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

func TestTwoLoadsAndPacer(t *testing.T) {
	fs := []Facility{{Name: "a"}, {Name: "b"}}
	cells, slots := TwoLoads(sweep.Cell{}, fs, 2)
	if len(cells) != 16 || len(slots) != 16 {
		t.Fatalf("%d cells, want 2 facilities × 2 sides × 2 repeats × 2 loads", len(cells))
	}
	for i := range 8 {
		s, p := slots[i], slots[i+8]
		if s.Paced || !p.Paced || s.Facility != p.Facility || s.On != p.On || s.Repeat != p.Repeat ||
			cells[i+8].Index != i+8 {
			t.Errorf("slot %d %+v and %d %+v", i, s, i+8, p)
		}
	}
	var before []*result.Cell
	for i := range 8 {
		before = append(before, &result.Cell{Index: i, TPS: float64(100 * (i + 1)), Total: result.TxStats{Count: 1}})
	}
	// Off cells at saturation: slots' On false among the first 8.
	var off []float64
	for i := range 8 {
		if !slots[i].On {
			off = append(off, before[i].TPS)
		}
	}
	capacity := Capacity(slots, before)
	if len(off) != 4 || capacity != (off[1]+off[2])/2 {
		t.Errorf("capacity %g from off cells %v", capacity, off)
	}
	pace := Pacer(slots, 0.5, sweep.Pacing{Arrivals: "uniform"}, 3)
	if p := pace(cells[0], nil); !p.Closed() {
		t.Errorf("saturated cell paced: %+v", p)
	}
	if p := pace(cells[8], before); p.Rate != capacity/2 || !p.Uniform || p.Seed != 3 {
		t.Errorf("paced cell: %+v, want %g/s uniform", p, capacity/2)
	}
}

func TestAnalyzePaced(t *testing.T) {
	mk := func(on, paced bool, cpu, p50, p99 float64) Cell {
		return Cell{Slot: Slot{Facility: "log_all", On: on, Paced: paced}, Cell: result.Cell{TPS: 500,
			Total: result.TxStats{Count: 100, P50US: p50, P99US: p99},
			Pace:  &result.Pace{Rate: 500},
			Usage: &result.Usage{CPUs: []result.CPUUsage{{BusyPct: cpu}, {BusyPct: cpu + 2}}}}}
	}
	var cells []Cell
	for i := range 5 {
		f := float64(i)
		cells = append(cells, mk(false, false, 99, 100, 200), mk(true, false, 99, 150, 300), // saturated: left out
			mk(false, true, 20+f, 100+f, 200+f), mk(true, true, 25+f, 110+f, 260+f))
	}
	a := AnalyzePaced(cells, 0.5)
	if len(a.Overheads) != 1 || a.Rate != 500 || a.Fraction != 0.5 {
		t.Fatalf("%+v", a)
	}
	o := a.Overheads[0]
	if o.CPUAdded.Estimate != 5 || o.P50Added.Estimate != 10 || o.P99Added.Estimate != 60 || !o.P99Added.HasCI ||
		o.CPUAdded.NA != 5 {
		t.Errorf("%+v", o)
	}
	var b bytes.Buffer
	WritePacedAnalysis(&b, a)
	if !strings.Contains(b.String(), "log_all") || !strings.Contains(b.String(), "+60.0 [") {
		t.Errorf("rendered:\n%s", b.String())
	}
	if an := Analyze(cells); an.Overheads[0].Off.N != 5 || an.Overheads[0].Off.Median != 500 {
		t.Errorf("saturated analysis mixes in paced cells: %+v", an.Overheads[0])
	}
}
