package sqlscript

import (
	"math"
	"time"

	"github.com/numalab/numalab/internal/cliflag"
)

// Settings are run sql's flags on the fields of c, each defined once: its
// name, help, range and default (c's value when they are defined), how its
// value reaches c, and how c is spelled back as the command line that
// re-runs it, in that line's order (cliflag.Settings).
func (c *RunConfig) Settings() cliflag.Settings {
	ss := cliflag.EngineSettings(&c.Engine, &c.DSN, &c.ConnectTimeout, &c.DB, Engines(), "none: name one")
	ss = append(ss,
		cliflag.Repeated("script", &c.Scripts).Flag("a pgbench script `FILE[@WEIGHT]` to run, one transaction per run of it (repeatable; chosen per transaction by weight, default 1)"),
		cliflag.Repeated("builtin", &c.Builtins).Flag("one of pgbench's built-in scripts, `NAME[@WEIGHT]`: tpcb-like, simple-update or select-only (repeatable)"),
		cliflag.Repeated("define", &c.Defines).Flag("set a script variable, `NAME=VALUE` (repeatable; as pgbench -D)"),
		cliflag.Optional(cliflag.Str("init", &c.Init)).Flag("SQL script `FILE` run once before the sweep, timed and stored, on numalab's own server or a new --db file (not a --dsn server)"),
		cliflag.IntIn("scale", &c.Scale, 1, math.MaxInt32).Flag("the :scale variable, 1 or more (as pgbench -s; the built-ins draw their keys from it)"),
		cliflag.Int64("seed", &c.Seed).Flag("seed of the streams' random draws (:random_seed)"),
		cliflag.Ints("streams", &c.Streams).Flag("stream counts to sweep, e.g. 1,2,4"),
		cliflag.List("placement", ";", &c.Placements).Flag("placement selectors separated by ';', e.g. 'smt=on;smt=off' (default: all CPUs)"),
		cliflag.Bool("spread", &c.Spread).Flag("pin stream i to the i-th CPU of the placement alone (false: every stream on all of them)"),
		cliflag.DurationIn("duration", &c.Duration, 10*time.Millisecond, 24*time.Hour).Flag("measured window of each cell, 10ms to 24h"),
		cliflag.DurationIn("warmup", &c.Warmup, 0, time.Hour).Flag("warm-up before each cell's window, excluded from every figure, up to 1h"),
		cliflag.IntIn("repeat", &c.Repeat, 1, 1000).Flag("repetitions of every cell, 1 to 1000"),
		cliflag.IntIn("max-errors", &c.MaxErrors, 0, math.MaxInt32).Flag("failed transactions the run tolerates in its windows; one more stops it (0: stop at the first)"),
		cliflag.IntIn("max-tries", &c.MaxTries, 1, 1000).Flag("tries of a transaction that fails with a serialization failure or deadlock, 1 (no retry) to 1000"),
	)
	return append(ss, cliflag.Pacing(&c.Pacing)...)
}

// CheckFlags checks c as its flags set it: Check, then the database file
// against --init (CheckFiles).
func (c *RunConfig) CheckFlags() []error {
	if err := c.Check(); err != nil {
		return []error{err}
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
