package tpch

import (
	"encoding/json"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/runconfig"
	"github.com/numalab/numalab/internal/sweep"
)

// RunConfig is a tpch sweep ('numalab run tpch'); it is stored with the run.
type RunConfig struct {
	// Common are the engine, its database, the seed (of the data and the
	// queries' parameters), the windows, the repeats and the pacing. A
	// paced run is stored as kind tpch-paced: its queries per hour are its
	// schedule's.
	runconfig.Common
	SF      float64 `json:"sf"`
	DOP     []int   `json:"dop"`
	Queries []int   `json:"queries"`
	Streams []int   `json:"streams,omitempty"` // throughput test stream counts; none: power test only
	// Placement is the streams' CPU selector; "" leaves them unpinned.
	Placement string `json:"placement,omitempty"`
	DataNode  int    `json:"data_node"`
	// Hog keeps that many of the placement's CPUs busy with a plain
	// CPU-bound thread during every cell (place.HogCPUs).
	Hog int `json:"hog,omitempty"`
}

// UnmarshalJSON reads a stored configuration, and the repeats of one
// stored before they were Common's "repeat", as "repeats".
func (c *RunConfig) UnmarshalJSON(b []byte) error {
	type plain RunConfig
	var old struct {
		Repeats *int `json:"repeats"`
	}
	if err := json.Unmarshal(b, (*plain)(c)); err != nil {
		return err
	}
	if err := json.Unmarshal(b, &old); err == nil && old.Repeats != nil && c.Repeat == 0 {
		c.Repeat = *old.Repeats
	}
	return nil
}

// Spec is the power test's sweep: per query, per DOP, the repeats.
func (c RunConfig) Spec() sweep.Spec {
	var types []string
	for _, q := range c.Queries {
		types = append(types, QueryName(q))
	}
	return sweep.Spec{Streams: []int{1}, Placements: []string{c.Placement}, DOPs: c.DOP, Types: types,
		Repeat: c.Repeat, DataNode: c.DataNode, Unpinned: true, OneDataNode: isServer(c.Engine)}
}

// ThroughputSpec is the throughput test's sweep: streams × DOP, every query.
func (c RunConfig) ThroughputSpec() sweep.Spec {
	return sweep.Spec{Streams: c.Streams, Placements: []string{c.Placement}, DOPs: c.DOP,
		Repeat: c.Repeat, DataNode: c.DataNode, Unpinned: true, OneDataNode: isServer(c.Engine)}
}

// Plan is the sweep plan with its cells.
func (c RunConfig) Plan(cells []sweep.Cell) sweep.Plan {
	return sweep.Plan{Cells: cells, Warmup: c.Warmup, Duration: c.Duration, MaxConsecutiveErrors: 3,
		Monitor: drive.SysMonitor("/"), Pace: c.Pacing.Pacer(c.Seed)}
}
