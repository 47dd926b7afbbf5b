package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/version"
)

// exitCode is 2 for bad usage, 130 for an interrupt, 1 otherwise.
func exitCode(err error) int {
	switch {
	case errors.Is(err, cliflag.ErrUsage):
		return 2
	case errors.Is(err, context.Canceled):
		return 130
	}
	return 1
}

// env is what every command gets: its output streams and the process's
// context (cancelled by Ctrl-C).
type env struct {
	stdout, stderr io.Writer
	args           []string // the command line after "numalab", for the run record
	// stored, if set, hears of every run a command stores (eval uses it).
	stored func(kind string, id int64)
}

// command is one entry of the flat subcommand table.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

// commands is the whole CLI, in the order --help lists it.
var commands = []command{
	{"eval", "the main job: topology, memory probe, OLTP and reporting sweeps, model and report, within a budget", cmdEval},
	{"topo", "show the machine: packages, nodes, cores, SMT siblings, caches, distances", cmdTopo},
	{"runs", "list stored runs, or show one (runs show ID)", cmdRuns},
	{"store", "copy runs between results stores, SQLite and PostgreSQL (store copy FROM TO)", cmdStore},
	{"run", "run a workload sweep: run oltp (tpcc-ro), run report (transtats, x DOP), run insert (bulk loading), run null (SELECT 1), run tpch, run sql (your own pgbench scripts)", cmdRun},
	{"check", "check a numalab TPC-C database against the specification's consistency conditions", cmdCheck},
	{"probe", "measure the machine: probe mem (latency L1..DRAM, NUMA matrix, MLP, bandwidth), probe io (storage)", cmdProbe},
	{"model", "model throughput from memory latency: sockets, SMT, clocks, DRAM, tiers, sizing, DOP, fit", cmdModel},
	{"report", "write the HTML report (or text, JSON, CSV) from stored runs: machine, latency, OLTP, queries, model", cmdReport},
	{"compare", "compare two stored runs of the same kind: each figure, its ratio, and whether it exceeds the noise", cmdCompare},
	{"fleet", "are these identical servers the same? each host's latest runs against the fleet: outliers and differing settings", cmdFleet},
	{"inspect", "where the space goes in a database (SQLite, DuckDB, PostgreSQL): tables, indexes, usage", cmdInspect},
	{"version", "print numalab's version, the Go version and the engine libraries'", cmdVersion},
}

// helpFiles holds every command's --help text: help/<command>.txt, a
// subcommand's words joined by "-" (help/model-fit.txt).
//
//go:embed help
var helpFiles embed.FS

// helpText is the help text of the named command. Every name is a
// constant of this package, and TestHelpCitesDocs prints every help.
func helpText(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic(err)
	}
	return string(b)
}

func usage(w io.Writer) {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	tw.Flush()
	fmt.Fprintf(w, helpText("numalab"), b.String())
}

// run is the whole program: main only adds the process's streams and exit
// code. Its error never shows a password, whichever door a connection
// string came in by (result.Redact).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if err := dispatch(ctx, args, stdout, stderr); err != nil {
		return redacted{err}
	}
	return nil
}

// redacted is an error whose text has every password hidden.
type redacted struct{ err error }

func (r redacted) Error() string { return result.Redact(r.err.Error()) }
func (r redacted) Unwrap() error { return r.err }

// dispatch runs the command args name.
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	e := &env{stdout: stdout, stderr: stderr, args: args}
	if len(args) == 0 {
		usage(stderr)
		return cliflag.ErrUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return nil
	case "-version", "--version":
		return cmdVersion(ctx, e, nil)
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	fmt.Fprintf(stderr, "numalab: unknown command %q\n\n", args[0])
	usage(stderr)
	return cliflag.ErrUsage
}

// subcommands runs the one of subs that args[0] names, for the command
// name (run, probe): with none, or a flag first, it prints name's help
// (on stdout for --help); an unknown one is refused as a what (workload).
func subcommands(ctx context.Context, e *env, args []string, name, what string, subs []command) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprint(e.stdout, helpText(name))
			return nil
		}
		fmt.Fprint(e.stderr, helpText(name))
		return cliflag.ErrUsage
	}
	names := make([]string, len(subs))
	for i, s := range subs {
		if s.name == args[0] {
			return s.run(ctx, e, args[1:])
		}
		names[i] = s.name
	}
	last := len(names) - 1
	fmt.Fprintf(e.stderr, "numalab %s: unknown %s %q (want %s or %s)\n\n", name, what, args[0], strings.Join(names[:last], ", "), names[last])
	fmt.Fprint(e.stderr, helpText(name))
	return cliflag.ErrUsage
}

// isTerminal reports whether w is a terminal, for progress lines that
// rewrite themselves.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func cmdVersion(_ context.Context, e *env, args []string) error {
	fs := cliflag.New(e.stderr, "version", helpText("version"))
	if done, err := cliflag.ParseNoArgs(e.stdout, fs, args); done {
		return err
	}
	version.Write(e.stdout)
	return nil
}
