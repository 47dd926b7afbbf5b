package main

import (
	"context"

	"github.com/numalab/numalab/internal/monitor"
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
