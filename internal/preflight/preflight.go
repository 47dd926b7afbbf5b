// Package preflight reads the settings of a Linux machine that distort
// what numalab measures, and judges them: the CPU frequency governor and
// driver, turbo, C-states, SMT, transparent huge pages, NUMA balancing,
// memory interleaving, the hypervisor and its steal time, DAMON, free page
// reporting, and the cgroup limits numalab runs under. Each setting that
// distorts a figure becomes a Warning that names the setting, its effect,
// the figures it affects and how to change it, so a report can put the
// warning beside those figures.
//
// It reads through package sysfs below a root, so a captured machine
// (numalab topo --capture) reads like the live one. It only reads: it never
// changes a setting, needs no root, and treats a file it cannot read as a
// setting it cannot see. What the topology already says (governors, SMT,
// THP, hypervisor, packages and nodes) it takes from the topology rather
// than reading twice.
package preflight

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
)

// Kind is the item every run stores its preflight as, first.
const Kind result.Kind[Report] = "preflight.Report"

// Figure names a group of figures numalab measures, so that a warning can
// say which it distorts.
type Figure string

// The figures a setting can distort.
const (
	Latency   Figure = "memory latency"               // probe mem: the latency ladder and DRAM latency
	Bandwidth Figure = "bandwidth"                    // probe mem: memory bandwidth
	NUMA      Figure = "local/remote"                 // probe mem's node matrix, run oltp --data-node
	OLTP      Figure = "tpcc-ro tps"                  // run oltp
	Queries   Figure = "query times"                  // run report (transtats)
	Scaling   Figure = "scaling with streams and DOP" // tps per core, speedup, SMT on/off
)

// Setting is one setting as read: "governor" "performance".
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Warning is a setting that distorts measurements.
type Warning struct {
	Setting string   `json:"setting"` // the setting and its value: "governor powersave"
	Effect  string   `json:"effect"`  // what it does to the figures
	Fix     string   `json:"fix"`     // how to change it
	Affects []Figure `json:"affects"` // the figures it distorts
}

// Report is a machine's preflight: every setting read, in a fixed order,
// and the warnings about those that distort.
type Report struct {
	Settings []Setting `json:"settings"`
	Warnings []Warning `json:"warnings,omitempty"`
}

// Read reads the settings below f's root of the machine t describes (t
// read from the same root) and judges them.
func Read(f sysfs.FS, t *result.Topology) *Report {
	r := &Report{}
	for _, check := range []func(*Report, sysfs.FS, *result.Topology){
		checkCPUFreq, checkTurbo, checkCStates, checkSMT, checkTHP,
		checkNUMABalancing, checkInterleave, checkHypervisor, checkSteal,
		checkDAMON, checkFreePageReporting, checkCgroup,
	} {
		check(r, f, t)
	}
	return r
}

func (r *Report) set(name, format string, args ...any) {
	r.Settings = append(r.Settings, Setting{Name: name, Value: fmt.Sprintf(format, args...)})
}

func (r *Report) warn(setting, effect, fix string, affects ...Figure) {
	r.Warnings = append(r.Warnings, Warning{Setting: setting, Effect: effect, Fix: fix, Affects: affects})
}

// String is the warning in one line: setting, effect, fix.
func (w Warning) String() string {
	return fmt.Sprintf("%s: %s; %s", w.Setting, w.Effect, w.Fix)
}

// WriteText prints the settings as a table, then the warnings.
func WriteText(w io.Writer, r *Report) {
	fmt.Fprintln(w, "preflight")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range r.Settings {
		fmt.Fprintf(tw, "  %s\t%s\n", s.Name, s.Value)
	}
	tw.Flush()
	fmt.Fprintln(w)
	WriteWarnings(w, r)
}

// WriteWarnings prints the warnings, each with the figures it affects, or
// says there are none.
func WriteWarnings(w io.Writer, r *Report) {
	if len(r.Warnings) == 0 {
		fmt.Fprintln(w, "preflight: no setting found that distorts the measurements")
		return
	}
	fmt.Fprintf(w, "preflight: %d %s the measurements\n", len(r.Warnings),
		plural(len(r.Warnings), "setting distorts", "settings distort"))
	for _, x := range r.Warnings {
		figs := make([]string, len(x.Affects))
		for i, f := range x.Affects {
			figs[i] = string(f)
		}
		fmt.Fprintf(w, "  ! %s\n    affects: %s\n", x, strings.Join(figs, ", "))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
