package tpcc

import (
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

// FirstSpec is c's sweep cut to its first stream count and placement,
// once and without a neighbour: the cell that --monitor and --curve
// measure.
func (c RunConfig) FirstSpec() sweep.Spec {
	spec := c.Spec()
	spec.Streams, spec.Placements, spec.Repeat, spec.Neighbour = c.Streams[:1], c.Placements[:1], 1, false
	return spec
}

// MonitorJob is c's --monitor run (monitor.Job) of the facilities fs on
// cell one, measured by w.
func (c RunConfig) MonitorJob(fs []monitor.Facility, one sweep.Cell, w *Sweep) monitor.Job[result.Cell] {
	return monitor.Job[result.Cell]{Facilities: fs, Kind: monitor.RunKind, One: one, Repeat: c.Repeat, Window: c.Duration,
		Load: c.MonitorLoad, Pacing: c.Pacing, Seed: c.Seed, Plan: c.Plan, Settings: w.ServerSettings,
		Inner: monitor.Inner[result.Cell]{Sweep: w, Session: w.Session, Kind: result.KindCell,
			Cell: func(c *result.Cell) *result.Cell { return c }}}
}
