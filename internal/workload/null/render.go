package null

import (
	"fmt"
	"io"
	"strconv"

	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/sweep"
)

// rowFormat lays out the table 'numalab run null' prints as cells finish
// (rows are printed one at a time, so widths are fixed).
const rowFormat = "%4v %-10v %-12v %-11v %-5v %7v %9v %9v %8v %8v %8v %9v %7v\n"

// WriteHeader prints the heading of the table WriteRow fills.
func WriteHeader(w io.Writer) {
	fmt.Fprintf(w, rowFormat, "cell", "transport", "call", "pairing", "cpus", "streams", "calls/s", "/stream", "p50 µs",
		"p95 µs", "p99 µs", "cs/s", "cs/call")
}

// WriteRow prints c, a measured cell, as one row.
func WriteRow(w io.Writer, _ sweep.Cell, c *Cell) {
	m := &c.Cell
	cpus := strconv.Itoa(c.Pairing.Client)
	if c.Pairing.Backend >= 0 {
		cpus += "/" + strconv.Itoa(c.Pairing.Backend)
	}
	cut := ""
	switch {
	case m.Interrupted:
		cut = " (cut short)"
	case c.NoCall != "":
		cut = " (no call completed)"
	}
	us := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	fmt.Fprintf(w, rowFormat, m.Index, c.Transport, c.Call, c.Pairing.Name, cpus, m.Streams, fmt.Sprintf("%.0f", m.TPS),
		fmt.Sprintf("%.0f", c.PerStream), us(m.Total.P50US), us(m.Total.P95US), us(m.Total.P99US),
		fmt.Sprintf("%.0f", c.CtxSwitchesPerSec), fmt.Sprintf("%.2f", c.CtxSwitchesPerCall)+cut)
}

// Headline is the fastest and slowest cell, for 'numalab runs', with the
// call when it is not SELECT 1 (a run has one call).
func Headline(cells []*Cell) string {
	// One figure a transport and pairing: the median over its repeats.
	order, groups := stats.Group(cells, func(c *Cell) string {
		name := c.Transport
		if c.Pairing.Name != c.Transport {
			name += " " + c.Pairing.Name
		}
		if c.Cell.Streams > 1 {
			name += " " + sweep.Count(c.Cell.Streams, "stream")
		}
		return name
	})
	if len(order) == 0 {
		return ""
	}
	tps := func(c *Cell) float64 { return c.Cell.TPS }
	hi, lo := order[0], order[0]
	for _, k := range order {
		if stats.MedianOf(groups[k], tps) > stats.MedianOf(groups[hi], tps) {
			hi = k
		}
		if stats.MedianOf(groups[k], tps) < stats.MedianOf(groups[lo], tps) {
			lo = k
		}
	}
	eng := cells[0].Cell.Engine
	if cells[0].Call == CallPointSelect {
		eng += " point-select"
	}
	s := fmt.Sprintf("%s: %.0f round trips/s %s", eng, stats.MedianOf(groups[hi], tps), hi)
	if lo != hi {
		s += fmt.Sprintf(", %.0f %s", stats.MedianOf(groups[lo], tps), lo)
	}
	if n := len(groups[hi]); n > 1 {
		s += fmt.Sprintf(" (medians of %d repeats)", n)
	}
	return s
}
