package tpch

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/estimate"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/sweep"
)

// rowFormat lays out the rows WriteRow prints as cells finish.
const rowFormat = "%4v %-10v %5v %7v %4v %4v %9v %7v %10v %12v %-16v %v\n"

// WriteRowHeader prints the header of the rows WriteRow prints.
func WriteRowHeader(w io.Writer) {
	fmt.Fprintf(w, rowFormat, "cell", "test", "query", "streams", "dop", "used", "seconds", "rows", "queries/h",
		"cost", "workers ran on", "errors")
}

// WriteRow prints tc, the measurement of the sweep's cell c, as one row.
func WriteRow(w io.Writer, c sweep.Cell, tc *Cell) {
	q, used, secs, rows, cost := "all", "-", "-", "-", "-"
	if tc.Mode == ModePower {
		q = QueryName(tc.Query)
		rows = strconv.FormatInt(tc.Rows, 10)
		if tc.Seconds > 0 {
			secs = strconv.FormatFloat(tc.Seconds, 'f', 4, 64)
		}
		if tc.TimedByExplain {
			// No run finished in the window: the time is EXPLAIN
			// ANALYZE's one run, which returns no rows.
			secs, rows = secs+" (explain)", "-"
		}
	} else if tc.SlowestSeconds > 0 {
		secs = fmt.Sprintf("%.4f (slowest %s)", tc.SlowestSeconds, QueryName(tc.Slowest))
	}
	if tc.Used > 0 {
		used = strconv.Itoa(tc.Used)
	}
	if tc.Plan != nil && tc.Plan.Cost > 0 {
		cost = strconv.FormatFloat(tc.Plan.Cost, 'f', 0, 64)
	}
	errs := "0"
	switch {
	case tc.Cell == nil:
		errs = "failed: " + tc.Error
	case tc.Cell.Interrupted:
		errs = strconv.FormatInt(tc.Cell.Total.Errors, 10) + " (cut short)"
	default:
		errs = strconv.FormatInt(tc.Cell.Total.Errors, 10)
	}
	fmt.Fprintf(w, rowFormat, c.Index, tc.Mode, q, c.Streams, c.DOP, used, secs, rows,
		fmt.Sprintf("%.0f", tc.QueriesPerHour), cost, tc.Workers.Short(), errs)
}

// Headline is the run's best DOP for queries per hour at each stream
// count, for 'numalab runs'.
func Headline(cfg RunConfig, an Analysis) string {
	h := fmt.Sprintf("%s SF %g: %d queries", cfg.Engine, cfg.SF, len(an.Queries))
	swept, faster, lowest := 0, 0, 0
	for _, q := range an.Queries {
		if len(q.Points) > 1 {
			swept++
			lowest = q.Points[0].DOP
			if q.BestDOP > lowest {
				faster++
			}
		}
	}
	if swept > 0 {
		h += fmt.Sprintf("; %d of %d fastest above DOP %d", faster, swept, lowest)
	}
	if an.Advice != nil {
		for _, s := range an.Advice.PerStreams {
			if s.BestQPH == 0 {
				h += fmt.Sprintf("; %s: no query finished in a median window", sweep.Count(s.Streams, "stream"))
				continue
			}
			h += fmt.Sprintf("; %s: DOP %d best for queries/h", sweep.Count(s.Streams, "stream"), s.BestQPH)
		}
	}
	return h
}

// WriteAnalysis prints the analysis after the cells: speedup against DOP,
// plan changes, the cost model against the clock with the storage advice
// (StorageAdvice's lines), and the server-wide DOP.
func WriteAnalysis(w io.Writer, an Analysis, storage []string) {
	fmt.Fprintf(w, "\nSpeedup against DOP (TPC-H-derived, not audited), median over repeats:\n")
	fmt.Fprintf(w, "%-5s %-40s %8s %10s %10s %s\n", "query", "speedup at each DOP", "best DOP",
		"stops at", "rule DOP", "cost")
	for _, q := range an.Queries {
		var sp []string
		for _, p := range q.Points {
			s := fmt.Sprintf("%d:%.2fx", p.DOP, p.Speedup)
			if p.Used > 0 && p.Used != p.DOP {
				s += fmt.Sprintf("(ran %d)", p.Used)
			}
			if p.Explained {
				s += "(explain)"
			}
			sp = append(sp, s)
		}
		stops, rule := "-", "-"
		if q.StopsAt > 0 {
			stops = strconv.Itoa(q.StopsAt)
		}
		if q.Rule != nil {
			rule = strconv.Itoa(q.Rule.DOP)
		}
		fmt.Fprintf(w, "%-5s %-40s %8d %10s %10s %.0f\n", QueryName(q.Query), strings.Join(sp, " "), q.BestDOP,
			stops, rule, q.Cost)
	}
	estimate.WriteTable(w, an.Estimates())
	fmt.Fprintf(w, "\nPlan changes between consecutive DOPs: %d\n", len(an.Changes))
	for _, c := range an.Changes {
		fmt.Fprintf(w, "  %s\n", c)
	}
	if f := an.Cost; f != nil {
		fmt.Fprintf(w, "\nCost model against the clock at DOP %d: %.3g s per unit of %s (median ratio)\n",
			f.DOP, f.SecondsPerUnit, f.Unit)
		for _, p := range f.Largest(3) {
			fmt.Fprintf(w, "  largest error: %s: cost %.0f, %.4f s, %.2fx the fitted time\n", QueryName(p.Query),
				p.Cost, p.Seconds, p.Error)
		}
		var off []string
		for _, q := range f.Off {
			off = append(off, QueryName(q))
		}
		fmt.Fprintf(w, "  more than 2x off the line: %s; operators they all have: %s\n", listOrNone(off),
			listOrNone(f.Common))
	}
	for _, s := range storage {
		fmt.Fprintf(w, "  %s\n", s)
	}
	writeRule(w, an)
	if a := an.Advice; a != nil {
		writeAdvice(w, a)
	}
}

// writeRule prints the DOP rule of thumb's ladder, in cost units and, when
// its threshold was a time, in seconds by the fit.
func writeRule(w io.Writer, an Analysis) {
	if an.RuleNote != "" {
		fmt.Fprintf(w, "\n%s\n", an.RuleNote)
	}
	r := an.Rule
	if r == nil {
		return
	}
	fmt.Fprintf(w, "\nDOP rule of thumb (the 'rule DOP' column): serial below cost %s", costText(r.Threshold))
	if r.SecondsPerUnit > 0 {
		fmt.Fprintf(w, ", the threshold %s s at the fitted %.3g s per unit", model.Num(r.ThresholdSeconds), r.SecondsPerUnit)
	}
	fmt.Fprintf(w, "; at most %d (one socket's cores)\n", r.CoresPerSocket)
	for _, g := range an.Rungs() {
		fmt.Fprintf(w, "  DOP %d from cost %s", g.DOP, costText(g.Cost))
		if g.Seconds > 0 {
			fmt.Fprintf(w, " (%.3g s)", g.Seconds)
		}
		fmt.Fprintln(w)
	}
}

// costText is a plan cost to 4 significant digits, whole from 1000 on.
func costText(c float64) string {
	if c >= 1000 {
		return strconv.FormatFloat(c, 'f', 0, 64)
	}
	return strconv.FormatFloat(c, 'g', 4, 64)
}

// writeAdvice prints the server-wide DOP per stream count.
func writeAdvice(w io.Writer, a *DOPAdvice) {
	fmt.Fprintf(w,
		"\nServer-wide DOP from the throughput test (queries per hour, all streams; median, range over repeats):\n")
	for _, s := range a.PerStreams {
		var ps []string
		for _, p := range s.Points {
			if p.QPHMax == 0 {
				ps = append(ps, fmt.Sprintf("DOP %d: no query finished in the window", p.DOP))
				continue
			}
			ps = append(ps, fmt.Sprintf("DOP %d: %.0f [%.0f–%.0f], slowest %.3f s (%s)",
				p.DOP, p.QPH, p.QPHMin, p.QPHMax, p.Slowest, QueryName(p.SlowestQuery)))
		}
		if s.BestQPH == 0 {
			fmt.Fprintf(w, "  %s: %s\n    nothing to choose by: at every DOP the median repeat finished no query in its "+
				"window (lengthen --duration, or leave the longest queries out with --query)\n", sweep.Count(s.Streams, "stream"),
				strings.Join(ps, "; "))
			continue
		}
		clear := "within the repeats' spread of the next best"
		switch {
		case s.Points[0].Repeats < 2:
			clear = "one repeat: no spread measured, use --repeats 3 for one"
		case s.Clear:
			clear = "clear of the others' ranges over the repeats"
		}
		fmt.Fprintf(w, "  %s: %s\n    most queries per hour at DOP %d (%s); shortest slowest query at DOP %d\n",
			sweep.Count(s.Streams, "stream"), strings.Join(ps, "; "), s.BestQPH, clear, s.BestSlowest)
	}
	switch {
	case a.Serial > 0:
		fmt.Fprintf(w, "  with %d or more concurrent streams, DOP 1 gives the most queries per hour\n", a.Serial)
	case a.NeverSerial():
		fmt.Fprintf(w, "  at no stream count measured does DOP 1 give the most queries per hour\n")
	}
}

// listOrNone joins s with commas, or says "none".
func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
