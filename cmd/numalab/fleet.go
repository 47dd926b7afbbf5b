package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/fleet"
	"github.com/numalab/numalab/internal/outfile"
	"github.com/numalab/numalab/internal/store"
)

// cmdFleet compares the runs of several stores, one a machine.
func cmdFleet(_ context.Context, e *env, args []string) error {
	fs := cliflag.New(e.stderr, "fleet", helpText("fleet"))
	given := cliflag.Stores(fs, "results `store` to read (repeat for several; default numalab.db)")
	asJSON := fs.Bool("json", false, "print the comparison as JSON")
	html := fs.String("html", "", "write the comparison as a self-contained HTML page to `file`")
	force := fs.Bool("force", false, "let --html replace a file numalab did not write (never a database or a store)")
	if done, err := cliflag.Parse(e.stdout, fs, args); done {
		return err
	}
	paths := *given
	if len(paths) == 0 {
		paths = []string{cliflag.DefaultStore()}
	}
	var errs []error
	if *asJSON && *html != "" {
		errs = append(errs, errors.New("fleet: give --json or --html, not both"))
	}
	ids, err := runIDs("fleet", fs.Args())
	if err != nil {
		errs = append(errs, err)
	}
	if len(ids) > 0 && len(paths) > 1 {
		errs = append(errs, fmt.Errorf("fleet: run ids name runs of one store, and %d were given: give one --store with run ids", len(paths)))
	}
	opt := outfile.Options{Flag: "html", Force: *force, Keep: paths}
	if *html != "" {
		if err := outfile.Check(*html, outfile.HTMLReport, opt); err != nil {
			errs = append(errs, fmt.Errorf("fleet: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	var stores []fleet.Store
	var names []string // the stores as messages may show them: a URL without its password
	for _, p := range paths {
		st, err := store.OpenToRead(p)
		if err != nil {
			return fmt.Errorf("fleet: %w", err)
		}
		defer st.Close()
		stores = append(stores, st)
		names = append(names, st.Path())
	}
	srcs, hosts, err := fleet.Select(stores, ids)
	if err != nil {
		return fmt.Errorf("fleet: %w", err)
	}
	if len(hosts) == 0 {
		return fmt.Errorf("fleet: no runs in %s (measure each host first: numalab probe mem, numalab run oltp --repeat 3)", strings.Join(names, ", "))
	}
	f, err := fleet.Build(names, hosts, srcs)
	if err != nil {
		return fmt.Errorf("fleet: %w", err)
	}
	switch {
	case *asJSON:
		return fleet.WriteJSON(e.stdout, f)
	case *html != "":
		if err := outfile.Write(*html, outfile.HTMLReport, opt, func(w io.Writer) error { return fleet.WriteHTML(w, f) }); err != nil {
			return fmt.Errorf("fleet: %w", err)
		}
		fmt.Fprintln(e.stdout, *html)
		return nil
	}
	return fleet.WriteText(e.stdout, f)
}
