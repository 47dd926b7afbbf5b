package insert

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

// KindCellStats is a cell's load figures, stored after its result.Cell.
const KindCellStats result.Kind[CellStats] = "insert.CellStats"

// KindFinding is a cell that loaded less than a cell of fewer streams.
const KindFinding result.Kind[Finding] = "insert.Finding"

// CellStats are one cell's load figures. Rows and bytes count batches
// that completed inside the measured window.
type CellStats struct {
	Index     int    `json:"index"` // the result.Cell's
	Engine    string `json:"engine"`
	Method    string `json:"method"` // "copy", "insert" (PostgreSQL, SQLite), "appender" (DuckDB)
	Indexes   bool   `json:"indexes"`
	Key       string `json:"key,omitempty"` // Keys; "" in runs stored before it
	Streams   int    `json:"streams"`
	Placement string `json:"placement"`
	Repeat    int    `json:"repeat"`
	Batch     int    `json:"batch"` // rows per batch

	Rows       int64   `json:"rows"`
	RowsPerSec float64 `json:"rows_per_s"`
	MBPerSec   float64 `json:"mb_per_s"` // RowBytes per row, 10^6 bytes
	// CPUBusyPct is the placement's CPUs' busy share; CtxSwitchesPerSec
	// the machine's (both from sysmon; 0 when not monitored).
	CPUBusyPct        float64 `json:"cpu_busy_pct"`
	CtxSwitchesPerSec float64 `json:"ctx_switches_per_s"`
	// LockWaitPct is SQLite's: the share of the streams' time spent
	// waiting in BEGIN IMMEDIATE for the one write lock.
	LockWaitPct float64 `json:"lock_wait_pct,omitempty"`
	// Waits are PostgreSQL's loading backends' wait events, sampled from
	// pg_stat_activity, most frequent first; or MariaDB's loader threads'
	// waits from performance_schema, longest first.
	Waits []WaitShare `json:"waits,omitempty"`
	// Dominant says in words where the streams' time went.
	Dominant string `json:"dominant"`
}

// WaitShare is one wait event's share. On PostgreSQL Event is
// "type:event", or waitCPU for an active backend without one, and Pct
// its share of the samples. On MariaDB Event is a performance_schema
// instrument, Count and Seconds the waits and their time summed over the
// streams in the window, and Pct that time's share of the streams' time.
type WaitShare struct {
	Event   string  `json:"event"`
	Samples int     `json:"samples,omitempty"`
	Count   int64   `json:"count,omitempty"`
	Seconds float64 `json:"seconds,omitempty"`
	Pct     float64 `json:"pct"`
}

// Finding is a cell whose throughput fell below that of a cell with
// fewer streams on the same placement and repeat.
type Finding struct {
	Index          int     `json:"index"` // the cell's
	Placement      string  `json:"placement"`
	FromStreams    int     `json:"from_streams"`
	ToStreams      int     `json:"to_streams"`
	FromRowsPerSec float64 `json:"from_rows_per_s"`
	ToRowsPerSec   float64 `json:"to_rows_per_s"`
	Dominant       string  `json:"dominant"`
	Text           string  `json:"text"`
}

// dropRatio is the fall that makes a finding: 5% less throughput, above
// the usual cell-to-cell noise of a short window.
const dropRatio = 0.95

// findDrop compares a cell with the best earlier cell of fewer streams
// on its placement and repeat.
func findDrop(seen []CellStats, c CellStats) (Finding, bool) {
	var best *CellStats
	for i := range seen {
		p := &seen[i]
		if p.Placement == c.Placement && p.Repeat == c.Repeat && p.Streams < c.Streams &&
			(best == nil || p.RowsPerSec > best.RowsPerSec) {
			best = p
		}
	}
	if best == nil || c.RowsPerSec >= dropRatio*best.RowsPerSec {
		return Finding{}, false
	}
	sel := c.Placement
	if sel == "" {
		sel = "all CPUs"
	}
	f := Finding{Index: c.Index, Placement: c.Placement, FromStreams: best.Streams, ToStreams: c.Streams,
		FromRowsPerSec: best.RowsPerSec, ToRowsPerSec: c.RowsPerSec, Dominant: c.Dominant}
	f.Text = fmt.Sprintf("%s on %s: %s load %.0f rows/s, %.0f%% less than %s (%.0f rows/s); dominant wait: %s",
		c.Engine, sel, sweep.Count(c.Streams, "stream"), c.RowsPerSec, 100*(1-c.RowsPerSec/best.RowsPerSec),
		sweep.Count(best.Streams, "stream"), best.RowsPerSec, c.Dominant)
	return f, true
}

// waitShares orders sample counts, most frequent first (then by name).
func waitShares(samples map[string]int) []WaitShare {
	total := 0
	for _, n := range samples {
		total += n
	}
	var out []WaitShare
	for ev, n := range samples {
		out = append(out, WaitShare{Event: ev, Samples: n, Pct: 100 * float64(n) / float64(total)})
	}
	sortShares(out)
	return out
}

// sortShares orders shares by their Pct, largest first (then by name).
func sortShares(ws []WaitShare) {
	slices.SortFunc(ws, func(a, b WaitShare) int {
		return cmp.Or(cmp.Compare(b.Pct, a.Pct), cmp.Compare(a.Event, b.Event))
	})
}
