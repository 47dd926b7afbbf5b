package report

import (
	"fmt"
	"html/template"
	"slices"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/calibrated"
	"github.com/numalab/numalab/internal/chart"
	"github.com/numalab/numalab/internal/conclusion"
)

// AnchorBuy is the "Which server" section.
const AnchorBuy = "which-server"

// Purchase is the buy decision Build took for the report's calibrated
// model (decide.Choose): among the built-in candidates derived from the
// probed CPU, with the band the calibration supports; nil without a
// prediction. The report's findings and section and eval's summary all
// take it from here.
func Purchase(r *Report) *conclusion.Decision { return r.purchase }

// CataloguePurchase is the buy decision among real CPUs, the built-in
// catalogue's, that Build took for the report's calibrated model
// (decide.Choose); nil without a prediction. The card gives its answer
// beside the one among this CPU's variants.
func CataloguePurchase(r *Report) *conclusion.Decision { return r.catalogue }

// realCPUs is the answer among the catalogue's CPUs in one sentence, and
// the cheapest three of their ranking.
func realCPUs(pc *conclusion.Decision) string {
	var first []string
	for _, row := range pc.Rows[:min(3, len(pc.Rows))] {
		first = append(first, row.Name+" "+FmtN(row.CostPerKTPS))
	}
	return "Among real CPUs (" + strconv.Itoa(len(pc.Rows)) +
		" catalogue servers, list prices; 'numalab model buy --catalogue --run ID' ranks them): " +
		cardSentence(pc) + " Cheapest per 1,000 tps: " + strings.Join(first, ", ") + "."
}

func buySection(r *Report) HTMLSection {
	s := HTMLSection{ID: AnchorBuy, Title: "Which server"}
	p := Purchase(r)
	if p == nil {
		s.Absent = "The model made no prediction (see its section), so there is nothing to choose between. To choose: " +
			"'numalab probe mem --quick' and 'numalab run oltp', then 'numalab model buy --run ID --candidates FILE'."
		return s
	}
	s.Intro = p.Recommendation
	if pc := CataloguePurchase(r); pc != nil {
		s.Notes = append(s.Notes, realCPUs(pc))
	}
	s.Figures = append(s.Figures, Plot{ID: AnchorBuy + "-cost", SVG: template.HTML(CostBars(AnchorBuy+"-cost", p))})
	tb := Table{ID: AnchorBuy + "-table",
		Caption: "Candidates derived from this CPU, with the calibrated workload (prices illustrative)",
		Head: []string{"server", "sockets", "cores", "GHz", "SMT", "latency ns", "tps per core", "total tps", "band",
			"total cost", "per 1,000 tps", "best on"}}
	for _, row := range p.Rows {
		tb.Rows = append(tb.Rows, []string{row.Name, strconv.Itoa(row.Sockets), strconv.Itoa(row.Cores), FmtF(row.GHz, 2),
			strconv.Itoa(row.SMT), FmtF(row.LatencyNS, 1),
			FmtN(row.TPSPerCore), FmtN(row.TotalTPS), FmtN(row.TPSLow) + " to " + FmtN(row.TPSHigh), FmtN(row.TotalCost),
			FmtN(row.CostPerKTPS), OrDash(strings.Join(row.BestOn, ", "))})
	}
	s.Tables = append(s.Tables, tb)
	s.Notes = append(s.Notes,
		"Total cost is the server's price plus every physical core's licence; cost per 1,000 tps divides it by the "+
			"predicted total tps. The formulas are those of Joe Chang's sizing articles \"Memory Latency and NUMA\" "+
			"and \"Memory Latency - Return to Single Processor\" (docs/model.md).",
		"Band: "+p.Band+".",
		"The prices are illustrative, not quotes: 'numalab model buy --run ID --candidates FILE' prices real servers.")
	// The purchase's own assumptions (the licence price); the model's are
	// in its section.
	for _, a := range p.Assumptions {
		if !slices.ContainsFunc(r.Model.Assumptions, func(m calibrated.Assumption) bool { return m.Name == a.Name }) {
			t := a.String()
			s.Notes = append(s.Notes, strings.ToUpper(t[:1])+t[1:]+".")
		}
	}
	for _, row := range p.Rows {
		s.Notes = append(s.Notes, row.Name+": "+row.Note+".")
	}
	return s
}

// CostBars is a horizontal bar chart of cost per 1,000 tps, one bar per
// candidate, with a whisker over the cost at the band's ends.
func CostBars(id string, p *conclusion.Decision) string {
	var bars []chart.HBar
	for _, r := range p.Rows {
		bars = append(bars, chart.HBar{Label: r.Name, Value: r.CostPerKTPS, Lo: cost(r, r.TPSHigh), Hi: cost(r, r.TPSLow)})
	}
	return chart.HBars(id, "Cost per 1,000 tps, lower is better (whisker: the band)", "cost per 1,000 tps",
		"per 1,000 tps", bars)
}

// cost is a candidate's cost per 1,000 tps at a throughput of its band.
func cost(r conclusion.Candidate, tps float64) float64 {
	if !(tps > 0) {
		return r.CostPerKTPS
	}
	return r.TotalCost / (tps / 1000)
}

// textBuy is the section in the text report.
func textBuy(b *strings.Builder, r *Report) {
	p := Purchase(r)
	if p == nil {
		b.WriteString("  no prediction: nothing to choose between\n")
		return
	}
	fmt.Fprintf(b, "  %s\n", p.Recommendation)
	for _, row := range p.Rows {
		fmt.Fprintf(b, "    %-30s %s tps (%s to %s), %s per 1,000 tps\n", row.Name, FmtN(row.TotalTPS), FmtN(row.TPSLow),
			FmtN(row.TPSHigh), FmtN(row.CostPerKTPS))
	}
	fmt.Fprintf(b, "  band: %s; prices assumed: 'numalab model buy --candidates FILE' prices real servers\n", p.Band)
}
