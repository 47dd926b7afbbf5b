package sqlscript

import (
	"fmt"
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
}

// ReportPoint is one point of a run (streams and placement), its figures
// the median over its repeats, its failures their sum.
type ReportPoint struct {
	Streams   int     `json:"streams"`
	Placement string  `json:"placement"`
	Repeats   int     `json:"repeats"`
	TPS       float64 `json:"tps"`
	TPSMin    float64 `json:"tps_min"`
	TPSMax    float64 `json:"tps_max"`
	P95MS     float64 `json:"p95_ms"`
	Errors    int64   `json:"errors"`
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
	type point struct {
		placement string
		streams   int
	}
	order, groups := stats.Group(ptrs(cells), func(c *Cell) point { return point{c.Cell.Placement, c.Cell.Streams} })
	for _, k := range order {
		g := groups[k]
		r.Engine = g[0].Cell.Engine
		p := ReportPoint{Streams: k.streams, Placement: k.placement, Repeats: len(g),
			TPS: stats.MedianOf(g, func(c *Cell) float64 { return c.Cell.TPS }), TPSMin: g[0].Cell.TPS, TPSMax: g[0].Cell.TPS,
			P95MS: stats.MedianOf(g, func(c *Cell) float64 { return c.Cell.Total.P95US / 1000 })}
		for _, c := range g {
			p.TPSMin, p.TPSMax = min(p.TPSMin, c.Cell.TPS), max(p.TPSMax, c.Cell.TPS)
			p.Errors += c.Cell.Total.Errors
		}
		r.Points = append(r.Points, p)
	}
	return r, nil
}

func ptrs(cells []Cell) []*Cell {
	out := make([]*Cell, len(cells))
	for i := range cells {
		out[i] = &cells[i]
	}
	return out
}

func (p ReportPoint) where() string {
	if p.Placement == "" {
		return "all CPUs"
	}
	return p.Placement
}

// HTML is one section with a table per run.
func (sec *Section) HTML(*report.Report) []report.HTMLSection {
	s := report.HTMLSection{ID: AnchorSQL, Title: "Your SQL: script runs", Shows: []preflight.Figure{preflight.Scaling},
		Intro: "The user's pgbench scripts (numalab run sql): a call is one transaction, a script chosen by weight. Transactions per second count all streams; p95 is of one transaction. Each figure is the median over repeats, [min–max] the repeats'; failures are summed."}
	for _, r := range sec.Runs {
		t := report.Table{ID: fmt.Sprintf("%s-%d", AnchorSQL, r.Run),
			Caption: fmt.Sprintf("Run %d, %s: %s", r.Run, r.Engine, strings.Join(r.Scripts, ", ")),
			Head:    []string{"streams", "placement", "repeats", "tps", "min–max", "p95 ms", "failed"}}
		for _, p := range r.Points {
			t.Rows = append(t.Rows, []string{fmt.Sprint(p.Streams), p.where(), fmt.Sprint(p.Repeats), report.FmtF(p.TPS, 0),
				report.FmtF(p.TPSMin, 0) + "–" + report.FmtF(p.TPSMax, 0), report.FmtF(p.P95MS, 3), fmt.Sprint(p.Errors)})
		}
		s.Tables = append(s.Tables, t)
	}
	return []report.HTMLSection{s}
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
