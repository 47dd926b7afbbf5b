package published

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/numalab/numalab/internal/model"
)

// WriteValidation prints the validation: each pair's published and
// predicted ratio with its band and the error, the results with their
// sources, and what the prediction assumes.
func WriteValidation(w io.Writer, r *Results, v *Validation) error {
	fmt.Fprintln(w, v.Summary())
	fmt.Fprintf(w, "\nHow: %s.\nBand: %s.\n", v.How, v.Band)
	fmt.Fprintln(w, "LOO: σ fitted to every other pair; CPU out: σ fitted to the pairs of other CPU generations "+
		"only (pairs of one CPU share results).")
	fmt.Fprint(w, "\"To match\" is the second system's latency at which the latency model alone, at the assumed "+
		"inputs, gives the published ratio.\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "pair\tfrom\tto\tlatency ns\tpublished\tlatency alone\tpredicted\tband\terror\tLOO σ\t"+
		"LOO predicted\tLOO error\tCPU out: σ\terror\tto match, ns\t")
	for i, k := range v.Checks {
		inBand := ""
		if k.InBand {
			inBand = " (in band)"
		}
		match := "none"
		if k.MatchNS > 0 {
			match = model.Fixed(k.MatchNS, 1)
		}
		looSigma, looPred, looErr, cpuSigma, cpuErr := "none", "none", "none", "none", "none"
		if k.LOO != nil {
			looSigma, looPred, looErr = model.Sig(k.LOO.Sigma, 3), model.Fixed(k.LOO.Predicted, 3)+"×", signed(k.LOO.Error)
			if c := k.LOO.CPUOut; c != nil {
				cpuSigma, cpuErr = model.Sig(c.Sigma, 3), signed(c.Error)
			}
		}
		fmt.Fprintf(tw,
			"%d\t%d× %d cores, %s %s\t%d× %d cores, %s %s\t%s → %s\t%s×\t%s×\t%s×\t%s–%s×\t%s%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			i+1, k.From.Sockets, k.From.Cores, model.Thousands(k.From.Result), k.From.Unit,
			k.To.Sockets, k.To.Cores, model.Thousands(k.To.Result), k.To.Unit,
			model.Fixed(k.FromNS, 1), model.Fixed(k.ToNS, 1), model.Fixed(k.Published, 3), model.Fixed(k.LatencyRatio, 3),
			model.Fixed(k.Predicted, 3), model.Fixed(k.Low, 3), model.Fixed(k.High, 3), signed(k.Error), inBand,
			looSigma, looPred, looErr, cpuSigma, cpuErr, match)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := writeTerms(w, v); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nPairs:")
	for i, k := range v.Checks {
		fmt.Fprintf(w, "  %d. %s → %s: %s\n", i+1, k.From.System, k.To.System, k.Pair.Note)
	}
	fmt.Fprintln(w, "\nResults:")
	for _, x := range r.Results {
		fmt.Fprintf(w, "  %s: %s, %d × %s (%s, %s GHz), %d cores, %s %s, %s %s. %s [%s]\n", x.ID, x.System,
			x.Sockets, x.CPU, x.Generation, model.Num(x.GHz), x.Cores, model.AsGiven(x.Result), x.Unit,
			x.Benchmark, x.Date, x.Document, x.Source)
	}
	fmt.Fprintln(w, "\nLatencies:")
	for _, p := range r.Platforms {
		buf := ""
		if p.BufferNS > 0 {
			buf = fmt.Sprintf(", buffer %s ns", model.Num(p.BufferNS))
		}
		if p.TwoHopNS > 0 {
			buf += fmt.Sprintf(", two hops %s ns", model.Num(p.TwoHopNS))
			if p.TwoHopLowNS > 0 {
				buf += fmt.Sprintf(" (band %s to %s ns)", model.Num(p.TwoHopLowNS), model.Num(p.TwoHopHighNS))
			}
		}
		fmt.Fprintf(w, "  %s (%s): local %s ns, remote %s ns%s; %s [%s]\n", p.ID, p.CPU, model.Num(p.LocalNS),
			model.Num(p.RemoteNS), buf, p.Note, p.Source)
	}
	if len(r.Candidates) > 0 {
		fmt.Fprintln(w, "\nCandidate terms (shown in the term table, not in the prediction):")
		for _, c := range r.Candidates {
			at := "every socket count"
			if c.Sockets > 0 {
				at = fmt.Sprintf("%d sockets", c.Sockets)
			}
			if len(c.Platforms) > 0 {
				at += " on " + strings.Join(c.Platforms, ", ")
			}
			fmt.Fprintf(w, "  %s: %s %s at %s; %s [%s]\n", c.Term, c.Kind, model.Num(c.Value), at, c.Note, c.Source)
		}
	}
	fmt.Fprintln(w, "\nSources:")
	for _, s := range r.Sources {
		fmt.Fprintf(w, "  [%s] %s, %s: %s\n", s.ID, s.Title, s.URL, s.States)
	}
	return nil
}

// writeTerms prints the term table: each term's error for every pair.
func writeTerms(w io.Writer, v *Validation) error {
	fmt.Fprintln(w, "\nWhich term moves each pair's error (predicted / published − 1, at the same stall share; "+
		"n/a: the term has a figure for one side's socket count only):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "term\t"
	for i := range v.Checks {
		head += fmt.Sprintf("pair %d\t", i+1)
	}
	fmt.Fprintln(tw, head+"in the model\tsource\t")
	for _, t := range v.Terms {
		row := t.Term + "\t"
		for i, e := range t.Errors {
			if i < len(t.NotApplicable) && t.NotApplicable[i] {
				row += "n/a\t"
				continue
			}
			row += signed(e) + "\t"
		}
		used := "no"
		if t.Adopted {
			used = "yes"
		}
		fmt.Fprintln(tw, row+used+"\t"+t.Source+"\t")
	}
	return tw.Flush()
}
