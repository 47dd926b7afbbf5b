package planest

import (
	"fmt"
	"io"
	"strings"
)

// DepartFactor is how far measured and estimated speedup may part before
// a point is flagged.
const DepartFactor = 2

// Prices reports whether a plan cost in unit prices parallelism:
// PostgreSQL's alone. DuckDB's stand-in (its estimated rows summed over the
// operators) does not change with the thread count, and SQLite gives no
// cost.
func Prices(unit string) bool { return unit == CostPostgres }

// Speedup is the optimizer's estimated speedup at a DOP whose plan costs
// cost, against base at the lowest DOP, and whether the measured speedup
// departs from it by more than DepartFactor either way; 0 and false when
// unit does not price parallelism or a cost is missing.
func Speedup(unit string, base, cost, measured float64) (est float64, departs bool) {
	if !Prices(unit) || base <= 0 || cost <= 0 {
		return 0, false
	}
	est = base / cost
	r := measured / est
	return est, measured > 0 && (r > DepartFactor || r < 1.0/DepartFactor)
}

// Row is one query at one DOP above the lowest: the plan's cost at the
// lowest DOP and here, the estimated and measured speedups, and what is
// flagged.
type Row struct {
	Query       string  `json:"query"`
	Streams     int     `json:"streams,omitempty"` // run report's cells; 0 for tpch's power test (one stream)
	DOP         int     `json:"dop"`
	BaseCost    float64 `json:"cost_lowest_dop"`
	Cost        float64 `json:"cost"`
	Estimated   float64 `json:"estimated_speedup"`
	Measured    float64 `json:"measured_speedup"`
	Departs     bool    `json:"departs_from_estimate,omitempty"`
	PlanChanged bool    `json:"plan_changed,omitempty"`
}

// Flags names what is flagged at r: a measured speedup more than 2× from
// the estimate, a plan that changed from the previous DOP.
func (r Row) Flags() []string {
	var f []string
	if r.Departs {
		f = append(f, fmt.Sprintf("measured %s the estimate", map[bool]string{true: "over 2x", false: "under half"}[r.Measured > r.Estimated]))
	}
	if r.PlanChanged {
		f = append(f, "plan changed")
	}
	return f
}

// WriteTable prints rows after a run's cells; nothing when there are none.
func WriteTable(w io.Writer, rows []Row) {
	if len(rows) == 0 {
		return
	}
	streams := false
	for _, r := range rows {
		streams = streams || r.Streams > 0
	}
	fmt.Fprintf(w, "\nEstimated speedup (plan cost at the lowest DOP / at this DOP) against measured; flagged beyond 2x either way:\n")
	head := fmt.Sprintf("%-5s %4s %12s %12s %10s %10s %9s  %s", "query", "dop", "cost lowest", "cost here", "estimated", "measured", "meas/est", "flag")
	if streams {
		head = fmt.Sprintf("%-5s %7s", "query", "streams") + head[5:]
	}
	fmt.Fprintln(w, head)
	for _, r := range rows {
		q := fmt.Sprintf("%-5s", r.Query)
		if streams {
			q = fmt.Sprintf("%-5s %7d", r.Query, r.Streams)
		}
		line := fmt.Sprintf("%s %4d %12.0f %12.0f %9.2fx %9.2fx %9.2f  %s", q, r.DOP, r.BaseCost, r.Cost,
			r.Estimated, r.Measured, r.Measured/r.Estimated, strings.Join(r.Flags(), ", "))
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
}
