package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/hosts"
	"github.com/numalab/numalab/internal/modelinput"
	"github.com/numalab/numalab/internal/outfile"
)

// hostsMode says whether model buy's arguments ask for --hosts: the
// measured hosts compared, with flags of their own.
func hostsMode(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-hosts", "--hosts", "-hosts=true", "--hosts=true":
			return true
		}
	}
	return false
}

// cmdModelBuyHosts chooses between hosts that were measured: each host's
// run in one or more stores, priced by --prices (package hosts).
func cmdModelBuyHosts(e *env, args []string) error {
	fs := cliflag.New(e.stderr, "model buy", helpText("model-buy"))
	fs.Bool("hosts", true, "choose between the hosts measured in the stores, each at its price (--prices)")
	paths := cliflag.Stores(fs, "results `store` the hosts stored their runs in (repeat for several; default numalab.db)")
	runs := cliflag.Strings(fs, "run", "a host's run to compare, `ID` (one store) or UID (repeat, one per host; default: each host's latest complete closed-loop OLTP run)")
	engine := fs.String("engine", "", "take each host's latest run on this `engine` (default: its latest run, whatever the engine)")
	pricesFile := fs.String("prices", "", "the hosts' prices, a TOML `file`: one [[host]] table per host with name and price, or hourly and hours")
	asJSON := fs.Bool("json", false, "print JSON")
	asCSV := fs.Bool("csv", false, "print CSV (one row per host)")
	html := fs.String("html", "", "write the comparison as a self-contained HTML page to `file`")
	force := fs.Bool("force", false, "let --html replace a file numalab did not write (never a database or a store)")
	if done, err := cliflag.Parse(e.stdout, fs, args); done {
		return err
	}
	var errs []error
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("model buy --hosts: unexpected %q (name runs with --run)", fs.Arg(0)))
	}
	if *asJSON && *asCSV {
		errs = append(errs, errors.New("-json and -csv: choose one output format"))
	}
	if *engine != "" && len(*runs) > 0 {
		errs = append(errs, errors.New("-engine: chooses each host's latest run; --run names the runs: give one or the other"))
	}
	stores := *paths
	if len(stores) == 0 {
		stores = []string{cliflag.DefaultStore()}
	}
	var prices []hosts.Price
	if *pricesFile == "" {
		errs = append(errs, errors.New("-prices: missing: give a TOML file with one [[host]] table per host (name, and price or hourly and hours); see 'numalab model buy --help'"))
	} else if data, err := os.ReadFile(*pricesFile); err != nil {
		errs = append(errs, fmt.Errorf("-prices: %w", err))
	} else if prices, err = hosts.ParsePrices(*pricesFile, data); err != nil {
		errs = append(errs, err)
	}
	opt := outfile.Options{Flag: "html", Force: *force, Keep: append(stores, *pricesFile)}
	if *html != "" {
		errs = append(errs, outfile.Check(*html, outfile.HTMLReport, opt))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	c, err := modelinput.CompareHosts(stores, hosts.Selection{Engine: *engine, Runs: *runs}, prices)
	if err != nil {
		return err
	}
	switch {
	case *html != "":
		if err := outfile.Write(*html, outfile.HTMLReport, opt, func(w io.Writer) error { return hosts.WriteHTML(w, c) }); err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, *html)
		return nil
	case *asJSON:
		return writeJSON(e.stdout, c)
	case *asCSV:
		return hosts.WriteCSV(e.stdout, c)
	}
	return hosts.WriteText(e.stdout, c)
}
