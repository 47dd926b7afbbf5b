package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/outfile"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/topo"
)

func cmdTopo(_ context.Context, e *env, args []string) error {
	fs := cliflag.New(e.stderr, "topo", helpText("topo"))
	sysfsRoot := fs.String("sysfs", "", "read a captured machine: a directory holding sys/ and proc/, or a capture archive (.tar.gz, .tar.bz2)")
	hwlocFile := fs.String("hwloc", "", "read an hwloc XML file (lstopo --of xml) instead of this machine")
	asJSON := fs.Bool("json", false, "print JSON instead of the map")
	selector := fs.String("select", "", "print the CPUs a placement selector yields (cpus=LIST, node=N, cores=N, smt=on|off)")
	capture := fs.String("capture", "", "write the files topo reads into this .tar.gz, for 'numalab topo --sysfs FILE' elsewhere")
	force := fs.Bool("force", false, "let --capture replace a file numalab did not write (never a database)")
	if done, err := cliflag.ParseNoArgs(e.stdout, fs, args); done {
		return err
	}
	var bad []string
	if *sysfsRoot != "" && *hwlocFile != "" {
		bad = append(bad, "-sysfs and -hwloc: give one source, not both")
	}
	if *capture != "" {
		if *hwlocFile != "" {
			bad = append(bad, "-capture: captures a Linux tree, not an XML file (drop -hwloc)")
		}
		if !strings.HasSuffix(*capture, ".tar.gz") && !strings.HasSuffix(*capture, ".tgz") {
			bad = append(bad, cliflag.Bad("capture", *capture, "must end in .tar.gz or .tgz (numalab writes gzip)").Error())
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("topo: %s", strings.Join(bad, "; "))
	}

	if *capture != "" {
		t, top, err := topo.CaptureFile(*sysfsRoot, *capture, outfile.Options{Flag: "capture", Force: *force})
		if err != nil {
			return fmt.Errorf("topo --capture: %w", err)
		}
		fmt.Fprintf(e.stdout, "wrote %s: %s (%d logical CPUs, %d nodes); read it with: numalab topo --sysfs %s\n",
			*capture, top, len(t.CPUs), len(t.Nodes), *capture)
		return nil
	}
	t, pf, err := topo.Load(*sysfsRoot, *hwlocFile)
	if err != nil {
		return err
	}
	if *selector != "" {
		p, err := place.Resolve(t, *selector)
		if err != nil {
			return fmt.Errorf("topo --select: %w", err)
		}
		if *asJSON {
			return writeJSON(e.stdout, p)
		}
		fmt.Fprintf(e.stdout, "%s: %s\n", p.Selector, p)
		return nil
	}
	if *asJSON {
		// The topology's fields, and the preflight beside them.
		return writeJSON(e.stdout, struct {
			*result.Topology
			Preflight *preflight.Report `json:"preflight,omitempty"`
		}{t, pf})
	}
	topo.WriteText(e.stdout, t)
	if pf != nil {
		fmt.Fprintln(e.stdout)
		preflight.WriteText(e.stdout, pf)
	}
	return nil
}
