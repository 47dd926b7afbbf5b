package curve

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// WriteText renders cv as a table, one row per load in the order
// measured, then the knee.
func WriteText(w io.Writer, cv Curve) {
	fmt.Fprintf(w, "load curve: %d stream(s), capacity %.0f tps (closed loop: p99 %.0f µs, CPU busy %s%%), "+
		"%s arrivals; latency from each call's intended start\n",
		cv.Streams, cv.Capacity, cv.CapacityP99, pct(cv.CapacityCPU), cv.Arrivals)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "load\toffered/s\tachieved/s\tp50 µs\tp95 µs\tp99 µs\tservice p99 µs\tCPU %\tlate\tbacklog\trepeat\t")
	for _, p := range cv.Points {
		fmt.Fprintf(tw, "%.2f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%s\t%d\t%d\t%d\t\n",
			p.Fraction, p.Offered, p.Achieved, p.P50US, p.P95US, p.P99US, p.ServiceP99, pct(p.CPUPct), p.Late,
			p.Backlog, p.Repeat)
	}
	tw.Flush()
	fmt.Fprintln(w, KneeText(cv))
	for i, k := range cv.Repeats {
		fmt.Fprintf(w, "  repeat %d: %s\n", i, kneeRange(k, cv.Factor))
	}
	for _, n := range cv.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
}

// KneeText says where the knee is, in a sentence.
func KneeText(cv Curve) string {
	return fmt.Sprintf("knee (p99 above %g× its low-load floor of %.0f µs): %s",
		cv.Factor, cv.FloorUS, kneeRange(cv.Knee, cv.Factor))
}

func kneeRange(k Knee, factor float64) string {
	if !k.Found {
		return "not reached"
	}
	return fmt.Sprintf("between %.0f/s and %.0f/s (%.2f–%.2f of capacity), about %.0f/s (%.2f) on log p99",
		k.Below, k.Above, k.BelowFraction, k.AboveFraction, k.Estimate, k.EstimateFraction)
}

// Headline is the curve in one line.
func Headline(cv Curve) string {
	if !cv.Knee.Found {
		return fmt.Sprintf("capacity %.0f tps; knee not reached", cv.Capacity)
	}
	return fmt.Sprintf("capacity %.0f tps; knee at %.2f–%.2f of it",
		cv.Capacity, cv.Knee.BelowFraction, cv.Knee.AboveFraction)
}

// WriteCSV renders cv's points as CSV with a header row.
func WriteCSV(w io.Writer, cv Curve) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"fraction", "offered_per_s", "achieved_tps", "p50_us", "p95_us", "p99_us", "service_p99_us",
		"cpu_pct", "late", "due", "backlog", "repeat"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, p := range cv.Points {
		_ = cw.Write([]string{f(p.Fraction), f(p.Offered), f(p.Achieved), f(p.P50US), f(p.P95US), f(p.P99US), f(p.ServiceP99),
			f(p.CPUPct), strconv.FormatInt(p.Late, 10), strconv.FormatInt(p.Due, 10), strconv.FormatInt(p.Backlog, 10),
			strconv.Itoa(p.Repeat)})
	}
	cw.Flush()
	return cw.Error()
}

func pct(v float64) string {
	if v < 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", v)
}
