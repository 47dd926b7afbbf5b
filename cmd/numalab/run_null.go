package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/workload/null"
)

const runNullHelp = `Usage: numalab run null [--engine postgres|sqlite] [--dsn DSN] [--transport unix,tcp]
         [--pairing same-cpu,smt-sibling,other-core,other-node] [--protocol prepared|simple]
         [--streams 1] [--duration 5s] [--warmup 1s] [--repeat 3] [--json] [--store FILE]

Runs the null transaction (docs/workloads/null.md): SELECT 1 in a closed
loop, the fixed cost of a round trip with no work on data: the client
library, the unix socket or TCP loopback, the server's scheduler. A row is
printed per cell: round trips per second in total and per stream, latency
p50, p95 and p99, and the machine's context switches per second and per
call. The run is stored (kind "null") with every cell and the matrix.

PostgreSQL (the default): a throwaway server numalab starts, listening on
its unix socket and on a loopback address (--transport unix,tcp), or a
server given by --dsn (one transport: the DSN's host says which). Each cell
places the client and its backend by a pairing of the matrix, the client
on this machine's first usable CPU:
  same-cpu      the backend on the client's logical CPU
  smt-sibling   on the other hardware thread of the client's core
  other-core    on another core of the client's NUMA node
  other-node    on a CPU of the NUMA node farthest from the client's
A pairing this machine cannot offer is printed as unavailable, with why,
and stored so. The backend is pinned by its process id (pg_backend_pid)
with sched_setaffinity: with --dsn that works only when the server runs
on this machine and numalab may set its processes' affinity (the same
user, or root or CAP_SYS_NICE); otherwise the cell fails and says so.

--protocol prepared sends Bind/Execute/Sync of a prepared SELECT 1
(pgbench -M prepared); simple sends the query text (pgbench -M simple,
pgbench's default).

SQLite (--engine sqlite): a prepared SELECT 1 on an in-memory database in
this process, on the first usable CPU: the floor under every engine.

Repeats are interleaved: every cell once, then every cell again.

Examples:
  numalab run null
  numalab run null --transport unix --pairing same-cpu,other-core --repeat 5
  numalab run null --engine sqlite --streams 1,2
  numalab run null --dsn 'host=/var/run/postgresql dbname=lab' --protocol simple
`

func nullFlags(e *env, args []string) (cfg null.RunConfig, storePath string, asJSON, done bool, err error) {
	cfg = null.DefaultRunConfig()
	fs := newFlags(e, "run null", runNullHelp)
	eng := fs.String("engine", cfg.Engine, "engine: postgres or sqlite")
	dsn := fs.String("dsn", "", "PostgreSQL `DSN` to use (default: a throwaway server numalab starts)")
	transport := fs.String("transport", strings.Join(cfg.Transports, ","), "PostgreSQL transports: unix, tcp or unix,tcp")
	pairing := fs.String("pairing", strings.Join(cfg.Pairings, ","), "client/backend pairings to run")
	protocol := fs.String("protocol", cfg.Protocol, "PostgreSQL call: prepared or simple")
	streams := fs.String("streams", intsArg(cfg.Streams), "stream counts to sweep, e.g. 1,2,4")
	dur := fs.Duration("duration", cfg.Duration, "measured window of each cell")
	warm := fs.Duration("warmup", cfg.Warmup, "warm-up before each cell's window, excluded from every figure")
	repeat := fs.Int("repeat", cfg.Repeat, "repetitions of every cell, interleaved")
	sp := storeFlag(fs)
	js := fs.Bool("json", false, "print the cells as JSON on stdout at the end (the table goes to stderr)")
	if done, err = parseFlags(e, fs, args); done {
		return cfg, "", false, true, err
	}
	if err = noArgs(fs); err != nil {
		return cfg, "", false, true, err
	}
	var errs []error
	cfg.Engine, cfg.DSN, cfg.Protocol, cfg.Duration, cfg.Warmup, cfg.Repeat = *eng, *dsn, *protocol, *dur, *warm, *repeat
	cfg.Transports, cfg.Pairings = strings.Split(*transport, ","), strings.Split(*pairing, ",")
	if cfg.DSN != "" && !flagGiven(fs, "transport") {
		cfg.Transports = []string{null.DSNTransport(cfg.DSN)}
	}
	if cfg.Engine == "sqlite" {
		cfg.Transports = nil
	}
	if cfg.Streams, err = intList("streams", *streams, 1); err != nil {
		errs = append(errs, err)
	}
	if err := cfg.Check(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return cfg, "", false, true, err
	}
	return cfg, *sp, *js, false, nil
}

// nullArgv is the one command line that gives cfg, every setting spelled
// out (the password of a DSN is hidden).
func nullArgv(cfg null.RunConfig) []string {
	a := []string{"run", "null", "--engine", cfg.Engine}
	if cfg.DSN != "" {
		a = append(a, "--dsn", result.Redact(cfg.DSN))
	}
	if cfg.Engine == "postgres" {
		a = append(a, "--transport", strings.Join(cfg.Transports, ","), "--pairing", strings.Join(cfg.Pairings, ","), "--protocol", cfg.Protocol)
	}
	return append(a, "--streams", intsArg(cfg.Streams), "--duration", cfg.Duration.String(), "--warmup", cfg.Warmup.String(),
		"--repeat", strconv.Itoa(cfg.Repeat))
}

func runNull(ctx context.Context, e *env, args []string) error {
	cfg, storePath, asJSON, done, err := nullFlags(e, args)
	if done || err != nil {
		return err
	}
	return runNullConfig(ctx, e, cfg, storePath, asJSON)
}

// runNullConfig runs a checked configuration: cells, store, sweep, render.
func runNullConfig(ctx context.Context, e *env, cfg null.RunConfig, storePath string, asJSON bool) error {
	machine, err := topo.FromSysfs("/")
	if err != nil {
		return fmt.Errorf("reading this machine's topology: %w", err)
	}
	cells, layout, matrix := cfg.Cells(machine)
	if len(cells) == 0 {
		var why []string
		for _, p := range null.Select(matrix, cfg.Pairings) {
			why = append(why, p.String())
		}
		return fmt.Errorf("-pairing: this machine offers none of %s (%s)", strings.Join(cfg.Pairings, ", "), strings.Join(why, "; "))
	}
	prog := &nullRows{progress: newProgress(e.stderr), table: e.stdout}
	if asJSON {
		prog.table = e.stderr
	}
	defer prog.Done()
	rec, err := startRun(ctx, e.withArgs(nullArgv(cfg)), storePath, null.RunKind, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(prog.table, nullRowFormat, "cell", "transport", "pairing", "cpus", "streams", "calls/s", "/stream", "p50 µs", "p95 µs", "p99 µs", "cs/s", "cs/call")
	measured, err := sweep.Run(ctx, cfg.Plan(cells), null.NewSweep(cfg, layout, matrix), rec, prog)
	if ferr := rec.Finish(err, nullHeadline(measured)); ferr != nil {
		return errors.Join(err, ferr)
	}
	if asJSON {
		if measured == nil {
			measured = []*null.Cell{}
		}
		if jerr := writeJSON(e.stdout, measured); jerr != nil {
			return errors.Join(err, jerr)
		}
	}
	return err
}

// nullRows prints a row per cell as it is stored.
type nullRows struct {
	*progress
	table io.Writer
}

const nullRowFormat = "%4v %-10v %-11v %-5v %7v %9v %9v %8v %8v %8v %9v %7v\n"

func (r *nullRows) Measured(_ sweep.Cell, c *null.Cell) {
	r.Done()
	m := &c.Cell
	cpus := strconv.Itoa(c.Pairing.Client)
	if c.Pairing.Backend >= 0 {
		cpus += "/" + strconv.Itoa(c.Pairing.Backend)
	}
	cut := ""
	switch {
	case m.Interrupted:
		cut = " (cut short)"
	case c.NoCall != "":
		cut = " (no call completed)"
	}
	us := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	fmt.Fprintf(r.table, nullRowFormat, m.Index, c.Transport, c.Pairing.Name, cpus, m.Streams, fmt.Sprintf("%.0f", m.TPS), fmt.Sprintf("%.0f", c.PerStream),
		us(m.Total.P50US), us(m.Total.P95US), us(m.Total.P99US), fmt.Sprintf("%.0f", c.CtxSwitchesPerSec), fmt.Sprintf("%.2f", c.CtxSwitchesPerCall)+cut)
}

// nullHeadline is the fastest and slowest cell, for 'numalab runs'.
func nullHeadline(cells []*null.Cell) string {
	var lo, hi *null.Cell
	for _, c := range cells {
		if hi == nil || c.Cell.TPS > hi.Cell.TPS {
			hi = c
		}
		if lo == nil || c.Cell.TPS < lo.Cell.TPS {
			lo = c
		}
	}
	if hi == nil {
		return ""
	}
	s := fmt.Sprintf("%s: %.0f round trips/s %s %s", hi.Cell.Engine, hi.Cell.TPS, hi.Transport, hi.Pairing.Name)
	if lo != hi {
		s += fmt.Sprintf(", %.0f %s %s", lo.Cell.TPS, lo.Transport, lo.Pairing.Name)
	}
	return s
}
