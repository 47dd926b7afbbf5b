package model

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Describe prints the provenance header every model table starts with.
func Describe(w io.Writer, wl Workload, mc Machine) {
	fmt.Fprintf(w,
		"Workload: I = %.0f instructions per transaction, m = %.4g of them wait for memory (%.0f waits per transaction)\n",
		wl.Instructions, wl.Miss, wl.Instructions*wl.Miss)
	if mc.Matrix == nil {
		fmt.Fprintf(w, "Latency: %s: local %s ns", mc.Source, Num(mc.LocalNS))
		if mc.OneSocketNS > 0 {
			fmt.Fprintf(w, " (one socket %s ns)", Num(mc.OneSocketNS))
		}
		if mc.RemoteNS > 0 {
			fmt.Fprintf(w, ", remote %s ns", Num(mc.RemoteNS))
		}
		if mc.TwoHopNS > 0 {
			fmt.Fprintf(w, " one hop and %s ns two hops", Num(mc.TwoHopNS))
		}
	} else {
		fmt.Fprintf(w, "Latency: %s, %d socket(s)", mc.Source, len(mc.Sockets))
	}
	if mc.BufferNS > 0 {
		fmt.Fprintf(w, ", +%s ns buffer on %d or more sockets", Num(mc.BufferNS), mc.BufferMinSockets)
	}
	if mc.Locality >= 0 {
		fmt.Fprintf(w, ", %s%% of accesses local\n", Num(100*mc.Locality))
	} else {
		fmt.Fprintf(w, ", no locality (every node equally likely)\n")
	}
}

// WriteTable prints the capacity planner's table and the scaling
// between socket counts.
func WriteTable(w io.Writer, t Table) error {
	Describe(w, t.Workload, t.Machine)
	fmt.Fprintf(w, "Cores per socket: %d\n", t.Machine.CoresPerSocket)
	smt := false
	for _, r := range t.Rows {
		smt = smt || r.SMT > 1
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "sockets\tSMT\tGHz\tlatency ns\tlatency cycles\tMcycles/txn\ttps/core\ttotal tps\t" +
		"per-core vs 1S\ttotal vs 1S\t"
	if smt {
		head += "SMT gain\t"
	}
	fmt.Fprintln(tw, head+"1S match ns\t")
	unmatched := ""
	for _, r := range t.Rows {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%.1f\t%.1f\t%.2f\t%.2f\t%.2f\t%.3f\t%.3f\t", r.Sockets, r.SMT, Sig(r.GHz, 4),
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
	fmt.Fprintln(w,
		"\n1S match: the latency one socket with the same cores per socket, clock and SMT needs for the same total tps.")
	if smt && t.SMTSource != "" {
		fmt.Fprintf(w,
			"SMT gain: %s, the ratio of a core's throughput with more than one hardware thread to one thread's, %s.\n",
			Sig(t.Rows[len(t.Rows)-1].SMTGain, 4), t.SMTSource)
	} else if smt {
		fmt.Fprintf(w, "SMT gain: %s, the ratio of a core's throughput with more than one hardware thread to one "+
			"thread's (--smt-gain; default %s: %s).\n",
			Sig(t.Rows[len(t.Rows)-1].SMTGain, 4), PublishedSMTGain, PublishedSMTGain.Source)
	}
	var beyond []string
	for _, r := range t.Rows {
		if n := strconv.Itoa(r.Sockets); r.Beyond && !slices.Contains(beyond, n) {
			beyond = append(beyond, n)
		}
	}
	if len(beyond) > 0 {
		fmt.Fprintf(w, "%s sockets: %s.\n", strings.Join(beyond, ", "), t.Machine.BeyondNote())
	}
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
		fmt.Fprintf(tw, "%s\t%d\t%dS\t%dS\t%.3f\t%.3f\t\n", Sig(s.GHz, 4), s.SMT, s.From, s.To, s.TotalRatio, s.PerCoreRatio)
	}
	return tw.Flush()
}

// WriteCSV prints one row per configuration.
func WriteCSV(w io.Writer, t Table) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"sockets", "cores_per_socket", "smt", "ghz", "latency_ns", "latency_cycles", "cycles_per_txn",
		"tps_per_core", "total_tps", "per_core_vs_1s", "total_vs_1s", "smt_gain", "match_1s_latency_ns"})
	for _, r := range t.Rows {
		m := ""
		if r.Match1SNS != nil {
			m = G12(*r.Match1SNS)
		}
		cw.Write([]string{strconv.Itoa(r.Sockets), strconv.Itoa(r.CoresPerSocket), strconv.Itoa(r.SMT), G12(r.GHz),
			G12(r.LatencyNS), G12(r.LatencyCycles), G12(r.CyclesPerTxn), G12(r.TPSPerCore), G12(r.TotalTPS),
			G12(r.PerCoreVs1S), G12(r.TotalVs1S), G12(r.SMTGain), m})
	}
	cw.Flush()
	return cw.Error()
}

// WriteTiers prints the break-even and the table of miss fractions.
func WriteTiers(w io.Writer, t Tiers) error {
	fast, slow, dram := Num(t.FastNS), Num(t.SlowNS), Num(t.DRAMNS)
	fmt.Fprintf(w, "Fast tier %s ns, slow tier %s ns, conventional DRAM %s ns.\n", fast, slow, dram)
	fmt.Fprintf(w, "Break-even: x < (D − S)/(I − S) = (%s − %s)/(%s − %s) = %.4f\n", dram, fast, slow, fast, t.BreakEven)
	switch x := t.BreakEven; {
	case x <= 0:
		fmt.Fprintln(w, "The fast tier is no faster than DRAM: two tiers never win.")
	case x >= 1:
		fmt.Fprintln(w, "The slow tier is no slower than DRAM: two tiers always win.")
	default:
		fmt.Fprintf(w, "Two tiers beat DRAM while fewer than %s of accesses miss the fast tier.\n", Percent(x))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "miss fast tier\taverage ns\tvs DRAM\t")
	for _, l := range t.Levels {
		fmt.Fprintf(tw, "%s\t%.1f\t%.3f\t\n", Percent(l.Miss), l.LatencyNS, l.VsDRAM)
	}
	return tw.Flush()
}

// WriteSize prints the sizing's provenance and its rows, cheapest first.
func WriteSize(w io.Writer, z Sizing, rows []SizeRow) error {
	Describe(w, z.Workload, z.Machine)
	fmt.Fprintf(w, "Target: %s tps; licence %s per physical core, all cores licensed; SMT %d\n\n", Num(z.TargetTPS),
		Num(z.LicensePerCore), z.SMT)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "sockets\tprocessor\tcores\tlatency ns\ttps/core\ttotal tps\tcores needed\t"+
		"meets target\tlicences\thardware\ttotal cost\tcost per 1000 tps\t")
	for _, r := range rows {
		meets := "no"
		if r.Meets {
			meets = "yes"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%.1f\t%.2f\t%.1f\t%d\t%s\t%.0f\t%.0f\t%.0f\t%.0f\t\n", r.Sockets, r.CPU.Name, r.Cores,
			r.LatencyNS, r.TPSPerCore, r.TotalTPS, r.CoresNeeded, meets, r.LicenseCost, r.HardwareCost,
			r.TotalCost, r.CostPerKTPS)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rows) > 0 && !rows[0].Meets {
		fmt.Fprintf(w, "\nNo configuration reaches %s tps: add sockets, cores or a faster clock.\n", Num(z.TargetTPS))
	}
	return nil
}

// WriteFit prints a fit: the workload it implies, its R² and each point's
// residual.
func WriteFit(w io.Writer, fit Fit) error {
	fmt.Fprintf(w, "Fit of %d points (least squares on cycles per transaction against latency in cycles):\n", fit.Points)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  core cycles per transaction (A)\t%s%s\n", Thousands(fit.A), fit.AInterval.Parenthesised())
	fmt.Fprintf(tw, "  memory waits per transaction (M)\t%s%s\n", Thousands(fit.M), fit.MInterval.Parenthesised())
	fmt.Fprintf(tw, "  classic form: I = A + M, m = M/I\t%.0f, %.5f\n", fit.Workload.Instructions, fit.Workload.Miss)
	r2 := fmt.Sprintf("%.6f", fit.R2)
	if fit.Points == 2 {
		r2 += " (two points always fit exactly: add a third to test the model and get intervals)"
	}
	fmt.Fprintf(tw, "  R² of cycles per transaction\t%s\n", r2)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "latency ns\tGHz\tMcycles/txn\ttps/core\tfit tps/core\terror\t")
	for _, r := range fit.Residuals {
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%s\t%.2f\t%+.2f%%\t\n", Num(r.LatencyNS), Num(r.GHz), r.CyclesPerTxn/1e6,
			Num(r.TPSPerCore), r.FitTPSPerCore, 100*r.RelativeErrorTPS)
	}
	return tw.Flush()
}
