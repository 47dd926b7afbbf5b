package sqlscript

import (
	"fmt"
	"html/template"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

// AnchorSQL is the section of the report for run sql's runs.
const AnchorSQL = "sql"

// Report is what the report shows of run sql's runs: a table per run,
// one per engine.
var Report = report.Workload{
	Kinds:   []string{RunKind, RunKind + "-paced"},
	Default: true,
	Variant: report.EngineVariant,
	Figures: figures,
	Build: func(_ *report.Report, runs []*result.Run) (report.Section, error) {
		sec := &Section{}
		for _, run := range runs {
			r, err := buildRun(run)
			if err != nil {
				return nil, err
			}
			sec.Runs = append(sec.Runs, r)
		}
		if len(sec.Runs) == 0 {
			return nil, nil
		}
		return sec, nil
	},
}

// Section is the report's section of run sql's runs.
type Section struct {
	Runs []ReportRun `json:"sql,omitempty"`
}

// ReportRun is one run sql run in the report.
type ReportRun struct {
	Run     int64         `json:"run"`
	Engine  string        `json:"engine"`
	Scripts []string      `json:"scripts"`
	Points  []ReportPoint `json:"points"`
	// Speed is the speed sentinel's verdict on the cells (Speed), "" for
	// too few readings.
	Speed string `json:"speed,omitempty"`
}

// ReportPoint is one point of a run (streams and placement), its figures
// the median over its repeats, its failures their sum.
type ReportPoint struct {
	Streams   int     `json:"streams"`
	Placement string  `json:"placement"`
	DOP       int     `json:"dop"`
	Repeats   int     `json:"repeats"`
	TPS       float64 `json:"tps"`
	TPSMin    float64 `json:"tps_min"`
	TPSMax    float64 `json:"tps_max"`
	P95MS     float64 `json:"p95_ms"`
	Errors    int64   `json:"errors"`
	// TPSRepeats and P95Repeats are each repeat's, in the order run.
	TPSRepeats []float64 `json:"tps_repeats"`
	P95Repeats []float64 `json:"p95_ms_repeats"`
}

var _ report.Section = (*Section)(nil)

func buildRun(run *result.Run) (ReportRun, error) {
	cells, err := StoredCells(run)
	if err != nil {
		return ReportRun{}, err
	}
	scripts, err := KindScripts.Last(run)
	if err != nil {
		return ReportRun{}, err
	}
	r := ReportRun{Run: run.ID}
	if scripts != nil {
		for _, s := range *scripts {
			r.Scripts = append(r.Scripts, fmt.Sprintf("%s@%d", s.Name, s.Weight))
		}
	}
	r.Speed = Speed(ptrs(cells))
	order, groups := stats.Group(ptrs(cells), pointOf)
	for _, k := range order {
		g := groups[k]
		r.Engine = g[0].Cell.Engine
		p := ReportPoint{Streams: k.streams, Placement: k.placement, DOP: k.dop, Repeats: len(g),
			TPS: stats.MedianOf(g, func(c *Cell) float64 { return c.Cell.TPS }), TPSMin: g[0].Cell.TPS, TPSMax: g[0].Cell.TPS,
			P95MS: stats.MedianOf(g, func(c *Cell) float64 { return c.Cell.Total.P95US / 1000 })}
		for _, c := range g {
			p.TPSMin, p.TPSMax = min(p.TPSMin, c.Cell.TPS), max(p.TPSMax, c.Cell.TPS)
			p.Errors += c.Cell.Total.Errors
			p.TPSRepeats = append(p.TPSRepeats, c.Cell.TPS)
			p.P95Repeats = append(p.P95Repeats, c.Cell.Total.P95US/1000)
		}
		r.Points = append(r.Points, p)
	}
	return r, nil
}

// figures are a run's figures for compare: each point's throughput and
// p95 latency, over its repeats.
func figures(in *result.Run) ([]report.Figure, error) {
	r, err := buildRun(in)
	if err != nil {
		return nil, err
	}
	var out []report.Figure
	for _, p := range r.Points {
		key := fmt.Sprintf("%s %s, %s", r.Engine, p.where(), report.Plural(p.Streams, "stream"))
		out = append(out, report.NewFigure(key+": throughput", "tps", p.TPSRepeats...),
			report.NewFigure(key+": p95 latency", "ms", p.P95Repeats...))
	}
	return out, nil
}

func ptrs(cells []Cell) []*Cell {
	out := make([]*Cell, len(cells))
	for i := range cells {
		out[i] = &cells[i]
	}
	return out
}

// point is what a cell's repeats share: placement, streams and DOP.
type point struct {
	placement string
	streams   int
	dop       int
}

func pointOf(c *Cell) point { return point{c.Cell.Placement, c.Cell.Streams, max(c.Cell.DOP, 1)} }

// where is the point's placement, and its DOP above 1.
func (p ReportPoint) where() string {
	w := p.Placement
	if w == "" {
		w = "all CPUs"
	}
	if p.DOP > 1 {
		w += fmt.Sprintf(", DOP %d", p.DOP)
	}
	return w
}

// HTML is one section with a table per run.
func (sec *Section) HTML(*report.Report) []report.HTMLSection {
	s := report.HTMLSection{ID: AnchorSQL, Title: "Your SQL: script runs", Shows: []preflight.Figure{preflight.Scaling},
		Intro: "The user's pgbench scripts (numalab run sql): a call is one transaction, a script chosen by weight. " +
			"Transactions per second count all streams; p95 is of one transaction. Each figure is the median over repeats, " +
			"[min–max] the repeats' (the bars of the chart); failures are summed."}
	for _, r := range sec.Runs {
		t := report.Table{ID: fmt.Sprintf("%s-%d", AnchorSQL, r.Run),
			Caption: fmt.Sprintf("Run %d, %s: %s", r.Run, r.Engine, strings.Join(r.Scripts, ", ")),
			Head:    []string{"streams", "placement", "repeats", "tps", "min–max", "p95 ms", "failed"}}
		for _, p := range r.Points {
			t.Rows = append(t.Rows, []string{fmt.Sprint(p.Streams), p.where(), fmt.Sprint(p.Repeats), report.FmtF(p.TPS, 0),
				report.FmtF(p.TPSMin, 0) + "–" + report.FmtF(p.TPSMax, 0), report.FmtF(p.P95MS, 3), fmt.Sprint(p.Errors)})
		}
		s.Tables = append(s.Tables, t)
		s.Figures = append(s.Figures, r.chart())
		if r.Speed != "" {
			s.Notes = append(s.Notes, fmt.Sprintf("Run %d: %s.", r.Run, r.Speed))
		}
	}
	return []report.HTMLSection{s}
}

// chart draws a run's throughput against streams, a line per placement
// and DOP, each point the median over repeats with their range.
func (r ReportRun) chart() report.Plot {
	c := report.Chart{ID: fmt.Sprintf("%s-%d-tps", AnchorSQL, r.Run),
		Title: fmt.Sprintf("Run %d, your scripts on %s: throughput against streams", r.Run, r.Engine),
		X:     report.Scale{Label: "streams", Zero: true, Format: report.FmtCompact},
		Y:     report.Scale{Label: "transactions per second", Zero: true, Format: report.FmtCompact}}
	line := map[string]int{}
	var ticks []float64
	for _, p := range r.Points {
		i, ok := line[p.where()]
		if !ok {
			i = len(c.Series)
			line[p.where()] = i
			c.Series = append(c.Series, report.Series{Name: p.where()})
		}
		c.Series[i].Points = append(c.Series[i].Points,
			report.Point{X: float64(p.Streams), Y: p.TPS, Lo: p.TPSMin, Hi: p.TPSMax})
		if !slices.Contains(ticks, float64(p.Streams)) {
			ticks = append(ticks, float64(p.Streams))
		}
	}
	slices.Sort(ticks)
	c.X.Ticks = ticks
	return report.Plot{ID: c.ID, SVG: template.HTML(c.SVG())}
}

// Text writes the same tables.
func (sec *Section) Text(b *strings.Builder, _ *report.Report) {
	b.WriteString("\nYour SQL: script runs\n")
	for _, r := range sec.Runs {
		fmt.Fprintf(b, "  run %d on %s: %s; median of repeats [min-max]\n", r.Run, r.Engine, strings.Join(r.Scripts, ", "))
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "    streams\tplacement\trepeats\ttps\tmin-max\tp95 ms\tfailed\t")
		for _, p := range r.Points {
			fmt.Fprintf(tw, "    %d\t%s\t%d\t%s\t%s-%s\t%s\t%d\t\n", p.Streams, p.where(), p.Repeats, report.FmtF(p.TPS, 0),
				report.FmtF(p.TPSMin, 0), report.FmtF(p.TPSMax, 0), report.FmtF(p.P95MS, 3), p.Errors)
		}
		tw.Flush()
		if r.Speed != "" {
			fmt.Fprintf(b, "    %s\n", r.Speed)
		}
	}
}

// CSV writes each point's tps and p95.
func (sec *Section) CSV(row report.CSVRow) {
	for _, r := range sec.Runs {
		for _, p := range r.Points {
			name := r.Engine + " " + p.where()
			row(AnchorSQL, r.Run, name, "streams", float64(p.Streams), "tps", p.TPS, "tx/s", &p.TPSMin, &p.TPSMax, p.Repeats)
			row(AnchorSQL, r.Run, name, "streams", float64(p.Streams), "p95_latency", p.P95MS, "ms", nil, nil, p.Repeats)
		}
	}
}

// Findings says each run's best point.
func (sec *Section) Findings(_ *report.Report, _, detail report.Say) {
	for _, r := range sec.Runs {
		var best *ReportPoint
		for i := range r.Points {
			if best == nil || r.Points[i].TPS > best.TPS {
				best = &r.Points[i]
			}
		}
		if best != nil {
			detail(fmt.Sprintf("%s-%d", AnchorSQL, r.Run), "Your scripts on %s (run %d) peaked at %s tps with %d streams on %s.",
				r.Engine, r.Run, report.FmtF(best.TPS, 0), best.Streams, best.where())
		}
	}
}
