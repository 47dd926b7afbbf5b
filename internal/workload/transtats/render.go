package transtats

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/sweep"
)

// rowFormat lays out the table 'numalab run report' prints as cells
// finish (rows are printed one at a time, so widths are fixed).
const rowFormat = "%4v %-5v %7v %4v %11v %9v %9v %9v %9v %9v %8v %-16v %7v\n"

// WriteHeader prints the heading of the table WriteRow fills.
func WriteHeader(w io.Writer) {
	fmt.Fprintf(w, rowFormat, "cell", "query", "streams", "dop", "queries/h", "mean ms", "stdev ms", "p50 ms", "p95 ms",
		"p99 ms", "speedup", "workers ran on", "errors")
}

// WriteRow prints qc, the measurement of cell c, as one row; "workers ran
// on" is result.WorkerCPUs.Short.
func WriteRow(w io.Writer, c sweep.Cell, qc *result.QueryCell) {
	if qc.Cell == nil {
		fmt.Fprintf(w, rowFormat, c.Index, c.Type, c.Streams, c.DOP, "-", "-", "-", "-", "-", "-", "-", qc.Workers.Short(),
			"failed: "+qc.Error)
		return
	}
	t := qc.Cell.Total
	ms := func(us float64) string { return strconv.FormatFloat(us/1000, 'f', 2, 64) }
	speed := "-"
	if qc.SpeedupVsDOP1 > 0 {
		speed = fmt.Sprintf("%.2fx", qc.SpeedupVsDOP1)
	}
	errs := strconv.FormatInt(t.Errors, 10)
	if qc.Cell.Interrupted {
		errs += " (cut short)"
	}
	if t.Count == 0 {
		fmt.Fprintf(w, rowFormat, c.Index, c.Type, c.Streams, c.DOP, "0", "-", "-", "-", "-", "-", speed,
			qc.Workers.Short(), errs)
		return
	}
	fmt.Fprintf(w, rowFormat, c.Index, c.Type, c.Streams, c.DOP, fmt.Sprintf("%.0f", qc.QueriesPerHour),
		ms(t.MeanUS), ms(t.StdevUS), ms(t.P50US), ms(t.P95US), ms(t.P99US), speed, qc.Workers.Short(), errs)
}

// Headline is each query's best point (streams and DOP) by its
// median queries per hour over repeats, with its speedup as the report
// has it (that median over DOP 1's), for 'numalab runs'; with --hog, the
// DOP that won beside the busy CPUs.
func Headline(cfg RunConfig, cells []*result.QueryCell) string {
	type point struct {
		query        string
		streams, dop int
	}
	started := slices.DeleteFunc(slices.Clone(cells), func(c *result.QueryCell) bool { return c.Cell == nil })
	order, groups := stats.Group(started,
		func(c *result.QueryCell) point { return point{c.Query, c.Cell.Streams, c.Cell.DOP} })
	qph := func(c *result.QueryCell) float64 { return c.QueriesPerHour }
	var parts []string
	for _, q := range cfg.Queries {
		var best *point
		for i, k := range order {
			if k.query == q && (best == nil || stats.MedianOf(groups[k], qph) > stats.MedianOf(groups[*best], qph)) {
				best = &order[i]
			}
		}
		if best == nil {
			continue
		}
		m := stats.MedianOf(groups[*best], qph)
		p := fmt.Sprintf("%s %.0f queries/h at %s DOP %d", q, m, sweep.Count(best.streams, "stream"), best.dop)
		if base := groups[point{q, best.streams, 1}]; best.dop != 1 && len(base) > 0 && stats.MedianOf(base, qph) > 0 {
			p += fmt.Sprintf(" (%.2fx DOP 1)", m/stats.MedianOf(base, qph))
		}
		if n := len(groups[*best]); n > 1 {
			p += fmt.Sprintf(", median of %d", n)
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%s N=%d%s: %s", cfg.Engine, cfg.Rows, busyLabel(started), strings.Join(parts, "; "))
}

// busyLabel says how many CPUs the busy threads of --hog kept busy in the
// cells that ran, from the CPUs each cell records: ", 2 CPUs busy (--hog)",
// ", 1 to 2 CPUs busy (--hog)" when cells differed, "" with none.
func busyLabel(cells []*result.QueryCell) string {
	lo, hi := 0, 0
	for i, c := range cells {
		n := len(c.Hog)
		if i == 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
	}
	switch {
	case hi == 0:
		return ""
	case lo == hi:
		return fmt.Sprintf(", %s busy (--hog)", sweep.Count(hi, "CPU"))
	}
	return fmt.Sprintf(", %d to %d CPUs busy (--hog)", lo, hi)
}
