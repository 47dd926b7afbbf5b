// Package estimate sets the optimizer's estimated speedup beside the
// measured one, one Row per query and DOP above the lowest, with what is
// flagged and a text table of them. planest computes the rows' estimates
// from the plans it reads; this package holds no engine and reads no plan,
// so that the report can show the rows without them.
package estimate

import (
	"fmt"
	"io"
	"strings"
)

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
		f = append(f, fmt.Sprintf("measured %s the estimate",
			map[bool]string{true: "over 2x", false: "under half"}[r.Measured > r.Estimated]))
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
	fmt.Fprintf(w,
		"\nEstimated speedup (plan cost at the lowest DOP / at this DOP) against measured; flagged beyond 2x either way:\n")
	head := fmt.Sprintf("%-5s %4s %12s %12s %10s %10s %9s  %s",
		"query", "dop", "cost lowest", "cost here", "estimated", "measured", "meas/est", "flag")
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
