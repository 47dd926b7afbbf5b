package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
)

func cmdStore(_ context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "copy" {
		fs := cliflag.New(e.stderr, "store", helpText("store"))
		if done, err := cliflag.Parse(e.stdout, fs, args); done {
			return err
		}
		return fmt.Errorf("store: want 'store copy FROM TO' (see 'numalab store --help')")
	}
	fs := cliflag.New(e.stderr, "store copy", helpText("store"))
	if done, err := cliflag.Parse(e.stdout, fs, args[1:]); done {
		return err
	}
	if fs.NArg() != 2 {
		return fmt.Errorf("store copy: want two stores, FROM and TO (see 'numalab store --help')")
	}
	from, to := fs.Arg(0), fs.Arg(1)
	if err := errors.Join(store.CheckTarget(from), store.CheckTarget(to)); err != nil {
		return fmt.Errorf("store copy: %w", err)
	}
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
