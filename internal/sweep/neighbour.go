package sweep

import (
	"context"
	"fmt"
	"slices"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/topo"
)

// neighbourChaseBytes is the working set of the chain that measures the
// latency a bandwidth neighbour imposes: far beyond any last-level cache.
const neighbourChaseBytes = 256 << 20

// neighbourCells are spec's neighbour cells of repeat r (see
// Spec.Neighbour): one stream on the first CPU of placement p, a
// bandwidth neighbour on every other CPU of t; none when t has one CPU.
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
	c.Cores = CoresUsed(t, p.Place.Streams, true, 1)
	c.Spread, c.Neighbour = true, others
	return []Cell{c}
}

// neighbour is a running bandwidth neighbour and what it imposed.
type neighbour struct {
	n   *memlat.Neighbour
	rec memlat.NeighbourCell
}

// startNeighbour measures a DRAM chain on cell c's first CPU alone, starts
// c's bandwidth neighbour and measures the chain again; the neighbour runs
// on until finish. nil, nil for a cell without a neighbour.
func startNeighbour(ctx context.Context, c Cell) (*neighbour, error) {
	if len(c.Neighbour) == 0 {
		return nil, nil
	}
	t, err := topo.FromSysfs("/")
	if err != nil {
		return nil, err
	}
	ch, err := memlat.NewDRAMChase(neighbourChaseBytes)
	if err != nil {
		return nil, fmt.Errorf("cell %d: %w", c.Index, err)
	}
	defer ch.Free()
	nb := &neighbour{rec: memlat.NeighbourCell{Neighbour: c.Neighbour, ChaseCPU: c.Place.Streams[0], ChaseBytes: ch.Bytes}}
	if nb.rec.AloneNS, err = ch.Measure(ctx, nb.rec.ChaseCPU); err != nil {
		return nil, fmt.Errorf("cell %d: measuring DRAM latency alone: %w", c.Index, err)
	}
	if nb.n, err = memlat.StartNeighbour(t, c.Neighbour); err != nil {
		return nil, fmt.Errorf("cell %d: %w", c.Index, err)
	}
	if nb.rec.LoadedNS, err = ch.Measure(ctx, nb.rec.ChaseCPU); err != nil {
		nb.n.Stop()
		return nil, fmt.Errorf("cell %d: measuring DRAM latency with the neighbour: %w", c.Index, err)
	}
	return nb, nil
}

// finish stops the neighbour and stores the cell as a
// memlat.NeighbourCell instead of the workload's own entries, so that
// nothing that reads a run's cells mistakes it for an unloaded one.
func (nb *neighbour) finish(m *result.Cell, o []result.Entry) ([]result.Entry, error) {
	if nb == nil {
		return o, nil
	}
	var err error
	nb.rec.GBps, err = nb.n.Stop()
	if m == nil || len(o) == 0 || err != nil {
		return nil, err
	}
	nb.rec.Cell = *m
	o = slices.DeleteFunc(o, func(e result.Entry) bool { return e.Kind() == string(result.KindCell) })
	return append(o, memlat.KindNeighbourCell.Of(nb.rec)), nil
}
