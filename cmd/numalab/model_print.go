package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/numalab/numalab/internal/model"
)

// modelNum prints a number to 6 significant digits without exponent or
// trailing zeros: 3, 2.2, 0.05, 317.375.
func modelNum(v float64) string { return modelSig(v, 6) }

// modelSig prints v rounded to n significant digits, without exponent or
// trailing zeros.
func modelSig(v float64, n int) string {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', n, 64), 64)
	if err != nil {
		return strconv.FormatFloat(v, 'g', n, 64)
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// describeModel is the provenance header every model table starts with.
func describeModel(w io.Writer, wl model.Workload, mc model.Machine) {
	fmt.Fprintf(w, "Workload: I = %.0f instructions per transaction, m = %.4g of them wait for memory (%.0f waits per transaction)\n",
		wl.Instructions, wl.Miss, wl.Instructions*wl.Miss)
	if mc.Matrix == nil {
		fmt.Fprintf(w, "Latency: %s: local %s ns", mc.Source, modelNum(mc.LocalNS))
		if mc.RemoteNS > 0 {
			fmt.Fprintf(w, ", remote %s ns", modelNum(mc.RemoteNS))
		}
	} else {
		fmt.Fprintf(w, "Latency: %s, %d socket(s)", mc.Source, len(mc.Sockets))
	}
	if mc.BufferNS > 0 {
		fmt.Fprintf(w, ", +%s ns buffer on %d or more sockets", modelNum(mc.BufferNS), mc.BufferMinSockets)
	}
	if mc.Locality >= 0 {
		fmt.Fprintf(w, ", %s%% of accesses local\n", modelNum(100*mc.Locality))
	} else {
		fmt.Fprintf(w, ", no locality (every node equally likely)\n")
	}
}

// writeModelTable prints the capacity planner's table and the scaling
// between socket counts.
func writeModelTable(w io.Writer, t model.Table) error {
	describeModel(w, t.Workload, t.Machine)
	fmt.Fprintf(w, "Cores per socket: %d\n", t.Machine.CoresPerSocket)
	smt := false
	for _, r := range t.Rows {
		smt = smt || r.SMT > 1
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "sockets\tSMT\tGHz\tlatency ns\tlatency cycles\tMcycles/txn\ttps/core\ttotal tps\tper-core vs 1S\ttotal vs 1S\t"
	if smt {
		head += "SMT gain\t"
	}
	fmt.Fprintln(tw, head+"1S match ns\t")
	unmatched := ""
	for _, r := range t.Rows {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%.1f\t%.1f\t%.2f\t%.2f\t%.2f\t%.3f\t%.3f\t", r.Sockets, r.SMT, modelSig(r.GHz, 4),
			r.LatencyNS, r.LatencyCycles, r.CyclesPerTxn/1e6, r.TPSPerCore, r.TotalTPS, r.PerCoreVs1S, r.TotalVs1S)
		if smt {
			fmt.Fprintf(tw, "%.3f\t", r.SMTGain)
		}
		if r.Match1SNS != nil {
			fmt.Fprintf(tw, "%.1f\t\n", *r.Match1SNS)
		} else {
			fmt.Fprintf(tw, "-\t\n")
			unmatched = r.Match1SNote
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\n1S match: the latency one socket with the same cores per socket, clock and SMT needs for the same total tps.")
	if unmatched != "" {
		fmt.Fprintf(w, "-: %s.\n", unmatched)
	}
	if len(t.Scaling) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nScaling between socket counts (ratios of throughput):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "GHz\tSMT\tfrom\tto\ttotal ×\tper core ×\t")
	for _, s := range t.Scaling {
		fmt.Fprintf(tw, "%s\t%d\t%dS\t%dS\t%.3f\t%.3f\t\n", modelSig(s.GHz, 4), s.SMT, s.From, s.To, s.TotalRatio, s.PerCoreRatio)
	}
	return tw.Flush()
}

// modelG12 prints a number to 12 significant digits, enough for any use and
// free of floating-point noise.
func modelG12(v float64) string { return strconv.FormatFloat(v, 'g', 12, 64) }

// writeModelCSV prints one row per configuration.
func writeModelCSV(w io.Writer, t model.Table) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"sockets", "cores_per_socket", "smt", "ghz", "latency_ns", "latency_cycles", "cycles_per_txn",
		"tps_per_core", "total_tps", "per_core_vs_1s", "total_vs_1s", "smt_gain", "match_1s_latency_ns"})
	for _, r := range t.Rows {
		m := ""
		if r.Match1SNS != nil {
			m = modelG12(*r.Match1SNS)
		}
		cw.Write([]string{strconv.Itoa(r.Sockets), strconv.Itoa(r.CoresPerSocket), strconv.Itoa(r.SMT), modelG12(r.GHz),
			modelG12(r.LatencyNS), modelG12(r.LatencyCycles), modelG12(r.CyclesPerTxn), modelG12(r.TPSPerCore), modelG12(r.TotalTPS),
			modelG12(r.PerCoreVs1S), modelG12(r.TotalVs1S), modelG12(r.SMTGain), m})
	}
	cw.Flush()
	return cw.Error()
}

// modelPercent prints a fraction as a percentage.
func modelPercent(x float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", 100*x), "0"), ".") + "%"
}
