package monitor

import (
	"fmt"
	"io"
	"time"

	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/sweep"
)

const rowFormat = "%4v  %-21v %-5v %9v %8v\n"

// WriteHeader prints what a monitoring run of kind (RunKind, NullRunKind)
// measures (its one cell, the repeats per facility and side, the window)
// and the heading of the table WriteRow fills.
func WriteHeader(w io.Writer, kind string, cell sweep.Cell, repeat int, window time.Duration) {
	fmt.Fprintf(w, "%s: %s, %s per facility and side, %v windows\n", kind, cell, sweep.Count(repeat, "repeat"), window)
	fmt.Fprintf(w, rowFormat, "cell", "facility", "state", "tps", "p95 ms")
}

// WriteRow prints one measured cell: its facility, on or off, tps and p95
// latency.
func WriteRow(w io.Writer, _ sweep.Cell, c Cell) {
	cut := ""
	if c.Cell.Interrupted {
		cut = " (cut short)"
	}
	fmt.Fprintf(w, rowFormat, c.Cell.Index, c.Facility, c.State(), perSecond(c.Cell.TPS),
		fmt.Sprintf("%.3f%s", c.Cell.Total.P95US/1000, cut))
}

// WriteAnalysis prints the cost of each facility.
func WriteAnalysis(w io.Writer, an Analysis) {
	const f = "%-21v %16v %16v %-28v  %v\n"
	fmt.Fprintf(w,
		"\nWhat each facility costs: tps on/off, Hodges-Lehmann estimate with its %.0f%% interval; cost = 1 - ratio\n",
		100*stats.Confidence)
	fmt.Fprintf(w, f, "facility", "tps off (median)", "tps on (median)", "ratio on/off [interval] n", "cost")
	for _, o := range an.Overheads {
		r := fmt.Sprintf("%.3f n=%d+%d", o.Ratio.Estimate, o.Ratio.NA, o.Ratio.NB)
		if o.Ratio.HasCI {
			r = fmt.Sprintf("%.3f [%.3f, %.3f] n=%d+%d", o.Ratio.Estimate, o.Ratio.Lo, o.Ratio.Hi, o.Ratio.NA, o.Ratio.NB)
		}
		fmt.Fprintf(w, f, o.Facility, perSecond(o.Off.Median), perSecond(o.On.Median), r, o.Cost())
	}
}

// perSecond prints a rate: whole from 100 on, else three significant
// digits, so that a reporting query's fraction of a call a second shows.
func perSecond(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// Headline names the costliest facility shown to cost, for 'numalab runs'.
func Headline(an Analysis) string {
	var top *Overhead
	for i, o := range an.Overheads {
		if o.Verdict == Costs && (top == nil || o.Ratio.Estimate < top.Ratio.Estimate) {
			top = &an.Overheads[i]
		}
	}
	if top == nil {
		return fmt.Sprintf("no cost shown in %d facilities", len(an.Overheads))
	}
	return fmt.Sprintf("%s %s", top.Facility, top.Cost())
}
