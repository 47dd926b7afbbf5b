package decide

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/numalab/numalab/internal/model"
)

// BestOn lists the measures a candidate wins on, in words.
func (p *Purchase) BestOn(name string) []string {
	var on []string
	for _, w := range []struct{ what, who string }{
		{"total tps", p.Best.TotalTPS}, {"tps per core", p.Best.TPSPerCore},
		{"total cost", p.Best.TotalCost}, {"cost per 1,000 tps", p.Best.CostPerKTPS},
	} {
		if w.who == name {
			on = append(on, w.what)
		}
	}
	return on
}

// WritePurchase prints the candidates, the winners and the recommendation,
// with the assumptions and how the band was derived.
func WritePurchase(w io.Writer, p *Purchase) error {
	fmt.Fprintln(w, p.Recommendation)
	fmt.Fprintf(w, "\nWorkload: A = %s core cycles and M = %s memory waits per transaction "+
		"(C = A + M·L·f; classic form I = %s, m = %s)\n",
		model.Thousands(p.Workload.Core()), model.Thousands(p.Workload.Waits()), model.Thousands(p.Workload.Instructions),
		strconv.FormatFloat(p.Workload.Miss, 'g', 4, 64))
	if p.FitChoice != "" {
		fmt.Fprintf(w, "Fit: %s\n", p.FitChoice)
	}
	if len(p.Assumptions) > 0 {
		fmt.Fprintln(w, "Assumptions:")
		for _, a := range p.Assumptions {
			fmt.Fprintf(w, "  %s\n", a)
		}
	}
	fmt.Fprintf(w, "Band (low to high tps): %s\n", p.Band)
	fmt.Fprintln(w, "Cost: price + all physical cores × licence per core; latency: (local + (S − 1)·remote)/S "+
		"+ buffer, no locality; tps per core × the SMT gain with SMT.")
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "server\tsockets\tcores\tGHz\tSMT\tlatency ns\ttps/core\t"+
		"total tps\tlow\thigh\tprice\tlicences\ttotal cost\tper 1000 tps\t")
	for _, r := range p.Rows {
		s := r.Server
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%.1f\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			s.Name, s.Sockets, s.Cores(), model.Num(s.GHz), s.SMT, r.LatencyNS,
			r.TPSPerCore, model.Thousands(r.TotalTPS), model.Thousands(r.TPSLow), model.Thousands(r.TPSHigh),
			model.Thousands(s.Price), model.Thousands(r.LicenceCost), model.Thousands(r.TotalCost),
			model.Thousands(r.CostPerKTPS))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nBest: total tps %s; tps per core %s; total cost %s; cost per 1,000 tps %s.\n", p.Best.TotalTPS,
		p.Best.TPSPerCore, p.Best.TotalCost, p.Best.CostPerKTPS)
	var notes []string
	for _, r := range p.Rows {
		if r.Server.Note != "" {
			notes = append(notes, fmt.Sprintf("  %s: %s", r.Server.Name, r.Server.Note))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\nCandidates:\n%s\n", strings.Join(notes, "\n"))
	}
	return nil
}

// WritePurchaseCSV prints one row per candidate.
func WritePurchaseCSV(w io.Writer, p *Purchase) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"server", "sockets", "cores_per_socket", "cores", "ghz", "smt", "local_ns", "remote_ns",
		"buffer_ns", "latency_ns", "tps_per_core", "total_tps", "total_tps_low", "total_tps_high", "price",
		"licence_per_core", "licence_cost", "total_cost", "cost_per_1000_tps", "best_on"})
	for _, r := range p.Rows {
		s := r.Server
		cw.Write([]string{s.Name, strconv.Itoa(s.Sockets), strconv.Itoa(s.CoresPerSocket), strconv.Itoa(s.Cores()),
			model.G12(s.GHz), strconv.Itoa(s.SMT), model.G12(s.LocalNS), model.G12(s.RemoteNS), model.G12(s.BufferNS),
			model.G12(r.LatencyNS),
			model.G12(r.TPSPerCore), model.G12(r.TotalTPS), model.G12(r.TPSLow), model.G12(r.TPSHigh),
			model.G12(s.Price), model.G12(s.LicencePerCore), model.G12(r.LicenceCost), model.G12(r.TotalCost),
			model.G12(r.CostPerKTPS), strings.Join(p.BestOn(s.Name), "; ")})
	}
	cw.Flush()
	return cw.Error()
}
