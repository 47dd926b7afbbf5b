package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
)

const storeHelp = `Usage:
  numalab store copy FROM TO

Copies every run of the store FROM that the store TO does not hold yet,
with its machine, configuration and items, into TO. Each store is an
SQLite file or a postgres:// URL (a PostgreSQL database, schema
numalab_results), so copy moves runs between a host's numalab.db and a
shared PostgreSQL store, either way. A run keeps its UID (runs show prints
it), its times and its status; TO gives it a number of its own. Copying
again adds nothing: runs already in TO (by UID) are left as they are. A
run still running in FROM is copied as it is now.

FROM must exist and is read, and migrated forward if an older numalab made
it; TO is created if missing. A store of a newer numalab, a file or schema
that is not a numalab store and a server that cannot be reached are
refused before anything is written. Passwords in URLs are never printed.

Examples:
  numalab store copy numalab.db postgres://numalab@results.example/lab
  numalab store copy postgres://numalab@results.example/lab fleet.db
`

func cmdStore(_ context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "copy" {
		fs := newFlags(e, "store", storeHelp)
		if done, err := parseFlags(e, fs, args); done {
			return err
		}
		return fmt.Errorf("store: want 'store copy FROM TO' (see 'numalab store --help')")
	}
	fs := newFlags(e, "store copy", storeHelp)
	if done, err := parseFlags(e, fs, args[1:]); done {
		return err
	}
	if fs.NArg() != 2 {
		return fmt.Errorf("store copy: want two stores, FROM and TO (see 'numalab store --help')")
	}
	from, to := fs.Arg(0), fs.Arg(1)
	if from == to {
		return fmt.Errorf("store copy: FROM and TO are both %s: nothing to copy", result.Redact(from))
	}
	ro, err := store.OpenReadOnly(from)
	if errors.Is(err, store.ErrNoStore) {
		return fmt.Errorf("store copy: no store at %s yet: nothing to copy", result.Redact(from))
	}
	if err != nil {
		return fmt.Errorf("store copy: %w", err)
	}
	ro.Close()
	src, err := store.Open(from) // an older store gets its UIDs
	if err != nil {
		return fmt.Errorf("store copy: %w", err)
	}
	defer src.Close()
	dst, err := store.Open(to)
	if err != nil {
		return fmt.Errorf("store copy: %w", err)
	}
	defer dst.Close()
	c, err := store.Copy(src, dst)
	fmt.Fprintf(e.stdout, "copied %d runs (%d items) from %s to %s; %d were there already\n",
		c.Runs, c.Items, src.Path(), dst.Path(), c.Present)
	if err != nil {
		return fmt.Errorf("store copy: %w", err)
	}
	return nil
}
