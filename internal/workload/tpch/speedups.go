package tpch

import (
	"fmt"
	"strings"
)

// SpeedupLines are a's power test in brief, a line a query: its time at
// the lowest DOP, its speedup at each DOP, how many repeats the medians
// are of and its best DOP; then the number of plan changes between DOPs
// (eval's summary lists them under the TPC-H step's run).
func (a Analysis) SpeedupLines() []string {
	var lines []string
	for _, q := range a.Queries {
		if len(q.Points) == 0 {
			continue
		}
		var sp []string
		for _, p := range q.Points {
			sp = append(sp, fmt.Sprintf("DOP %d %.2fx", p.DOP, p.Speedup))
		}
		lines = append(lines, fmt.Sprintf("%s: %.4f s at DOP %d; speedup %s (median of %d); best DOP %d",
			QueryName(q.Query), q.Points[0].Seconds, q.Points[0].DOP, strings.Join(sp, ", "), q.Points[0].Repeats, q.BestDOP))
	}
	return append(lines, fmt.Sprintf("plan changes between DOPs: %d", len(a.Changes)))
}
