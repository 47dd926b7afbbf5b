package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/version"
)

// errUsage reports bad command-line input whose message was already printed.
var errUsage = errors.New("usage")

// exitCode is 2 for bad usage, 130 for an interrupt, 1 otherwise.
func exitCode(err error) int {
	switch {
	case errors.Is(err, errUsage):
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
	{"run", "run a workload sweep: run oltp (tpcc-ro), run report (transtats, x DOP), run insert (bulk loading), run null (SELECT 1), run tpch", cmdRun},
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

// run is the whole program: main only adds the process's streams and exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	e := &env{stdout: stdout, stderr: stderr, args: args}
	if len(args) == 0 {
		usage(stderr)
		return errUsage
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
	return errUsage
}

// newFlags makes a command's flag set. help is printed by --help, before
// the flag list: a synopsis line, what the command does, and examples.
func newFlags(e *env, name, help string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "%s\nFlags:\n", strings.TrimSpace(help)+"\n")
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args; --help prints the usage to stdout and returns
// done with a nil error. The flag package would print the usage itself on
// --help and on a bad flag; it is held back during the parse so that the
// usage prints once: on stdout for --help, on stderr after the flag
// package's error line otherwise.
func parseFlags(e *env, fs *flag.FlagSet, args []string) (done bool, err error) {
	usage := fs.Usage
	fs.Usage = func() {}
	err = fs.Parse(args)
	fs.Usage = usage
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(e.stdout)
		fs.Usage()
		return true, nil
	}
	if err != nil {
		fs.Usage()
		return true, errUsage
	}
	return false, nil
}

// badFlag is the error for a flag value that parsed but makes no sense.
func badFlag(name, value, want string) error {
	return fmt.Errorf("-%s: %q %s", name, value, want)
}

// checkFileEngine refuses a --db file whose first bytes say it belongs to
// another engine than name: opened by the wrong engine it fails late and
// obscurely (DuckDB tries to download its SQLite extension). A file that
// is missing, or of neither engine, passes: the caller loads it or
// refuses it with its own reason.
func checkFileEngine(name, path string) error {
	got, err := engine.FileEngine(path)
	if err != nil || got == name {
		return nil
	}
	return badFlag("db", path, fmt.Sprintf("is %s database, not %s: give --engine %s, or a --db file that does not exist to load a new %s one",
		engineArticle[got], engineTitle[name], got, engineTitle[name]))
}

var (
	engineTitle   = map[string]string{"sqlite": "SQLite", "duckdb": "DuckDB"}
	engineArticle = map[string]string{"sqlite": "an SQLite", "duckdb": "a DuckDB"}
)

// dbFlags are --engine, --db and --dsn: the database that check and
// inspect read, a file (SQLite, DuckDB) or a PostgreSQL server.
type dbFlags struct {
	fs                *flag.FlagSet
	engine, path, dsn *string
}

func addDBFlags(fs *flag.FlagSet, path, pathUsage, dsnUsage string) *dbFlags {
	return &dbFlags{fs: fs,
		engine: fs.String("engine", "", "sqlite, duckdb or postgres (default: from the --db file's first bytes; postgres with --dsn)"),
		path:   fs.String("db", path, pathUsage),
		dsn:    fs.String("dsn", "", dsnUsage),
	}
}

// resolve checks the three flags together and names the engine: --engine,
// else postgres with --dsn, else the one the --db file's first bytes say
// (engine.FileEngine). A --db file must exist.
func (d *dbFlags) resolve() (string, flagErrs) {
	var errs flagErrs
	name, path, dsn := *d.engine, *d.path, *d.dsn
	file := path != "" && (dsn == "" || flagGiven(d.fs, "db"))
	switch {
	case name == "postgres" && flagGiven(d.fs, "db"):
		errs = append(errs, errors.New("-db: a file is for --engine sqlite or duckdb (PostgreSQL takes --dsn)"))
	case file && dsn != "":
		errs = append(errs, errors.New("-db and -dsn: give one database, not both"))
	case !file && dsn == "":
		errs = append(errs, errors.New("give --db FILE (SQLite, DuckDB) or --dsn DSN (PostgreSQL)"))
	}
	switch name {
	case "":
		if dsn != "" {
			return "postgres", errs
		}
	case "sqlite", "duckdb":
		errs.badIf(dsn != "", "engine", name, "reads a file: give --db FILE, not --dsn")
		if err := checkFileEngine(name, path); file && err != nil {
			errs = append(errs, err)
		}
	case "postgres":
		errs.badIf(dsn == "", "engine", name, "reads a server: give --dsn DSN")
		return name, errs
	default:
		errs.badIf(true, "engine", name, "is not an engine (want sqlite, duckdb or postgres)")
		return name, errs
	}
	if !file {
		return name, errs
	}
	got, err := engine.FileEngine(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		errs.badIf(true, "db", path, "is no such database file: check the path")
	case errors.Is(err, engine.ErrUnknownFile):
		errs.badIf(name == "", "db", path, "is neither SQLite nor DuckDB by its first bytes: give --engine if it is one")
	case err != nil:
		errs = append(errs, fmt.Errorf("-db: %w", err))
	case name == "":
		name = got
	}
	return name, errs
}

// parseNoArgs is parseFlags for a command that takes no arguments: a
// stray one is an error too.
func parseNoArgs(e *env, fs *flag.FlagSet, args []string) (done bool, err error) {
	if done, err := parseFlags(e, fs, args); done {
		return true, err
	}
	err = noArgs(fs)
	return err != nil, err
}

// intList parses a comma-separated list of integers of at least least.
func intList(name, s string, least int) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < least {
			return nil, badFlag(name, s, fmt.Sprintf("is not a list of whole numbers of at least %d: want e.g. 1,2,4", least))
		}
		out = append(out, v)
	}
	return out, nil
}

// flagGiven reports whether the flag was given on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// noArgs refuses stray positional arguments.
func noArgs(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q (flags go before arguments; see 'numalab %s --help')", fs.Name(), fs.Arg(0), fs.Name())
	}
	return nil
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
	fs := newFlags(e, "version", helpText("version"))
	if done, err := parseNoArgs(e, fs, args); done {
		return err
	}
	version.Write(e.stdout)
	return nil
}

// flagErrs collects a command's bad flags, to report them all at once.
type flagErrs []error

// badIf adds badFlag(name, value, want) when bad holds.
func (f *flagErrs) badIf(bad bool, name, value, want string) {
	if bad {
		*f = append(*f, badFlag(name, value, want))
	}
}
