package insert

import (
	"fmt"
	"io"

	"github.com/numalab/numalab/internal/sweep"
)

const rowFormat = "%4v %7v  %-16v %10v %8v %8v %5v %8v  %v\n"

// WriteHeader prints the heading of the table WriteRow fills.
func WriteHeader(w io.Writer) {
	fmt.Fprintf(w, rowFormat, "cell", "streams", "placement", "rows/s", "MB/s", "p95 ms", "CPU %", "cs/s",
		"where the time went")
}

// WriteRow prints one measured cell: streams, placement, rows/s, MB/s,
// p95 batch latency, CPU busy %, context switches per second and where the
// time went.
func WriteRow(w io.Writer, _ sweep.Cell, m *Measured) {
	c, st := m.Cell, m.Stats
	sel := c.Placement
	if sel == "" {
		sel = "all"
	}
	cpu, cs := "-", "-"
	if c.Usage != nil {
		cpu = fmt.Sprintf("%.0f", st.CPUBusyPct)
		cs = fmt.Sprintf("%.0f", st.CtxSwitchesPerSec)
	}
	where := st.Dominant
	if c.Interrupted {
		where += " (cut short)"
	}
	if len(c.Stopped) > 0 {
		where += fmt.Sprintf(" (%s stopped: %s)", sweep.Count(len(c.Stopped), "stream"), c.Stopped[0].Reason)
	}
	fmt.Fprintf(w, rowFormat, c.Index, c.Streams, sel, fmt.Sprintf("%.0f", st.RowsPerSec),
		fmt.Sprintf("%.1f", st.MBPerSec),
		fmt.Sprintf("%.3f", c.Total.P95US/1000), cpu, cs, where)
}

// Headline is the best cell, for 'numalab runs'.
func Headline(ms []*Measured) string {
	var best *CellStats
	for _, m := range ms {
		if best == nil || m.Stats.RowsPerSec > best.RowsPerSec {
			best = &m.Stats
		}
	}
	if best == nil {
		return ""
	}
	h := fmt.Sprintf("%.0f rows/s (%.1f MB/s) at %s, %s %s", best.RowsPerSec, best.MBPerSec,
		sweep.Count(best.Streams, "stream"), best.Engine, best.Method)
	if best.Key != "" && best.Key != "none" {
		h += ", key " + best.Key
	}
	return h
}
