package hosts

import (
	_ "embed"
	"github.com/numalab/numalab/internal/conclusion"
	"html/template"
	"io"

	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/report"
)

//go:embed hosts.html.tmpl
var htmlTemplate string

var tmpl = template.Must(template.New("hosts").Funcs(template.FuncMap{
	"k":       model.Thousands,
	"fixed":   model.Fixed,
	"pct":     model.Percent,
	"sockets": SocketWords,
	"machine": MachineWords,
	"dash": func(v float64, d int) string {
		if v == 0 {
			return "–"
		}
		return model.Fixed(v, d)
	},
}).Parse(htmlTemplate))

// htmlView is the page: the comparison and its two charts.
type htmlView struct {
	*Comparison
	CSS             template.CSS
	Cost, Streams   template.HTML
	WarningsPresent bool
}

// WriteHTML writes the comparison as one self-contained HTML page (inline
// CSS and SVG, nothing fetched): the decision, cost per 1,000 tps per host
// with its band, tps against streams per host, the machines side by side,
// the fits' sockets and each preflight warning that makes a host's figure
// not comparable. Its title starts "numalab report", the mark by which
// numalab recognises an HTML file it wrote.
func WriteHTML(w io.Writer, c *Comparison) error {
	v := htmlView{Comparison: c, CSS: report.CSS(), Cost: template.HTML(report.CostBars("hosts-cost", purchase(c))),
		Streams: template.HTML(streamsChart(c))}
	for _, h := range c.Hosts {
		v.WarningsPresent = v.WarningsPresent || len(h.Warnings) > 0
	}
	return tmpl.Execute(w, v)
}

// purchase is the comparison as report.CostBars draws one: each host a
// candidate with its total cost and throughput band.
func purchase(c *Comparison) *conclusion.Decision {
	p := &conclusion.Decision{}
	for _, h := range c.Hosts {
		p.Rows = append(p.Rows, conclusion.Candidate{Name: h.Name, TotalTPS: h.TPS, TPSLow: h.TPSLow, TPSHigh: h.TPSHigh,
			TotalCost: h.TotalCost, CostPerKTPS: h.CostPerKTPS})
	}
	return p
}

// streamsChart is every host's best tps at each stream count, with its
// band.
func streamsChart(c *Comparison) string {
	var xs []float64
	ch := report.Chart{ID: "hosts-streams", Title: "Each host's best tps at each stream count (bar: the band)",
		Y: report.Scale{Label: "tps", Zero: true, Format: report.FmtSig}}
	for _, h := range c.Hosts {
		s := report.Series{Name: h.Name}
		for _, p := range h.Streams {
			s.Points = append(s.Points, report.Point{X: float64(p.Streams), Y: p.TPS, Lo: p.Low, Hi: p.High})
			xs = append(xs, float64(p.Streams))
		}
		ch.Series = append(ch.Series, s)
	}
	ch.X = report.StreamsScale("streams", xs)
	return ch.SVG()
}
