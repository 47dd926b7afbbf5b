package eval

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/evalplan"
	"github.com/numalab/numalab/internal/workload/tpch"
)

// roomAt says which budget has room for a step left out: b, or none up
// to searched; in whole minutes, as --budget takes them.
func roomAt(b, searched time.Duration) string {
	if b == 0 {
		return fmt.Sprintf(" (nor does any budget up to %dm)", searched/time.Minute)
	}
	return fmt.Sprintf(" (--budget %dm has)", b/time.Minute)
}

// writePlan says what the budget bought.
func writePlan(w io.Writer, plan evalplan.Plan) {
	nb := ""
	if plan.Neighbour {
		nb = fmt.Sprintf(" (and in %s a pair, one stream with a memory-bandwidth neighbour and with a control neighbour: "+
			"the held-out point at another latency)", repeatsWord(plan.Pairs(), plan.Repeat))
	}
	var qs []string
	for _, q := range plan.TPCHQueries {
		qs = append(qs, tpch.QueryName(q))
	}
	fmt.Fprintf(w,
		"plan: null transaction on SQLite and PostgreSQL (%s, every client/backend pairing), %v+%v per cell x%d repeats%s\n",
		strings.Join(plan.NullTransports, " and "), plan.NullWarm, plan.NullCell, plan.NullRepeat,
		repeatNote(plan.NullRepeat))
	fmt.Fprintf(w, "      tpcc-ro W=%d, streams %s (at most %d per logical CPU of each placement), "+
		"placements %q, %v+%v per cell x%d repeats%s%s\n",
		plan.Warehouses, cliflag.FormatInts(plan.Streams), plan.StreamsPerCPU, plan.Placements, plan.OLTPWarmup,
		plan.OLTPCell, plan.Repeat, nb, repeatNote(plan.Repeat))
	if plan.Server.On {
		fmt.Fprintf(w, "      MariaDB: null transaction as PostgreSQL's; tpcc-ro W=1, streams %s, %v+%v per cell x1\n",
			cliflag.FormatInts(plan.Server.Streams), plan.Server.Warm, plan.Server.Cell)
	} else if evalplan.HaveMariaDB() == nil {
		fmt.Fprintf(w, "      MariaDB: left out, the budget has no room for its steps on this machine%s\n",
			roomAt(plan.Server.Budget, plan.RoomSearched))
	}
	fmt.Fprintf(w, "      transtats %d rows on DuckDB, DOP %s, %v+%v per cell x%d repeats%s\n",
		plan.Rows, cliflag.FormatInts(plan.DOPs), plan.QueryWarm, plan.QueryCell, plan.QueryRepeat,
		repeatNote(plan.QueryRepeat))
	writeSMTDOPPlan(w, plan)
	fmt.Fprintf(w, "      %s: %d pairs of %v cells, the tpcc-ro image in 4 KiB then 2 MiB pages, "+
		"each transaction cold then hot, the speed sentinel around each\n",
		pageStepTitle, plan.PagePairs, plan.PageCell)
	when := ""
	if !plan.ServerPagesPlanned {
		when = ", when what is left of the budget holds it" + roomAt(plan.ServerPagesBudget, plan.RoomSearched)
	}
	fmt.Fprintf(w, "      %s on the server: the same cells on %s, its own buffers in 4 KiB then 2 MiB pages "+
		"(two throwaway servers, W=1): its own A and M%s\n",
		pageStepTitle, plan.ServerPages, when)
	if len(qs) == 0 {
		fmt.Fprintf(w, "      TPC-H-derived: left out, the budget has no room for it on this machine%s\n\n",
			roomAt(plan.TPCHBudget, plan.RoomSearched))
		return
	}
	fmt.Fprintf(w, "      TPC-H-derived SF %g on DuckDB, %s at DOP %s, %v+%v per cell x%d repeats\n\n",
		plan.TPCHSF, strings.Join(qs, ","), cliflag.FormatInts(plan.DOPs), plan.TPCHWarm, plan.TPCHCell, plan.TPCHRepeat)
}

// repeatNote says, when the budget allowed fewer than evalplan.Repeats
// repeats of a step's cells, why its findings cannot tell: the U test's
// smallest p with n a side is 2/C(2n, n) (1.00 at 1, 0.33 at 2, 0.10 at
// 3), above 0.05.
func repeatNote(n int) string {
	if n >= evalplan.Repeats {
		return ""
	}
	c := 1.0 // C(2n, n)
	for i := 1; i <= n; i++ {
		c = c * float64(n+i) / float64(i)
	}
	return fmt.Sprintf(" (the budget allows no more: with %d a side a U test's smallest p is %.2f, "+
		"so the findings comparing these cells cannot tell; %d a side need a larger --budget)",
		n, min(2/c, 1), evalplan.Repeats)
}

// repeatsWord says which repeats have something: "every repeat", "the
// first 2 repeats".
func repeatsWord(n, of int) string {
	switch {
	case n >= of:
		return "every repeat"
	case n == 1:
		return "the first repeat"
	}
	return fmt.Sprintf("the first %d repeats", n)
}
