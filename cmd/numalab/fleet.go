package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/numalab/numalab/internal/fleet"
	"github.com/numalab/numalab/internal/outfile"
)

const fleetHelp = `Usage: numalab fleet [--store FILE|URL]... [--json | --html FILE [--force]] [RUN...]

Are these identical servers really the same? Takes the latest complete
memory probe (probe mem), OLTP run (run oltp) and null-transaction run
(run null) of every host in the
stores (--store may repeat: one store per host, or a shared one), and for
each figure gives the fleet median, each host's value and deviation, and a
verdict:

  DRAM latency       the local DRAM latency the model reads from a probe
                     (the NUMA matrix's local latency, else the random
                     chain's), spread by the probe's own repeats
  bandwidth          the probe's highest read bandwidth (measured once)
  tps per core       tpcc-ro per cell point (engine, streams, placement),
                     over the run's repeats (run oltp --repeat N)
  null round trips   SELECT 1 round trips/s per cell point of run null
                     (engine, transport, protocol, pairing, streams)

The rule: a host's value is the median of its repeats;
z = 0.6745 × (value − fleet median) / max(MAD, 1% of the fleet median),
MAD being the median of the hosts' absolute deviations from the fleet
median. |z| > 3.5 makes an outlier when the host has two or more repeats
and the fleet median lies outside them (min to max); "noisy" when it lies
inside them (one bad repeat does not make an outlier); "far, measured
once" for a figure measured once (not an outlier: its noise is unknown).
With the 1% floor, a deviation under about 5.2% is never an outlier. A
figure that fewer than 3 hosts measured has no verdicts.

Then the preflight settings that differ between hosts: an outlier host is
listed with the settings in which it differs from most hosts and the
preflight warnings most hosts do not carry, its likely causes; with none,
suspect the hardware (a DIMM, a BIOS setting numalab cannot see). A host
with runs but none comparable is listed as such.

Stores are only read: a missing store or one of a newer numalab is an
error, and nothing is written to it. Run ids (with one --store) compare
those runs instead, one per host; runs of different kinds are refused.
The rule, its false-alarm rate and the fixture it is tested on are in
docs/fleet.md.

Examples:
  numalab fleet --store rack1.db
  numalab fleet --store db01.db --store db02.db --store db03.db
  numalab fleet --store rack1.db --html fleet.html
  numalab fleet --store rack1.db --json | jq '.hosts[] | select(.outlier) | .name'
  numalab fleet --store rack1.db 12 15 19
`

// storeList is a --store flag that may repeat.
type storeList []string

func (s *storeList) String() string { return strings.Join(*s, ",") }

func (s *storeList) Set(v string) error {
	if v == "" {
		return errors.New("empty store")
	}
	*s = append(*s, v)
	return nil
}

func cmdFleet(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "fleet", fleetHelp)
	var paths storeList
	fs.Var(&paths, "store", "results `store` to read (repeat for several; default numalab.db)")
	asJSON := fs.Bool("json", false, "print the comparison as JSON")
	html := fs.String("html", "", "write the comparison as a self-contained HTML page to `file`")
	force := fs.Bool("force", false, "let --html replace a file numalab did not write (never a database or a store)")
	if done, err := parseFlags(e, fs, args); done {
		return err
	}
	if len(paths) == 0 {
		paths = storeList{"numalab.db"}
		if v := os.Getenv("NUMALAB_STORE"); v != "" {
			paths = storeList{v}
		}
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
		st, err := openStoreToRead(p)
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
