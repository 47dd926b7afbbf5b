package transtats

import (
	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/runconfig"
	"github.com/numalab/numalab/internal/sweep"
)

// RunConfig is a transtats sweep ('numalab run report'); it is stored
// with the run.
type RunConfig struct {
	// Common are the engine, its database, the seed of the streams'
	// random numbers (P2's t), the windows and the repeats (0, in a run
	// stored before repeats, is once), and the pacing: Load's Pacing paces
	// every cell's queries (think time, arrival rate), the zero value
	// running closed loops. Its Rate is the open loop's queries per second
	// (--arrival-rate), not the data's Rate below (--rate). A paced run is
	// stored as kind report-paced. Its MonitorLoad is --monitor's paced
	// half; run report has no load curve.
	runconfig.Common
	Rows      int64    `json:"rows"`
	Rate      int64    `json:"rate"`
	Streams   []int    `json:"streams"`
	DOP       []int    `json:"dop"`
	Queries   []string `json:"queries"`
	Placement string   `json:"placement,omitempty"`
	// Hog keeps that many of the placement's CPUs busy with a plain
	// CPU-bound thread during every cell (place.HogCPUs).
	Hog int `json:"hog,omitempty"`
	// DataNode is the node the data is placed on (engine.PlaceData); -1
	// leaves it where it is. A placement's data=nodeN wins.
	DataNode int `json:"data_node"`
	// Monitor names the facilities whose cost 'run report --monitor'
	// measures (package monitor); AllowSettings lets it set them in its
	// sessions on a --dsn server.
	Monitor       []string `json:"monitor,omitempty"`
	AllowSettings bool     `json:"allow_settings,omitempty"`
}

// Spec is the configuration's sweep: per repeat, per query, per stream
// count, the DOPs in the order given.
func (c RunConfig) Spec() sweep.Spec {
	return sweep.Spec{Streams: c.Streams, Placements: []string{c.Placement}, DOPs: c.DOP, Types: c.Queries,
		Repeat: c.Repeats(), DataNode: c.DataNode, Unpinned: true, OneDataNode: isServer(c.Engine)}
}

// Plan is the configuration's sweep plan with its cells.
func (c RunConfig) Plan(cells []sweep.Cell) sweep.Plan {
	return sweep.Plan{Cells: cells, Warmup: c.Warmup, Duration: c.Duration,
		MaxConsecutiveErrors: maxErrors, Monitor: drive.SysMonitor("/"), Pace: c.Pacing.Pacer(c.Seed)}
}
