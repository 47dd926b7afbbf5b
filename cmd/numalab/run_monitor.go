package main

import (
	"context"
	"time"

	"github.com/numalab/numalab/internal/monitor"
)

// monitorFacilities are the facilities of a --monitor request, checked;
// on a user's server (dsn) the server is checked too, before anything is
// measured.
func monitorFacilities(ctx context.Context, r monitor.Request, dsn string, timeout time.Duration) ([]monitor.Facility, error) {
	fs, err := monitor.Check(r)
	if err != nil {
		return nil, err
	}
	if dsn != "" {
		if err := monitor.CheckServer(ctx, dsn, fs, timeout); err != nil {
			return nil, err
		}
	}
	return fs, nil
}

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
