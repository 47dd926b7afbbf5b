package sqlscript

import (
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

// FirstSpec is c's sweep cut to its first stream count, DOP and
// placement, once: the cell that --monitor and --curve measure.
func (c RunConfig) FirstSpec() sweep.Spec {
	spec := c.Spec()
	spec.Streams, spec.DOPs, spec.Placements, spec.Repeat = c.Streams[:1], c.DOPs[:1], c.Placements[:1], 1
	return spec
}

// MonitorJob is c's --monitor run (monitor.Job) of the facilities fs on
// cell one, measured by w. Its cells are stored as monitor's, each
// with its per-script figures after it.
func (c RunConfig) MonitorJob(fs []monitor.Facility, one sweep.Cell, w *Sweep) monitor.Job[Cell] {
	return monitor.Job[Cell]{Facilities: fs, Kind: monitor.SQLRunKind, One: one, Repeat: c.Repeat, Window: c.Duration,
		Load: c.MonitorLoad, Pacing: c.Pacing, Seed: c.Seed, Plan: c.Plan, Settings: w.ServerSettings,
		Inner: monitor.Inner[Cell]{Sweep: w, Session: w.Session, Kind: result.Kind[Cell](result.KindCell),
			Cell: func(c *Cell) *result.Cell { return &c.Cell }}}
}
