package sweep

import (
	"context"
	"fmt"
	"slices"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/topo"
)

// neighbourChaseBytes is the working set of the chain that measures the
// latency a bandwidth neighbour imposes: far beyond any last-level cache.
const neighbourChaseBytes = 256 << 20

// neighbourCells are spec's neighbour cells of repeat r (see
// Spec.Neighbour): one stream on the first CPU of placement p with a
// bandwidth neighbour on every other CPU of t, and beside it the same
// stream with a control neighbour on those CPUs; none when t has one CPU.
// The two alternate by repeat (the bandwidth neighbour first in even
// repeats, the control first in odd ones), so that a drift over the run
// does not favour either side of the pair.
func neighbourCells(t *result.Topology, p Cell, r, index int) []Cell {
	if len(p.Place.Streams) == 0 {
		return nil
	}
	cpu := p.Place.Streams[0]
	var others []int
	for _, c := range t.CPUs {
		if c.ID != cpu {
			others = append(others, c.ID)
		}
	}
	if len(others) == 0 {
		return nil
	}
	c := p
	c.Point.Index, c.Point.Streams, c.Point.Repeat = index, 1, r
	c.Cores = t.CoresUsed(p.Place.Streams, true, 1)
	c.Spread, c.Neighbour = true, others
	ctl := c
	ctl.Control = true
	if r%2 == 1 {
		c, ctl = ctl, c
	}
	c.Index, ctl.Index = index, index+1
	return []Cell{c, ctl}
}

// neighbour is a running bandwidth or control neighbour and what it
// imposed.
type neighbour struct {
	stop func() (gbps float64, err error)
	rec  memlat.NeighbourCell
}

// startNeighbour measures a DRAM chain on cell c's first CPU alone, starts
// c's neighbour (a bandwidth neighbour, or for a control cell a
// place.Hog: one add loop per CPU, in registers, its stop flag the one
// load, so it keeps those CPUs busy without memory traffic) and measures
// the chain again; the neighbour runs on until finish. nil, nil for a
// cell without a neighbour.
func startNeighbour(ctx context.Context, c Cell) (*neighbour, error) {
	if len(c.Neighbour) == 0 {
		return nil, nil
	}
	ch, err := memlat.NewDRAMChase(neighbourChaseBytes)
	if err != nil {
		return nil, fmt.Errorf("cell %d: %w", c.Index, err)
	}
	defer ch.Free()
	nb := &neighbour{rec: memlat.NeighbourCell{Neighbour: c.Neighbour, Control: c.Control, ChaseCPU: c.Place.Streams[0],
		ChaseBytes: ch.Bytes}}
	if nb.rec.AloneNS, err = ch.Measure(ctx, nb.rec.ChaseCPU); err != nil {
		return nil, fmt.Errorf("cell %d: measuring DRAM latency alone: %w", c.Index, err)
	}
	if c.Control {
		h, err := place.StartHog(c.Neighbour)
		if err != nil {
			return nil, fmt.Errorf("cell %d: starting the control neighbour: %w", c.Index, err)
		}
		nb.stop = func() (float64, error) { h.Stop(); return 0, nil }
	} else {
		t, err := topo.FromSysfs("/")
		if err != nil {
			return nil, err
		}
		n, err := memlat.StartNeighbour(t, c.Neighbour)
		if err != nil {
			return nil, fmt.Errorf("cell %d: %w", c.Index, err)
		}
		nb.stop = n.Stop
	}
	if nb.rec.LoadedNS, err = ch.Measure(ctx, nb.rec.ChaseCPU); err != nil {
		_, _ = nb.stop()
		return nil, fmt.Errorf("cell %d: measuring DRAM latency with the %s: %w", c.Index, c.neighbourWord(), err)
	}
	return nb, nil
}

// neighbourWord names the cell's neighbour.
func (c Cell) neighbourWord() string {
	if c.Control {
		return "control neighbour"
	}
	return "bandwidth neighbour"
}

// finish stops the neighbour and stores the cell as a
// memlat.NeighbourCell instead of the workload's own entries, so that
// nothing that reads a run's cells mistakes it for an unloaded one.
func (nb *neighbour) finish(m *result.Cell, o []result.Entry) ([]result.Entry, error) {
	if nb == nil {
		return o, nil
	}
	var err error
	nb.rec.GBps, err = nb.stop()
	if m == nil || len(o) == 0 || err != nil {
		return nil, err
	}
	nb.rec.Cell = *m
	o = slices.DeleteFunc(o, func(e result.Entry) bool { return e.Kind() == string(result.KindCell) })
	return append(o, memlat.KindNeighbourCell.Of(nb.rec)), nil
}
