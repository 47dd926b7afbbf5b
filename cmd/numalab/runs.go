package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

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
before is kept), "failed" (the error is kept) or "running" (still running,
or the process was killed).

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
	st, err := store.Open(*storePath)
	if err != nil {
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
		return writeRun(e.stdout, r)
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
	return writeRunList(e.stdout, runs)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func writeRunList(w io.Writer, runs []result.Run) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED (UTC)\tHOST\tKIND\tSTATUS\tHEADLINE")
	for _, r := range runs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Started.UTC().Format("2006-01-02 15:04:05"),
			r.Host, r.Kind, r.Status, r.Headline)
	}
	return tw.Flush()
}

func writeRun(w io.Writer, r *result.Run) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "run\t%d (%s)\n", r.ID, r.Kind)
	fmt.Fprintf(tw, "command\t%s\n", r.Command)
	fmt.Fprintf(tw, "numalab\t%s\n", r.Version)
	fmt.Fprintf(tw, "host\t%s\n", r.Host)
	fmt.Fprintf(tw, "started\t%s UTC\n", r.Started.UTC().Format("2006-01-02 15:04:05.000"))
	if !r.Finished.IsZero() {
		fmt.Fprintf(tw, "finished\t%s UTC (%.1f s)\n", r.Finished.UTC().Format("2006-01-02 15:04:05.000"),
			r.Finished.Sub(r.Started).Seconds())
	}
	fmt.Fprintf(tw, "status\t%s\n", r.Status)
	if r.Error != "" {
		fmt.Fprintf(tw, "error\t%s\n", r.Error)
	}
	if r.Headline != "" {
		fmt.Fprintf(tw, "headline\t%s\n", r.Headline)
	}
	if m := r.Machine; m != nil {
		fmt.Fprintf(tw, "machine\t%s; %d packages, %d nodes, %d cores, %d logical CPUs\n",
			m.CPUModel, len(m.Packages), len(m.Nodes), len(m.Cores), len(m.CPUs))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "config:\n  %s\n", compact(r.Config))
	fmt.Fprintf(w, "items (%d):\n", len(r.Results))
	for _, it := range r.Results {
		fmt.Fprintf(w, "  %d %s %s\n", it.Seq, it.Kind, compact(it.Body))
	}
	return nil
}

// compact prints stored JSON on one line.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
