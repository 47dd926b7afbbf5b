package transtats

import (
	"errors"
	"flag"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/runconfig"
	"github.com/numalab/numalab/internal/setting"
	"github.com/numalab/numalab/internal/sweep"
)

// DefaultRunConfig is 'numalab run report' without flags.
func DefaultRunConfig() RunConfig {
	return RunConfig{Common: runconfig.Common{Engine: "sqlite", Duration: 30 * time.Second, Warmup: 5 * time.Second,
		Seed: 1, Repeat: 1},
		Rows: DefaultRows, Rate: DefaultRate, Streams: []int{1}, DOP: []int{1}, Queries: []string{P1, P2}, DataNode: -1}
}

// Settings are run report's flags on the fields of c, each defined once:
// its name, help, range and default (c's value when they are defined), how
// its value reaches c, checked as it is set (those of --dsn, --db and --dop
// against the --engine set before them), and how c is spelled back as the
// command line that re-runs it, in that line's order (cliflag.Settings).
func (c *RunConfig) Settings() cliflag.Settings {
	r := c.Common.Settings(cliflag.EnginesDOP(), "transtats-N.sqlite or .duckdb")
	return append(r.Checked, cliflag.Settings{
		cliflag.Int64("rows", &c.Rows).Flag("rows of tran_stats (N), up to 200000000"),
		cliflag.Validated(cliflag.Int64("rate", &c.Rate), func(string) error {
			if err := CheckSize(c.Rows, c.Rate); err != nil {
				return setting.Together([]string{"rows", "rate"}, "%w", err)
			}
			return nil
		}).Flag("rows per second of tran_begin (R): the rows in P2's window; the data's shape, not a pacing rate " +
			"(that is --arrival-rate)"),
		cliflag.Validated(cliflag.Ints("streams", &c.Streams), func(v string) error {
			if why := sweep.TooManyStreams(c.Streams, runtime.NumCPU()); why != "" {
				return cliflag.Bad("streams", v, why)
			}
			return nil
		}).Flag("stream counts to sweep, e.g. 1,2,4,8"),
		cliflag.DOPs(&c.DOP, func() engine.Spec { return specOf(c.Engine) }).Flag(
			"degrees of parallelism to sweep, e.g. 1,2,4"),
		cliflag.Field("query", &c.Queries, func(s string) ([]string, error) {
			q, err := ParseQueries(s)
			if err != nil {
				return nil, setting.Wrap("query", err)
			}
			return q, nil
		}, func(q []string) string { return strings.Join(q, ",") }).Flag("queries: P1, P2 or P1,P2"),
		r.Duration, r.Warmup,
		cliflag.Optional(cliflag.Str("placement", &c.Placement)).Flag(
			"placement selector for the streams, e.g. 'node=0,smt=off' (default: not pinned)"),
		cliflag.Int("data-node", &c.DataNode).Flag(
			"NUMA node to place the data on before the cells (-1: leave it where it is); data=nodeN in a placement wins"),
		r.Seed.Flag("seed of the streams' random numbers (P2's t)"),
		r.Repeat.Flag("repetitions of every cell, 1 to 1000, all cells once before any again"),
		cliflag.Optional(cliflag.IntIn("hog", &c.Hog, 0, runtime.NumCPU())).Flag("keep `N` of the placement's CPUs " +
			"busy with a plain CPU-bound thread during every cell (the last N its streams would take), 0 to the machine's CPUs"),
		cliflag.Optional(cliflag.DurationIn("think", &c.Pacing.Think, 0, time.Hour)).Flag(
			"closed loop with a think `time` after each query, e.g. 100ms, up to 1h (0: none; see --think-dist)"),
		cliflag.Optional(cliflag.Str("think-dist", &c.Pacing.ThinkDist)).Flag(
			"think times: fixed (the default) or exp (exponential with mean --think)"),
		cliflag.Optional(cliflag.Float("arrival-rate", &c.Pacing.Rate)).Flag("open loop: queries per `second` over " +
			"all streams (what --rate is in the other run commands; here --rate is the data's); latency runs from each " +
			"query's intended start, and queries that start over 1ms late are counted (0: closed loop)"),
		cliflag.Optional(cliflag.Str("arrivals", &c.Pacing.Arrivals)).Flag(
			"arrivals of --arrival-rate: poisson (the default) or uniform"),
		cliflag.Monitor(&c.Monitor, false), cliflag.AllowSettings(&c.AllowSettings),
		cliflag.MonitorLoad(&c.MonitorLoad, &c.Monitor),
	}...)
}

// MonitorRequest is c's --monitor request.
func (c RunConfig) MonitorRequest() monitor.Request {
	return monitor.Request{Names: c.Monitor, Engine: c.Engine, DSN: c.DSN != "", AllowSettings: c.AllowSettings}
}

// CheckFlags checks c as the flags of fs set it (Settings.Apply) for what
// only the whole configuration shows: --monitor's request and defaults
// (cliflag.CheckMonitor), and what every run command checks
// (runconfig.Common.Check), the pacing named as run report names its flags
// (--arrival-rate, where sweep.Pacing's checks name --rate, which here is
// the data's).
func (c *RunConfig) CheckFlags(fs *flag.FlagSet) []error {
	errs := cliflag.CheckMonitor(fs, len(c.Monitor) > 0, c.MonitorRequest(), c.Paced(), "--arrival-rate or --think",
		&c.Repeat, &c.MonitorLoad)
	if err := c.Common.Check(); err != nil {
		r := strings.NewReplacer("--rate or --curve", "--arrival-rate", "--rate", "--arrival-rate",
			"-rate:", "-arrival-rate:")
		errs = append(errs, errors.New(r.Replace(err.Error())))
	}
	return errs
}

// Resolve completes a checked c with its database: it returns the DSN to
// connect with (stored without its password: CheckFlags); an embedded
// engine's file defaults to DefaultPath, must be of that engine, and must
// have room for the rows.
func (c *RunConfig) Resolve() (dsn string, err error) {
	dsn = c.DSN
	spec, _ := engine.Lookup(c.Engine)
	if c.DB == "" && !spec.Server {
		c.DB = DefaultPath(spec.Name, c.Rows)
	}
	if err := cliflag.CheckFileEngine(c.Engine, c.DB); err != nil {
		return "", err
	}
	if err := CheckFits(spec.Name, engine.Options{Path: c.DB, DSN: dsn}, c.Rows); err != nil {
		return "", cliflag.Bad("rows", strconv.FormatInt(c.Rows, 10), "could never be loaded here: "+err.Error())
	}
	return dsn, nil
}

// Argv is the one command line that gives c, 'numalab run report' with every
// setting spelled out, so that a stored command re-runs the same cells
// whatever the defaults become (the password of a DSN is hidden).
func (c RunConfig) Argv() []string { return c.Settings().Argv("run", "report") }
