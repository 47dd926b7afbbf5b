package transtats

import (
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

// FirstSpec is c's sweep cut to its first query, stream count and DOP,
// once: the cell that --monitor measures.
func (c RunConfig) FirstSpec() sweep.Spec {
	spec := c.Spec()
	spec.Streams, spec.DOPs, spec.Types, spec.Repeat = c.Streams[:1], c.DOP[:1], c.Queries[:1], 1
	return spec
}

// MonitorJob is c's --monitor run (monitor.Job) of the facilities fs on
// cell one, measured by w.
func (c RunConfig) MonitorJob(fs []monitor.Facility, one sweep.Cell, w *Sweep) monitor.Job[result.QueryCell] {
	return monitor.Job[result.QueryCell]{Facilities: fs, Kind: monitor.ReportRunKind, One: one,
		Repeat: c.Repeat, Window: c.Duration,
		Load: c.MonitorLoad, Pacing: c.Pacing, Seed: c.Seed, Plan: c.Plan, Settings: w.ServerSettings,
		Inner: monitor.Inner[result.QueryCell]{Sweep: w, Session: w.Session, Kind: result.KindQueryCell,
			Cell: func(q *result.QueryCell) *result.Cell { return q.Cell }}}
}
