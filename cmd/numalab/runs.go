package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
)

const runsHelp = `Usage:
  numalab runs [--store FILE] [--json]
  numalab runs show [--store FILE] [--json] ID

Lists the runs kept in the results store (id, start time in UTC, host, kind,
status, headline figure), or shows one run: the command line, its full
configuration, numalab's version, the machine it ran on and every item it
measured, in order.

A run's status is "complete", "interrupted" (Ctrl-C: what was measured
before is kept), "failed" (the error is kept), "running" (its process is
still running, or ran on another host) or "abandoned" (its process was
killed or crashed: what it stored before is kept; see it with runs show).

Examples:
  numalab runs
  numalab runs --json | jq '.[].headline'
  numalab runs show 3
  numalab runs show --json 3 > run3.json
`

func cmdRuns(_ context.Context, e *env, args []string) error {
	show := len(args) > 0 && args[0] == "show"
	if show {
		args = args[1:]
	}
	fs := newFlags(e, "runs", runsHelp)
	storePath := storeFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if done, err := parseFlags(e, fs, args); done {
		return err
	}
	var id int64
	if show {
		if fs.NArg() != 1 {
			return fmt.Errorf("runs show: want one run ID (try 'numalab runs' to list them)")
		}
		var err error
		if id, err = strconv.ParseInt(fs.Arg(0), 10, 64); err != nil || id <= 0 {
			return fmt.Errorf("runs show: %q is not a run ID (a positive number; try 'numalab runs')", fs.Arg(0))
		}
	} else if err := noArgs(fs); err != nil {
		return err
	}
	st, err := store.OpenReadOnly(*storePath)
	switch {
	case errors.Is(err, store.ErrNoStore) && !show:
		// Nothing stored yet: say so, and create nothing.
		if *asJSON {
			return writeJSON(e.stdout, []result.Run{})
		}
		fmt.Fprintf(e.stdout, "no runs: there is no store at %s yet (try 'numalab probe mem' or 'numalab eval')\n", *storePath)
		return nil
	case errors.Is(err, store.ErrNoStore):
		return fmt.Errorf("runs show: run %d: no store at %s yet (try 'numalab runs --store FILE')", id, *storePath)
	case err != nil:
		return err
	}
	defer st.Close()
	if show {
		r, err := st.Get(id)
		if err != nil {
			return err
		}
		result.RedactRun(r) // a store from an older numalab may hold a password
		if *asJSON {
			return writeJSON(e.stdout, r)
		}
		return report.WriteRun(e.stdout, r)
	}
	runs, err := st.List()
	if err != nil {
		return err
	}
	for i := range runs {
		result.RedactRun(&runs[i])
	}
	if *asJSON {
		if runs == nil {
			runs = []result.Run{}
		}
		return writeJSON(e.stdout, runs)
	}
	if len(runs) == 0 {
		fmt.Fprintf(e.stdout, "no runs in %s yet (try 'numalab probe mem' or 'numalab eval')\n", *storePath)
		return nil
	}
	return report.WriteRuns(e.stdout, runs)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
