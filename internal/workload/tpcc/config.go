package tpcc

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/runconfig"
	"github.com/numalab/numalab/internal/sweep"
)

// RunConfig is a tpcc-ro sweep ('numalab run oltp'); it is stored with
// the run.
type RunConfig struct {
	// Common are the engine, its database, the seed (of the load and the
	// streams), the windows, the repeats and the pacing or load curve.
	runconfig.Common
	Warehouses int      `toml:"warehouses" json:"warehouses"`
	Streams    []int    `toml:"streams" json:"streams"`
	Placements []string `toml:"placements" json:"placements"`
	Spread     bool     `toml:"spread" json:"spread"`
	DataNode   int      `toml:"data_node" json:"data_node"` // -1: not controlled
	// StreamsPerCPU, when positive, leaves out cells with more streams
	// than that per logical CPU of their placement.
	StreamsPerCPU int  `toml:"streams_per_cpu" json:"streams_per_cpu,omitempty"`
	Augmented     bool `toml:"augmented" json:"augmented"`
	Trace         int  `toml:"trace" json:"trace"` // calls recorded per stream; 0 = none
	// Neighbour adds the neighbour cells of sweep.Spec.Neighbour, in the
	// first NeighbourPairs repeats (0: every repeat).
	Neighbour      bool `toml:"neighbour" json:"neighbour,omitempty"`
	NeighbourPairs int  `toml:"neighbour_pairs" json:"neighbour_pairs,omitempty"`
	// Monitor names the facilities whose cost 'run oltp --monitor'
	// measures (package monitor); AllowSettings lets it set PostgreSQL
	// facilities in its sessions on a --dsn server.
	Monitor       []string `toml:"monitor" json:"monitor,omitempty"`
	AllowSettings bool     `toml:"allow_settings" json:"allow_settings,omitempty"`
}

// DefaultRunConfig is 'numalab run oltp' without flags.
func DefaultRunConfig() RunConfig {
	return RunConfig{
		Common: runconfig.Common{Engine: "sqlite", Duration: 10 * time.Second, Warmup: 2 * time.Second,
			Repeat: 1, Seed: 1},
		Warehouses: 1,
		Streams:    []int{1, 2, 4},
		Placements: []string{""},
		Spread:     true,
		DataNode:   -1,
	}
}

// DefaultPath is the database file of W warehouses on an embedded engine.
func DefaultPath(engineName string, warehouses int) string {
	spec, _ := engine.Lookup(engineName)
	return fmt.Sprintf("numalab-tpcc-w%d.%s", warehouses, cmp.Or(spec.FileExt, "db"))
}

func badSetting(name, value, want string) error {
	return fmt.Errorf("-%s: %q %s", name, value, want)
}

// Check validates everything that does not need the machine beyond its
// CPU count, and fills the defaults that depend on other settings.
func (c *RunConfig) Check() error {
	errs := c.CheckEngine(engine.Titles(engine.IsServer) + " take --dsn, or none for a throwaway server")
	if c.DB == "" && !isServer(c.Engine) {
		c.DB = DefaultPath(c.Engine, c.Warehouses)
	}
	if c.Warehouses <= 0 {
		errs = append(errs, badSetting("warehouses", strconv.Itoa(c.Warehouses), "is not a positive count: want 1 or more"))
	} else if err := CheckFits(c.Engine, engine.Options{Path: c.DB, DSN: c.DSN}, c.Warehouses); err != nil {
		errs = append(errs, badSetting("warehouses", strconv.Itoa(c.Warehouses), "could never be loaded here: "+err.Error()))
	}
	if len(c.Streams) == 0 {
		errs = append(errs, badSetting("streams", "", "is empty: want e.g. 1,2,4"))
	}
	if why := sweep.TooManyStreams(c.Streams, runtime.NumCPU()); why != "" {
		errs = append(errs, badSetting("streams", fmt.Sprint(c.Streams), why))
	}
	if slices.Min(append([]int{1}, c.Streams...)) < 1 {
		errs = append(errs, badSetting("streams", fmt.Sprint(c.Streams), "has a count below 1: want e.g. 1,2,4"))
	}
	if c.StreamsPerCPU < 0 {
		errs = append(errs, badSetting("streams-per-cpu", strconv.Itoa(c.StreamsPerCPU),
			"is negative: want a cap per logical CPU, or 0 for none"))
	}
	if c.Trace < 0 {
		errs = append(errs,
			badSetting("trace", strconv.Itoa(c.Trace), "is negative: want a number of calls per stream, or 0"))
	}
	if len(c.Placements) == 0 {
		c.Placements = []string{""}
	}
	return errors.Join(append(errs, c.Common.Check())...)
}

// Spec is the configuration's sweep.
func (c RunConfig) Spec() sweep.Spec {
	return sweep.Spec{Streams: c.Streams, Placements: c.Placements, Repeat: c.Repeat, DataNode: c.DataNode,
		StreamsPerCPU: c.StreamsPerCPU, OneDataNode: isServer(c.Engine), Neighbour: c.Neighbour,
		NeighbourPairs: c.NeighbourPairs}
}

// isServer says whether the engine named name is a server (the
// registry's Server) rather than a file in this process.
func isServer(name string) bool {
	spec, _ := engine.Lookup(name)
	return spec.Server
}

// Plan is the configuration's sweep plan with its cells.
func (c RunConfig) Plan(cells []sweep.Cell) sweep.Plan {
	return sweep.Plan{Cells: cells, Warmup: c.Warmup, Duration: c.Duration, Trace: c.Trace, Monitor: drive.SysMonitor("/"),
		Pace: c.Load.Pacer(c.Seed)}
}
