package sqlscript

import (
	"fmt"
	"io"

	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/sweep"
)

// rowFormat lays out the table 'numalab run sql' prints as cells finish
// (rows are printed one at a time, so widths are fixed).
const rowFormat = "%4v %7v %4v  %-16v %9v %9v %8v %8v %7v  %v\n"

// WriteHeader prints the heading of the table WriteRow fills.
func WriteHeader(w io.Writer) {
	fmt.Fprintf(w, rowFormat, "cell", "streams", "dop", "placement", "tps", "tps/core", "p95 ms", "errors", "retries", "")
}

// WriteRow prints one measured cell: streams, DOP, placement, transactions per
// second (all scripts), per core, the p95 transaction latency, failed
// transactions and retries.
func WriteRow(w io.Writer, _ sweep.Cell, c *Cell) {
	m := &c.Cell
	sel := m.Placement
	if sel == "" {
		sel = "all"
	}
	var retries int64
	for _, s := range c.Scripts {
		retries += s.Retries
	}
	note := ""
	switch {
	case m.Interrupted:
		note = "(cut short)"
	case len(m.Stopped) > 0:
		note = "(" + plural(int64(len(m.Stopped)), "stream") + " stopped)"
	}
	fmt.Fprintf(w, rowFormat, m.Index, m.Streams, max(m.DOP, 1), sel, fmt.Sprintf("%.0f", m.TPS),
		fmt.Sprintf("%.0f", m.TPSPerCore), fmt.Sprintf("%.3f", m.Total.P95US/1000), m.Total.Errors, retries, note)
}

// WriteStatements prints a cell's per-command figures, script by script,
// as pgbench -r does: each command's mean latency in milliseconds and its
// failures, then for SQL commands the p95 and calls.
func WriteStatements(w io.Writer, c *Cell) {
	m := &c.Cell
	sel := m.Placement
	if sel == "" {
		sel = "all CPUs"
	}
	if m.DOP > 1 {
		sel += fmt.Sprintf(", DOP %d", m.DOP)
	}
	fmt.Fprintf(w, "\nstatement latencies in milliseconds and failures, cell %d (%s on %s):\n", m.Index,
		plural(int64(m.Streams), "stream"), sel)
	for _, s := range c.Scripts {
		fmt.Fprintf(w, "script %s (weight %d): %d transactions, %.3f ms mean, %d failed, %d retried\n",
			s.Name, s.Weight, s.Tx.Count, s.Tx.MeanUS/1000, s.Tx.Errors, s.Retried)
		fmt.Fprintf(w, "  %10s %10s %10s %8s  %s\n", "mean", "p95", "calls", "failed", "command")
		for _, cmd := range s.Commands {
			p95 := "-"
			if cmd.SQL {
				p95 = fmt.Sprintf("%.3f", cmd.Stats.P95US/1000)
			}
			fmt.Fprintf(w, "  %10.3f %10s %10d %8d  %s\n", cmd.Stats.MeanUS/1000, p95, cmd.Stats.Count,
				cmd.Stats.Errors, cmd.Stats.Name)
		}
	}
	if c.FirstError != "" {
		fmt.Fprintf(w, "first failure: %s\n", c.FirstError)
	}
	if c.Partial != "" {
		fmt.Fprintf(w, "note: %s\n", c.Partial)
	}
}

// Headline is the best point (placement, streams and DOP) by its median
// tps over repeats, for 'numalab runs'.
func Headline(cells []*Cell) string {
	order, groups := stats.Group(cells, pointOf)
	tps := func(c *Cell) float64 { return c.Cell.TPS }
	var best []*Cell
	for _, k := range order {
		if best == nil || stats.MedianOf(groups[k], tps) > stats.MedianOf(best, tps) {
			best = groups[k]
		}
	}
	if best == nil {
		return ""
	}
	h := fmt.Sprintf("%.0f tps at %s", stats.MedianOf(best, tps), plural(int64(best[0].Cell.Streams), "stream"))
	if d := best[0].Cell.DOP; d > 1 {
		h += fmt.Sprintf(", DOP %d", d)
	}
	if len(best) > 1 {
		h += fmt.Sprintf(" (median of %d repeats)", len(best))
	}
	return h
}
