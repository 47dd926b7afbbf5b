package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/numalab/numalab/internal/outfile"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/topo"
)

const topoHelp = `Usage: numalab topo [--sysfs DIR|FILE | --hwloc FILE.xml] [--json] [--select SELECTOR] [--capture FILE.tar.gz [--force]]

Shows the machine as a database engineer needs to see it: packages
(sockets), NUMA nodes with their memory and distances, physical cores and
their SMT siblings, which caches each CPU shares, offline CPUs, the CPU
model, frequency and governor, SMT control, transparent huge pages, the
kernel and the hypervisor. It only reads /sys and /proc (well under a
second); nothing is measured.

Then the preflight: the settings that distort measurements (frequency
governor and driver, turbo, C-states, SMT, THP, NUMA balancing, memory
interleaving, hypervisor and steal time, DAMON, free page reporting, the
cgroup CPU, memory and cpuset limits), and a warning for each that does,
with the figures it affects and how to change it. Every run stores the
same preflight, and eval prints its warnings first. An hwloc XML file has
no settings, so it has no preflight.

In the map, "0+8" is one physical core whose logical CPUs (SMT siblings)
are 0 and 8; a cache or node line holds everything indented below it.
CPUs offline or outside this process's cgroup cpuset are left out of the
map and listed as offline, as hwloc does.

Examples:
  numalab topo                                   # this machine
  numalab topo --json > machine.json             # the same as JSON
  numalab topo --select 'node=0,smt=off'         # CPUs a placement selector yields
  numalab topo --capture myhost.tar.gz           # pack what topo reads, to send or keep
  numalab topo --sysfs myhost.tar.gz             # show a captured machine
  numalab topo --sysfs /mnt/otherhost            # a tree holding sys/ and proc/
  numalab topo --hwloc big.xml                   # from 'lstopo --of xml' elsewhere
`

func cmdTopo(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "topo", topoHelp)
	sysfsRoot := fs.String("sysfs", "", "read a captured machine: a directory holding sys/ and proc/, or a capture archive (.tar.gz, .tar.bz2)")
	hwlocFile := fs.String("hwloc", "", "read an hwloc XML file (lstopo --of xml) instead of this machine")
	asJSON := fs.Bool("json", false, "print JSON instead of the map")
	selector := fs.String("select", "", "print the CPUs a placement selector yields (cpus=LIST, node=N, cores=N, smt=on|off)")
	capture := fs.String("capture", "", "write the files topo reads into this .tar.gz, for 'numalab topo --sysfs FILE' elsewhere")
	force := fs.Bool("force", false, "let --capture replace a file numalab did not write (never a database)")
	if done, err := parseNoArgs(e, fs, args); done {
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
			bad = append(bad, badFlag("capture", *capture, "must end in .tar.gz or .tgz (numalab writes gzip)").Error())
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
