package tpcc

import (
	"math"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/setting"
)

// Settings are run oltp's flags on the fields of c, each defined once: its
// name, help, range and default (c's value when they are defined), how its
// value reaches c, and how c is spelled back as the command line that
// re-runs it, in that line's order (cliflag.Settings).
func (c *RunConfig) Settings() cliflag.Settings {
	r := c.Common.Settings("", "numalab-tpcc-wW.db or .duckdb")
	ss := cliflag.Settings{
		r.Engine, r.DB, r.DSN, r.ConnectTimeout,
		cliflag.IntIn("warehouses", &c.Warehouses, 1, math.MaxInt32).Flag(
			"TPC-C warehouses W, 1 or more (about 500,000 rows and 80 MB each; refused when they could never fit)"),
		cliflag.Ints("streams", &c.Streams).Flag("stream counts to sweep, e.g. 1,2,4,8"),
		cliflag.List("placement", ";", &c.Placements).Flag(
			"placement selectors separated by ';', e.g. 'smt=on;smt=off' (default: all CPUs)"),
		cliflag.Bool("spread", &c.Spread).Flag(
			"pin stream i to the i-th CPU of the placement alone (false: every stream on all of them)"),
		cliflag.IntIn("data-node", &c.DataNode, -1, 1023).Flag(
			"NUMA node to place the data pages on (-1: leave them where they are)"),
		r.Duration, r.Warmup, r.Repeat,
		cliflag.Optional(cliflag.IntIn("streams-per-cpu", &c.StreamsPerCPU, 0, 1024)).Flag(
			"leave out cells with more streams than N per logical CPU of their placement (0: none)"),
		cliflag.Optional(cliflag.Bool("augmented", &c.Augmented)).Flag(
			"the augmented variant: each transaction also computes avg(i_price) over i_id < 15000"),
		cliflag.Optional(cliflag.Bool("neighbour", &c.Neighbour)).Flag("add, per repeat, a pair of cells: one stream on " +
			"the first placement's first CPU while a memory-bandwidth neighbour reads on every other CPU, and beside it the " +
			"same stream while a control neighbour keeps those CPUs as busy without memory traffic (the model's held-out " +
			"point at another latency: the tps ratio of the pair against the latency the neighbour adds over the control)"),
		cliflag.Optional(cliflag.IntIn("neighbour-pairs", &c.NeighbourPairs, 0, 1000)).Flag(
			"with --neighbour, the pairs in the first N repeats only (0: every repeat)"),
		cliflag.IntIn("trace", &c.Trace, 0, 1_000_000).Flag(
			"record up to N calls per stream (start, end, type, stream, ok) in the store, up to 1000000"),
		r.Seed.Flag("seed for the load and the streams' random numbers"),
		cliflag.Monitor(&c.Monitor, true), cliflag.AllowSettings(&c.AllowSettings),
	}
	ss = append(ss, r.Load...)
	return append(ss, cliflag.MonitorLoad(&c.MonitorLoad, &c.Monitor))
}

// MonitorRequest is c's --monitor request.
func (c RunConfig) MonitorRequest() monitor.Request {
	return monitor.Request{Names: c.Monitor, Engine: c.Engine, DSN: c.DSN != "", AllowSettings: c.AllowSettings}
}

// CheckFlags checks and completes c as its sweep file and flags set it,
// given saying whether a flag, or its key in the sweep file, was given:
// --monitor's request, its defaults (--repeat, --monitor-load) and what it
// does not go with, or with it off its flags refused; a curve's defaults
// (cliflag.CurveDefaults), and what it does not go with; then Check.
func (c *RunConfig) CheckFlags(given func(flag, key string) bool) []error {
	var bad []error
	if len(c.Monitor) > 0 {
		if !given("repeat", "repeat") {
			c.Repeat = monitor.MinRepeat
		}
		if _, err := monitor.Check(c.MonitorRequest()); err != nil {
			bad = append(bad, err)
		}
		if c.Neighbour {
			bad = append(bad,
				setting.New("neighbour", "not with --monitor, whose cells are pairs of one stream count and placement"))
		}
		if c.Paced() || c.Curve {
			bad = append(bad,
				setting.New("monitor", "not with --rate, --think or --curve (it paces its own cells: see --monitor-load)"))
		}
		if !given("monitor-load", "monitor_load") {
			c.MonitorLoad = monitor.DefaultPacedLoad
		}
	} else {
		if c.AllowSettings {
			bad = append(bad, setting.New("allow-settings", "is for --monitor with PostgreSQL facilities on a --dsn server"))
		}
		if c.MonitorLoad != 0 {
			bad = append(bad, setting.New("monitor-load", "is for --monitor"))
		}
	}
	cliflag.CurveDefaults(&c.Load)
	if c.Curve && c.Neighbour {
		bad = append(bad, setting.New("neighbour", "not with --curve, whose cells are one stream count and placement"))
	}
	if c.Neighbour && c.Rate > 0 {
		bad = append(bad, setting.New("neighbour", "not with --rate: at a fixed arrival rate the cell beside the "+
			"neighbour completes as many calls as the cell beside the control, so their tps ratio is 1 by construction "+
			"and says nothing of latency (drop --rate; --think, a closed loop, keeps the ratio)"))
	}
	if c.NeighbourPairs > 0 && !c.Neighbour {
		bad = append(bad,
			setting.Errorf("neighbour-pairs", "%d pairs without --neighbour (add --neighbour)", c.NeighbourPairs))
	}
	return append(bad, c.Check())
}

// Argv is the one command line that gives c, 'numalab run oltp' with every
// setting spelled out, so that a stored command re-runs the same cells
// whatever the defaults become (the password of a DSN is hidden).
func (c RunConfig) Argv() []string { return c.Settings().Argv("run", "oltp") }
