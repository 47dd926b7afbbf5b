package null

import (
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

// MonitorJob is c's --monitor run (monitor.Job) of the facilities fs on
// cell one, measured by w (whose every cell runs one's layout).
func (c RunConfig) MonitorJob(fs []monitor.Facility, one sweep.Cell, w *Sweep) monitor.Job[Cell] {
	return monitor.Job[Cell]{Facilities: fs, Kind: monitor.NullRunKind, One: one, Repeat: c.Repeat, Window: c.Duration,
		Load: c.MonitorLoad, Pacing: c.Pacing, Seed: 1, Plan: c.Plan, Settings: w.ServerSettings,
		Inner: monitor.Inner[Cell]{Sweep: w, Session: w.Session, Kind: KindCell, Cell: func(c *Cell) *result.Cell { return &c.Cell }}}
}
