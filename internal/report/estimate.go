package report

import (
	"slices"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/estimate"
)

// EstimateTable is the table of rows, for tpch and reporting alike; false
// when there are none. what, when not "", opens the caption.
func EstimateTable(id, what string, rows []estimate.Row) (Table, bool) {
	t := Table{ID: id,
		Caption: what + "Estimated speedup (the plan's cost at the lowest DOP over its cost at this DOP) " +
			"against measured speedup; flagged where they part by more than 2× or the plan changed",
		Head: []string{"query", "DOP", "plan cost", "estimated speedup", "measured speedup", "measured / estimated", "flag"}}
	streams := slices.ContainsFunc(rows, func(r estimate.Row) bool { return r.Streams > 0 })
	if streams {
		t.Head = slices.Insert(t.Head, 1, "streams")
	}
	for _, r := range rows {
		row := []string{r.Query, strconv.Itoa(r.DOP), FmtN(r.BaseCost) + " → " + FmtN(r.Cost),
			FmtF(r.Estimated, 2) + "×", FmtF(r.Measured, 2) + "×", FmtF(r.Measured/r.Estimated, 2),
			OrDash(strings.Join(r.Flags(), ", "))}
		if streams {
			row = slices.Insert(row, 1, strconv.Itoa(r.Streams))
		}
		t.Rows = append(t.Rows, row)
	}
	return t, len(t.Rows) > 0
}
