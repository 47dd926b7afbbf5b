package tpcc

import (
	"fmt"
	"io"
	"strconv"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/sweep"
)

// rowFormat lays out the table 'numalab run oltp' prints as cells finish
// (rows are printed one at a time, so widths are fixed).
const rowFormat = "%4v %7v  %-16v %-7v %9v %9v %8v %5v  %v\n"

// WriteHeader prints the heading of the table WriteRow fills.
func WriteHeader(w io.Writer) {
	fmt.Fprintf(w, rowFormat, "cell", "streams", "placement", "data", "tps", "tps/core", "p95 ms", "CPU %", "disk")
}

// WriteRow prints one measured cell: streams, placement (and whether a
// neighbour ran beside it), the data's node, tps, tps per core, p95
// latency, CPU busy % and whether the window read from disk.
func WriteRow(w io.Writer, sc sweep.Cell, c *result.Cell) {
	sel := c.Placement
	if sel == "" {
		sel = "all"
	}
	switch {
	case sc.Control:
		sel += " +control"
	case len(sc.Neighbour) > 0:
		sel += " +neighbour"
	}
	data := "-"
	if c.DataNode >= 0 {
		data = "node " + strconv.Itoa(c.DataNode)
	}
	cpu, disk := "-", "-"
	if c.Usage != nil {
		cpu = fmt.Sprintf("%.0f", c.Usage.BusyPct(c.CPUs))
		disk = "cached"
		if c.Usage.ReadFromDisk {
			disk = "READ"
		}
	}
	if c.Interrupted {
		disk += " (cut short)"
	}
	fmt.Fprintf(w, rowFormat, c.Index, c.Streams, sel, data, fmt.Sprintf("%.0f", c.TPS), fmt.Sprintf("%.0f", c.TPSPerCore),
		fmt.Sprintf("%.3f", c.Total.P95US/1000), cpu, disk)
}

// Headline is the best point (placement, data node and streams) by its
// median tps over repeats, for 'numalab runs'.
func Headline(cells []*result.Cell) string {
	// The median over a point's repeats, the figure the report's peak
	// is: the best single repeat would read higher than the report.
	type point struct {
		placement     string
		data, streams int
	}
	order, groups := stats.Group(cells, func(c *result.Cell) point { return point{c.Placement, c.DataNode, c.Streams} })
	tps := func(c *result.Cell) float64 { return c.TPS }
	var best []*result.Cell
	for _, k := range order {
		if best == nil || stats.MedianOf(groups[k], tps) > stats.MedianOf(best, tps) {
			best = groups[k]
		}
	}
	if best == nil {
		return ""
	}
	h := fmt.Sprintf("%.0f tps (%.0f tpm) at %s, %.0f tps/core",
		stats.MedianOf(best, tps), stats.MedianOf(best, func(c *result.Cell) float64 { return c.TPM }),
		sweep.Count(best[0].Streams, "stream"), stats.MedianOf(best, func(c *result.Cell) float64 { return c.TPSPerCore }))
	if len(best) > 1 {
		h += fmt.Sprintf(" (median of %d repeats)", len(best))
	}
	return h
}
