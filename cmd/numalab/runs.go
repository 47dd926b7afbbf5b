package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
)

func cmdRuns(_ context.Context, e *env, args []string) error {
	show := len(args) > 0 && args[0] == "show"
	if show {
		args = args[1:]
	}
	fs := cliflag.New(e.stderr, "runs", helpText("runs"))
	storePath := cliflag.Store(fs)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	host := fs.String("host", "", "only runs of this host (as runs lists it)")
	kind := fs.String("kind", "", "only runs of this kind: "+result.RunProbeMem+", "+result.RunProbeIO+", "+result.RunOLTP+" or "+result.RunQueries)
	since := fs.String("since", "", "only runs started at or after this `time` (a date, a UTC time or a duration ago: 24h)")
	until := fs.String("until", "", "only runs started before this `time`")
	if done, err := cliflag.Parse(e.stdout, fs, args); done {
		return err
	}
	where := result.Redact(*storePath)
	var filter store.Filter
	if show {
		if fs.NArg() != 1 {
			return fmt.Errorf("runs show: want one run ID (try 'numalab runs' to list them)")
		}
		if *host != "" || *kind != "" || *since != "" || *until != "" {
			return fmt.Errorf("runs show: --host, --kind, --since and --until filter the list, not one run (try 'numalab runs --help')")
		}
	} else {
		if err := cliflag.NoArgs(fs); err != nil {
			return err
		}
		var err error
		if filter, err = store.ParseFilter(*host, *kind, *since, *until, time.Now()); err != nil {
			return err
		}
	}
	st, err := store.OpenReadOnly(*storePath)
	switch {
	case errors.Is(err, store.ErrNoStore) && !show:
		// Nothing stored yet: say so, and create nothing.
		if *asJSON {
			return writeJSON(e.stdout, []result.Run{})
		}
		fmt.Fprintf(e.stdout, "no runs: there is no store at %s yet (try 'numalab probe mem' or 'numalab eval')\n", where)
		return nil
	case errors.Is(err, store.ErrNoStore):
		return fmt.Errorf("runs show: run %s: no store at %s yet (try 'numalab runs --store FILE')", fs.Arg(0), where)
	case err != nil:
		return err
	}
	defer st.Close()
	if show {
		return showRun(e, st, fs.Arg(0), *asJSON)
	}
	runs, err := st.Find(filter)
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
	if len(runs) == 0 && filter != (store.Filter{}) {
		fmt.Fprintf(e.stdout, "no runs in %s match (try 'numalab runs' without --host, --kind, --since, --until)\n", where)
		return nil
	}
	if len(runs) == 0 {
		fmt.Fprintf(e.stdout, "no runs in %s yet (try 'numalab probe mem' or 'numalab eval')\n", where)
		return nil
	}
	return report.WriteRuns(e.stdout, runs)
}

// showRun prints the run the user named by ID or UID, with its UID.
func showRun(e *env, st *store.Store, text string, asJSON bool) error {
	id, err := st.Resolve(text)
	if err != nil {
		return fmt.Errorf("runs show: %w", err)
	}
	r, err := st.Get(id)
	if err != nil {
		return err
	}
	uid, err := st.UID(id)
	if err != nil {
		return err
	}
	result.RedactRun(r) // a store from an older numalab may hold a password
	if asJSON {
		return writeJSON(e.stdout, struct {
			*result.Run
			UID string `json:"uid,omitempty"`
		}{r, uid})
	}
	if err := report.WriteRun(e.stdout, r); err != nil {
		return err
	}
	if uid != "" {
		fmt.Fprintf(e.stdout, "uid: %s (its name in every store it is copied to)\n", uid)
	}
	return nil
}

// writeAs prints v as indented JSON or, without asJSON, with text.
func writeAs[T any](w io.Writer, asJSON bool, v T, text func(io.Writer, T) error) error {
	if asJSON {
		return writeJSON(w, v)
	}
	return text(w, v)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
