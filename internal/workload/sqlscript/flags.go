package sqlscript

import (
	"flag"
	"math"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/monitor"
)

// Settings are run sql's flags on the fields of c, each defined once: its
// name, help, range and default (c's value when they are defined), how its
// value reaches c, and how c is spelled back as the command line that
// re-runs it, in that line's order (cliflag.Settings).
func (c *RunConfig) Settings() cliflag.Settings {
	r := c.Common.Settings(Engines(), "none: name one")
	ss := append(append(r.Checked, c.ScriptSettings()...),
		r.Seed.Flag("seed of the streams' random draws (:random_seed)"),
		cliflag.Ints("streams", &c.Streams).Flag("stream counts to sweep, e.g. 1,2,4"),
		cliflag.DOPs(&c.DOPs, func() engine.Spec { spec, _ := engine.Lookup(c.Engine); return spec }).Flag(
			"degrees of parallelism of one statement to sweep, e.g. 1,2 (DuckDB's threads, PostgreSQL's parallel workers; "+
				"1 on SQLite and MariaDB)"),
		cliflag.List("placement", ";", &c.Placements).Flag(
			"placement selectors separated by ';', e.g. 'smt=on;smt=off' (default: all CPUs)"),
		cliflag.Bool("spread", &c.Spread).Flag(
			"pin stream i to the i-th CPU of the placement alone (false: every stream on all of them)"),
		r.Duration, r.Warmup, r.Repeat,
		cliflag.IntIn("max-errors", &c.MaxErrors, 0, math.MaxInt32).Flag(
			"failed transactions the run tolerates in its windows; one more stops it (0: stop at the first)"),
		cliflag.IntIn("trace", &c.Trace, 0, 1_000_000).Flag(
			"record up to N transactions per stream (start, end, script, stream, ok) in the store, up to 1000000"),
		cliflag.IntIn("max-tries", &c.MaxTries, 1, 1000).Flag(
			"tries of a transaction that fails with a serialization failure or deadlock, 1 (no retry) to 1000"),
	)
	ss = append(ss, cliflag.Monitor(&c.Monitor, true), cliflag.AllowSettings(&c.AllowSettings))
	ss = append(ss, r.Load...)
	return append(ss, cliflag.MonitorLoad(&c.MonitorLoad, &c.Monitor))
}

// ScriptSettings are the settings of the scripts themselves (--script,
// --builtin, --define, --init and --scale), as run sql takes them and run
// pages, which runs them in its own cells, takes them too.
func (c *RunConfig) ScriptSettings() cliflag.Settings {
	return cliflag.Settings{
		cliflag.Repeated("script", &c.Scripts).Flag("a pgbench script `FILE[@WEIGHT]` to run, one transaction per " +
			"run of it (repeatable; chosen per transaction by weight, default 1)"),
		cliflag.Repeated("builtin", &c.Builtins).Flag(
			"one of pgbench's built-in scripts, `NAME[@WEIGHT]`: tpcb-like, simple-update or select-only (repeatable)"),
		cliflag.Repeated("define", &c.Defines).Flag("set a script variable, `NAME=VALUE` (repeatable; as pgbench -D)"),
		cliflag.Optional(cliflag.Str("init", &c.Init)).Flag("SQL script `FILE` run once before the sweep, timed " +
			"and stored, on numalab's own server or a new --db file (not a --dsn server)"),
		cliflag.IntIn("scale", &c.Scale, 1, math.MaxInt32).Flag(
			"the :scale variable, 1 or more (as pgbench -s; the built-ins draw their keys from it)"),
	}
}

// MonitorRequest is c's --monitor request.
func (c RunConfig) MonitorRequest() monitor.Request {
	return monitor.Request{Names: c.Monitor, Engine: c.Engine, DSN: c.DSN != "", AllowSettings: c.AllowSettings}
}

// CheckFlags checks and completes c as the flags of fs set it:
// --monitor's request and defaults (cliflag.CheckMonitor) and a curve's
// (cliflag.CurveDefaults), what they do not go with, then Check, then the
// database file against --init (CheckFiles).
func (c *RunConfig) CheckFlags(fs *flag.FlagSet) []error {
	errs := cliflag.CheckMonitor(fs, len(c.Monitor) > 0, c.MonitorRequest(), c.Paced() || c.Curve,
		"--rate, --think or --curve", &c.Repeat, &c.MonitorLoad)
	if len(c.Monitor) > 0 && !cliflag.Given(fs, "monitor-load") {
		c.MonitorLoad = monitor.DefaultPacedLoad
	}
	cliflag.CurveDefaults(&c.Load)
	if err := c.Check(); err != nil || len(errs) > 0 {
		return append(errs, err)
	}
	if err := c.CheckFiles(); err != nil {
		return []error{err}
	}
	return nil
}

// Argv is the one command line that gives c, 'numalab run sql' with every
// setting spelled out, so that a stored command re-runs the same cells
// whatever the defaults become (the password of a DSN is hidden).
func (c RunConfig) Argv() []string { return c.Settings().Argv("run", "sql") }
