package insert

import (
	"time"

	"github.com/numalab/numalab/internal/cliflag"
)

// Settings are run insert's flags on the fields of c, each defined once:
// its name, help, range and default (c's value when they are defined), how
// its value reaches c, and how c is spelled back as the command line that
// re-runs it, in that line's order (cliflag.Settings).
func (c *RunConfig) Settings() cliflag.Settings {
	r := c.Common.Settings("", "numalab-insert.db or .duckdb")
	ss := cliflag.Settings{
		r.Engine, r.DB, r.DSN, r.ConnectTimeout,
		cliflag.Str("method", &c.Method).Flag("PostgreSQL's load: copy or insert (MariaDB loads with multi-row INSERTs)"),
		cliflag.Bool("indexes", &c.Indexes).Flag(
			"PostgreSQL: a primary key and an index on k (default: a heap table alone); MariaDB: an index on k"),
		cliflag.Str("key", &c.Key).Flag("the id column: none, stream (a primary key, each stream numbering its own " +
			"range) or shared (a primary key from one sequence all streams draw on: the hot page)"),
		cliflag.Int("batch", &c.Batch).Flag("rows per batch"),
		cliflag.Int64("max-rows", &c.MaxRows).Flag("rows one cell may write, all streams together"),
		cliflag.Ints("streams", &c.Streams).Flag("stream counts to sweep, e.g. 1,2,4,8"),
		cliflag.List("placement", ";", &c.Placements).Flag(
			"placement selectors separated by ';', e.g. 'node=0;' (default: all CPUs)"),
		cliflag.Bool("spread", &c.Spread).Flag(
			"pin stream i to the i-th CPU of the placement alone (false: every stream on all of them)"),
		r.Duration, r.Warmup, r.Repeat,
		cliflag.DurationIn("wait-every", &c.WaitEvery, time.Millisecond, time.Minute).Flag("how often to sample " +
			"PostgreSQL's wait events, 1ms to 1m, or to read MariaDB's performance_schema wait sums (at least 100ms)"),
		r.Seed,
	}
	return append(ss, r.Pacing...)
}

// Argv is the one command line that gives c, 'numalab run insert' with every
// setting spelled out, so that a stored command re-runs the same cells
// whatever the defaults become (the password of a DSN is hidden).
func (c RunConfig) Argv() []string { return c.Settings().Argv("run", "insert") }
