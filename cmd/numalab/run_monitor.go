package main

import (
	"context"
	"time"

	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/sweep"
)

// runMonitor runs j (monitor.Job), stored with the command line argv and
// config: what will be set printed first (on a user's server, dsn), each
// cell's row as it is stored, then the cost per facility.
func runMonitor[V any](ctx context.Context, e *env, j monitor.Job[V], dsn bool, argv []string, config any, prog *rows[monitor.Cell], storePath string, asJSON bool) error {
	for _, n := range monitor.Changes(j.Facilities, dsn) {
		prog.Note("--monitor: " + n)
	}
	rec, err := startRun(ctx, e.withArgs(argv), storePath, j.Kind, config)
	if err != nil {
		return err
	}
	out, err := j.Run(ctx, rec, prog, prog.table)
	return finishRun(e, rec, err, monitor.Headline(out.Analysis), asJSON, out)
}

// monitorFirst runs --monitor on a workload's first cell: the request
// checked against the server dsn names (monitor.CheckRequest), the cell
// resolved from first, then runMonitor of the job that job makes of the
// facilities and that cell.
func monitorFirst[V any](ctx context.Context, e *env, req monitor.Request, dsn string, timeout time.Duration, spread bool, first sweep.Spec,
	job func([]monitor.Facility, sweep.Cell) monitor.Job[V], argv []string, config any, storePath string, asJSON bool) error {
	fs, err := monitor.CheckRequest(ctx, req, dsn, timeout)
	if err != nil {
		return err
	}
	_, one, prog, err := startSweep(e, sweepOut{asJSON: asJSON, spread: spread, machine: true}, monitor.WriteRow, first)
	if err != nil {
		return err
	}
	defer prog.Done()
	return runMonitor(ctx, e, job(fs, one[0]), dsn != "", argv, config, prog, storePath, asJSON)
}
