package null

import (
	"fmt"
	"slices"

	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

// MonitorJob is c's --monitor run (monitor.Job) of the facilities fs on
// cell one, measured by w (whose every cell runs one's layout).
func (c RunConfig) MonitorJob(fs []monitor.Facility, one sweep.Cell, w *Sweep) monitor.Job[Cell] {
	return monitor.Job[Cell]{Facilities: fs, Kind: monitor.NullRunKind, One: one, Repeat: c.Repeat, Window: c.Duration,
		Load: c.MonitorLoad, Pacing: c.Pacing, Seed: c.Seed, Plan: c.Plan, Settings: w.ServerSettings,
		Inner: monitor.Inner[Cell]{Sweep: w, Session: w.Session, Kind: KindCell,
			Cell: func(c *Cell) *result.Cell { return &c.Cell }}}
}

// MonitorSweep is the sweep of c's --monitor run of nfs facilities: every
// cell of its plan (off and on, at two loads with --monitor-load) runs the
// first cell's layout, its first transport, pairing this machine offers
// and stream count, which note says.
func (c RunConfig) MonitorSweep(nfs int, layout []Layout, matrix []Pairing) (w *Sweep, note string) {
	one := slices.Repeat(layout[:1], nfs*c.Repeat*4)
	w = NewSweep(c, one, matrix)
	p := one[0].Pairing
	return w, fmt.Sprintf("--monitor: every cell runs %s over %s, %s: client on cpu %d, backend on cpu %d", w.Types()[0],
		one[0].Transport, p.Name, p.Client, p.Backend)
}
