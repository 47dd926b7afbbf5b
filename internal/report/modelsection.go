package report

import (
	"fmt"
	"html/template"
	"strconv"
)

// modelSection is the model's predictions for 1, 2 and 4 sockets, its
// statements, and the charts of its fit and of the speed sentinel around a
// measured fit, each with its numbers in a table.
func modelSection(r *Report) HTMLSection {
	s := HTMLSection{ID: AnchorModel, Title: "Model: 1, 2 and 4 sockets of this CPU"}
	md := r.Model
	if md == nil {
		s.Absent = AbsentText(r, "model")
		return s
	}
	s.Intro = "The memory-latency transaction model (docs/model.md): cycles per transaction C = A + M·L·f " +
		"(A core cycles with no memory wait, M unoverlapped memory waits, L latency, f clock); tps per core = " +
		"f·10⁹ / C, times the SMT gain with SMT; with S sockets and no locality L = (Lloc + (S − 1)·Lrem) / S."
	s.Notes = append(s.Notes, withoutResiduals(md.Statements())...)
	if len(md.Table.Rows) == 0 {
		return s
	}
	s.Notes = append(s.Notes, fmt.Sprintf("Workload: %s. %s.", md.Derived(), md.Method))
	if md.Fit != nil {
		s.Notes = append(s.Notes, fmt.Sprintf("Fit quality: R² = %s over %d points.", FmtF(md.Fit.R2, 4), md.Fit.Points))
	}
	if f := md.Measured; f != nil {
		s.Notes = append(s.Notes, measuredNotes(f)...)
	}
	if r.Published != nil {
		s.Notes = append(s.Notes, publishedLine(r.Published))
	}
	var labels, notes []string
	var vals []float64
	tb := Table{ID: AnchorModel + "-table",
		Caption: fmt.Sprintf("Predictions at %s GHz, %d cores per socket (%s); tps per core is per physical core",
			FmtF(md.GHz, 2), md.CoresPerSocket, md.LatencyWords()),
		Head: []string{"sockets", "cores per socket", "threads per core", "average latency ns", "latency cycles",
			"cycles per transaction", "tps per core", "total tps", "total vs 1 socket", "per core vs 1 socket",
			"1-socket latency to match"}}
	for _, row := range md.Table.Rows {
		match := row.Match1SNote
		if row.Match1SNS != nil {
			match = FmtF(*row.Match1SNS, 1) + " ns"
		}
		tb.Rows = append(tb.Rows,
			[]string{strconv.Itoa(row.Sockets), strconv.Itoa(row.CoresPerSocket), strconv.Itoa(row.SMT), FmtF(row.LatencyNS, 1),
				FmtF(row.LatencyCycles, 0), FmtN(row.CyclesPerTxn), FmtN(row.TPSPerCore), FmtN(row.TotalTPS),
				FmtF(row.TotalVs1S, 2) + "×", FmtF(row.PerCoreVs1S, 2) + "×", OrDash(match)})
		label := Plural(row.Sockets, "socket")
		if row.SMT > 1 {
			label += fmt.Sprintf(", SMT %d", row.SMT)
		}
		labels = append(labels, label)
		vals = append(vals, row.TotalTPS)
		notes = append(notes, FmtN(row.TPSPerCore)+" per core")
	}
	s.Figures = append(s.Figures, Plot{ID: AnchorModel + "-bars", SVG: template.HTML(
		Bars(AnchorModel+"-bars", "Predicted total transactions per second", "tps (model)", labels, vals, notes))})
	s.Tables = append(s.Tables, tb)
	if fig, et, ok := enginesFigure(r); ok {
		if fig.SVG != "" {
			s.Figures = append(s.Figures, fig)
		}
		s.Tables = append(s.Tables, et)
	}
	if fig, ft, ok := fitFigure(md); ok {
		s.Figures = append(s.Figures, fig)
		s.Tables = append(s.Tables, ft)
	}
	if f := md.Measured; f != nil {
		if fig, ok := sentinelFigure(f); ok {
			s.Figures = append(s.Figures, fig)
		}
		s.Tables = append(s.Tables, measuredTables(f)...)
	}
	return s
}
