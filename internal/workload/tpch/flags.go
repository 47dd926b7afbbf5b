package tpch

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/dop"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/runconfig"
	"github.com/numalab/numalab/internal/sweep"
)

// DefaultRunConfig is 'numalab run tpch' without flags.
func DefaultRunConfig() RunConfig {
	all, _ := ParseQueries("1-22")
	return RunConfig{Common: runconfig.Common{Engine: "duckdb", Seed: 1, Repeat: 1, Duration: 3 * time.Second,
		Warmup: time.Second},
		SF: 0.01, DOP: []int{1}, Queries: all, Streams: []int{2}, DataNode: -1}
}

// Settings are run tpch's flags on the fields of c and on the DOP rule's
// threshold, each defined once: its name, help, range and default (the
// value when they are defined), how its value reaches c, checked as it is
// set (those of --dsn, --db and --dop against the --engine set before
// them), and how c is spelled back as the command line that re-runs it, in
// that line's order (cliflag.Settings).
func (c *RunConfig) Settings(threshold *dop.Threshold) cliflag.Settings {
	r := c.Common.Settings(cliflag.EnginesDOP(), "tpch-SF.sqlite or .duckdb")
	ss := append(r.Checked, cliflag.Settings{
		cliflag.Validated(cliflag.Float("sf", &c.SF), func(v string) error {
			if _, err := CountsFor(c.SF); err != nil || !(c.SF > 0) {
				return cliflag.Bad("sf", v, "is not a scale factor numalab can load: want a positive SF such as 0.01 or 1")
			}
			return nil
		}).Flag("scale factor: 1 is about 1 GB of flat data"),
		r.Seed.Flag("seed of the data and the queries' parameters"),
		cliflag.DOPs(&c.DOP, func() engine.Spec { spec, _ := engine.Lookup(c.Engine); return spec }).Flag(
			"degrees of parallelism to sweep, e.g. 1,2,4"),
		cliflag.Field("query", &c.Queries, func(s string) ([]int, error) {
			q, err := ParseQueries(s)
			if err != nil {
				return nil, cliflag.Bad("query", s, err.Error())
			}
			return q, nil
		}, cliflag.FormatInts).FlagDefault("1-22", "queries to run: 1-22, or a list such as 1,6,14"),
		cliflag.Validated(cliflag.Field("streams", &c.Streams, func(s string) ([]int, error) {
			if s == "0" {
				return nil, nil
			}
			return cliflag.ParseInts("streams", s, 1)
		}, func(v []int) string {
			if len(v) == 0 {
				return "0"
			}
			return cliflag.FormatInts(v)
		}), func(v string) error {
			if why := sweep.TooManyStreams(c.Streams, runtime.NumCPU()); len(c.Streams) > 0 && why != "" {
				return cliflag.Bad("streams", v, why)
			}
			return nil
		}).Flag("throughput test stream counts, e.g. 2,4; 0: no throughput test"),
		r.RepeatAs("repeats"), r.Duration, r.Warmup,
		cliflag.Optional(cliflag.Str("placement", &c.Placement)).Flag(
			"placement selector for the streams, e.g. 'node=0,smt=off' (default: not pinned)"),
		cliflag.Int("data-node", &c.DataNode).Flag("NUMA node to place the data pages on (-1: leave them where they are)"),
		cliflag.Optional(cliflag.IntIn("hog", &c.Hog, 0, runtime.NumCPU())).Flag("keep `N` of the placement's CPUs " +
			"busy with a plain CPU-bound thread during every cell (the last N its streams would take), 0 to the machine's CPUs"),
		cliflag.Field("threshold", threshold, func(s string) (dop.Threshold, error) {
			t, err := dop.ParseThreshold(s)
			if err != nil {
				return t, cliflag.Bad("threshold", s, "is not a time or a plan cost: want e.g. 0.5s or 1000")
			}
			return t, nil
		}, dop.Threshold.String).Flag("where the DOP rule of thumb parallelises: a time (0.5s), turned into a plan " +
			"cost by the run's fitted seconds per cost unit, or a plan cost (1000)"),
	}...)
	return append(ss, r.Pacing...)
}

// Resolve checks c as its flags set it (runconfig.Common.Check: the
// windows, the repeats, the pacing) and completes it with its database:
// it returns the DSN to connect with, stored without its password; an
// embedded engine's file defaults to tpch-SF.ENGINE and must have room for
// the data.
func (c *RunConfig) Resolve() (dsn string, err error) {
	if err := c.Common.Check(); err != nil {
		return "", err
	}
	if spec, _ := engine.Lookup(c.Engine); c.DB == "" && !spec.Server {
		c.DB = fmt.Sprintf("tpch-%g.%s", c.SF, c.Engine)
	}
	if c.DB != "" {
		need, _ := EstimatedBytes(c.SF, c.Engine)
		room, err := engine.RoomAt(filepath.Dir(c.DB))
		if err == nil {
			err = room.Check(need)
		}
		if err != nil {
			return "", cliflag.Bad("sf", strconv.FormatFloat(c.SF, 'g', -1, 64), "could not be loaded here: "+err.Error())
		}
	}
	return c.DSN, nil
}

// Argv is the one command line that gives c and threshold, 'numalab run
// tpch' with every setting spelled out, so that a stored command re-runs
// the same cells whatever the defaults become (the password of a DSN is
// hidden).
func (c RunConfig) Argv(threshold dop.Threshold) []string {
	return c.Settings(&threshold).Argv("run", "tpch")
}
