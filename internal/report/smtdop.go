package report

// The placement × DOP section: reporting runs placed on a CPU selector
// beside the report's unplaced DOP sweep (eval's SMT × DOP step stores
// P1 at DOP 1, the cores and the logical CPUs once smt=on and once
// smt=off), each placement and DOP over its repeats, and a verdict that
// names a winner only when the repeats tell it from the next best.

import (
	"encoding/json"
	"fmt"
	"html/template"
	"slices"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

// AnchorPlacedDOP is the section's anchor.
const AnchorPlacedDOP = "placement-dop"

// MinQueries is the fewest queries a cell must finish in its window for
// its rate to be compared with another's: fewer, and one query more or
// less moves the rate by a fifth or more.
const MinQueries = 5

// PlacedDOP is the reporting runs placed on a selector, cell by cell.
type PlacedDOP struct {
	Runs   []int64           `json:"runs"`
	Points []PlacedDOPPoint  `json:"points"`
	Winner string            `json:"winner,omitempty"` // "smt=on DOP 4"; "" when the cells cannot tell
	Diff   *stats.Difference `json:"difference,omitempty"`
	// Verdict is the comparison in one sentence: the winner and by what,
	// or why the cells cannot tell.
	Verdict string `json:"verdict"`
}

// PlacedDOPPoint is one placement, query and DOP over its repeats.
type PlacedDOPPoint struct {
	Run        int64     `json:"run"`
	Placement  string    `json:"placement"`
	Query      string    `json:"query"`
	DOP        int       `json:"dop"`
	Repeats    int       `json:"repeats"`
	QPH        float64   `json:"queries_per_hour"` // median over repeats
	QPHRepeats []float64 `json:"queries_per_hour_repeats"`
	// Queries is the fewest queries one repeat finished in its window,
	// and WindowS that window.
	Queries        int64   `json:"queries_fewest"`
	WindowS        float64 `json:"window_s"`
	MeanMS         float64 `json:"mean_ms"` // median over repeats of the cells' mean response time
	Oversubscribed bool    `json:"oversubscribed,omitempty"`
	Workers        string  `json:"workers,omitempty"`
}

// Name is "smt=on DOP 4".
func (p PlacedDOPPoint) Name() string {
	return fmt.Sprintf("%s DOP %d", p.Placement, p.DOP)
}

// placement is a reporting run's CPU selector; "" when it was not placed.
func placement(run *result.Run) string {
	var c struct {
		Placement string `json:"placement"`
	}
	if json.Unmarshal(run.Config, &c) != nil {
		return ""
	}
	return c.Placement
}

// BuildPlacedDOP is the section of the placed reporting runs.
func BuildPlacedDOP(runs []*result.Run) (*PlacedDOP, error) {
	s := &PlacedDOP{}
	for _, run := range runs {
		cells, err := result.KindQueryCell.All(run)
		if err != nil {
			return nil, err
		}
		s.Runs = append(s.Runs, run.ID)
		type key struct {
			query string
			dop   int
		}
		keys, groups := stats.Group(cells, func(c result.QueryCell) key {
			if c.Cell == nil {
				return key{}
			}
			return key{c.Query, c.Cell.DOP}
		})
		for _, k := range keys {
			if k.dop == 0 {
				continue // cells that could not start: their errors are the run's
			}
			g := groups[k]
			p := PlacedDOPPoint{Run: run.ID, Placement: placement(run), Query: k.query, DOP: k.dop, Repeats: len(g), Queries: -1,
				QPH:    stats.MedianOf(g, func(c result.QueryCell) float64 { return c.QueriesPerHour }),
				MeanMS: stats.MedianOf(g, func(c result.QueryCell) float64 { return c.Cell.Total.MeanUS / 1000 })}
			for _, c := range g {
				p.QPHRepeats = append(p.QPHRepeats, c.QueriesPerHour)
				if p.Queries < 0 || c.Cell.Total.Count < p.Queries {
					p.Queries, p.WindowS = c.Cell.Total.Count, c.Cell.Measured.Seconds()
				}
				if c.Workers != nil {
					p.Oversubscribed = p.Oversubscribed || c.Workers.Oversubscribed
					if p.Workers == "" {
						p.Workers = c.Workers.Short()
					}
				}
			}
			s.Points = append(s.Points, p)
		}
	}
	s.judge()
	return s, nil
}

// judge names the best point the winner when every point finished at
// least MinQueries queries in each window and the best one's repeats are
// higher than the next best's by a U test; otherwise the verdict says
// why the cells cannot tell.
func (s *PlacedDOP) judge() {
	if len(s.Points) == 0 {
		s.Verdict = "no cell finished: nothing to compare"
		return
	}
	if len(s.Points) == 1 {
		s.Verdict = "one cell: nothing to compare it with"
		return
	}
	var few []string
	for _, p := range s.Points {
		if p.Queries < MinQueries {
			few = append(few, fmt.Sprintf("%s: %d in %s s", p.Name(), p.Queries, FmtF(p.WindowS, 1)))
		}
	}
	if len(few) > 0 {
		s.Verdict = fmt.Sprintf("cannot tell: %d of %d cells finished fewer than %d queries in their window (%s), "+
			"too few for a rate to compare; longer windows would tell",
			len(few), len(s.Points), MinQueries, strings.Join(few, "; "))
		return
	}
	order := slices.Clone(s.Points)
	slices.SortStableFunc(order, func(a, b PlacedDOPPoint) int {
		switch {
		case a.QPH > b.QPH:
			return -1
		case a.QPH < b.QPH:
			return 1
		}
		return 0
	})
	best, next := order[0], order[1]
	d := stats.Compare(next.QPHRepeats, best.QPHRepeats)
	s.Diff = &d
	if d.Verdict == stats.Higher {
		s.Winner = best.Name()
		s.Verdict = fmt.Sprintf("best %s: %s queries/h against %s for the next best, %s (U test p=%.3f, %d+%d repeats)",
			best.Name(), FmtN(best.QPH), FmtN(next.QPH), next.Name(), d.P, d.B.N, d.A.N)
		return
	}
	s.Verdict = fmt.Sprintf("cannot tell: the best, %s at %s queries/h, is not told apart from the next, %s at %s: %s",
		best.Name(), FmtN(best.QPH), next.Name(), FmtN(next.QPH), d)
}

// Text is the section in one line: "P1 queries/h, median of 4: smt=on
// DOP 1 100, …; best …" or "…; cannot tell: …".
func (s *PlacedDOP) Text() string {
	var parts []string
	for _, p := range s.Points {
		t := fmt.Sprintf("%s %s", p.Name(), FmtN(p.QPH))
		if p.Oversubscribed {
			t += " (oversubscribed)"
		}
		parts = append(parts, t)
	}
	return fmt.Sprintf("%s queries/h by placement and DOP (median of %s): %s; %s",
		s.queries(), s.repeats(), strings.Join(parts, ", "), s.Verdict)
}

// title is "SMT × DOP" when every run is placed smt=on or smt=off.
func (s *PlacedDOP) title() string {
	for _, p := range s.Points {
		if p.Placement != "smt=on" && p.Placement != "smt=off" {
			return "Reporting queries by placement and DOP"
		}
	}
	return "SMT × DOP: parallel query with and without SMT siblings"
}

// queries are the points' queries, "P1" or "P1, P2".
func (s *PlacedDOP) queries() string {
	var qs []string
	for _, p := range s.Points {
		if !slices.Contains(qs, p.Query) {
			qs = append(qs, p.Query)
		}
	}
	return strings.Join(qs, ", ")
}

// repeats is "4", or "1 to 4" when the points differ.
func (s *PlacedDOP) repeats() string {
	lo, hi := s.Points[0].Repeats, s.Points[0].Repeats
	for _, p := range s.Points {
		lo, hi = min(lo, p.Repeats), max(hi, p.Repeats)
	}
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}

// placedDOPSection is the section in the HTML report.
func placedDOPSection(r *Report) HTMLSection {
	pd := r.PlacedDOP
	s := HTMLSection{ID: AnchorPlacedDOP, Title: pd.title()}
	s.Intro = fmt.Sprintf("Runs %s: %s on the same database as the reporting runs, placed on a CPU selector "+
		"(smt=on: every logical CPU; smt=off: one thread per core, so a DOP above the cores is oversubscribed). "+
		"A winner is named only when every cell finished at least %d queries in its window "+
		"and the best's repeats are higher than the next best's by a U test (p ≤ %.2f).",
		joinIDs(pd.Runs), pd.queries(), MinQueries, stats.Alpha)
	c := Chart{ID: AnchorPlacedDOP + "-chart", Title: pd.queries() + ": queries per hour against DOP, per placement",
		X: Scale{Label: "DOP"}, Y: Scale{Label: "queries per hour", Zero: true, Format: FmtCompact}}
	var dops []float64
	for _, p := range pd.Points {
		dops = append(dops, float64(p.DOP))
		name := p.Placement + " " + p.Query
		i := slices.IndexFunc(c.Series, func(sr Series) bool { return sr.Name == name })
		if i < 0 {
			c.Series = append(c.Series, Series{Name: name})
			i = len(c.Series) - 1
		}
		c.Series[i].Points = append(c.Series[i].Points,
			Point{X: float64(p.DOP), Y: p.QPH, Lo: slices.Min(p.QPHRepeats), Hi: slices.Max(p.QPHRepeats)})
	}
	c.X = StreamsScale("DOP", dops)
	s.Figures = append(s.Figures, Plot{ID: c.ID, SVG: template.HTML(c.SVG())})
	tb := Table{ID: AnchorPlacedDOP + "-table",
		Caption: "Median over repeats; fewest queries: the fewest one repeat finished in its window",
		Head: []string{"run", "placement", "query", "DOP", "repeats", "queries/h", "fewest queries",
			"mean ms", "workers ran on"}}
	for _, p := range pd.Points {
		w := dashIfEmpty(p.Workers)
		if p.Oversubscribed && p.Workers == "" {
			w = "oversubscribed"
		}
		tb.Rows = append(tb.Rows,
			[]string{strconv.FormatInt(p.Run, 10), p.Placement, p.Query, strconv.Itoa(p.DOP), strconv.Itoa(p.Repeats),
				FmtN(p.QPH), fmt.Sprintf("%d in %s s", p.Queries, FmtF(p.WindowS, 1)), FmtF(p.MeanMS, 1), w})
	}
	s.Tables = append(s.Tables, tb)
	s.Notes = append(s.Notes, "Verdict: "+pd.Verdict+".")
	return s
}

// csvPlacedDOP adds the section's rows through row.
func csvPlacedDOP(pd *PlacedDOP, row func(section string, run int64, series, xName string, x float64, metric string,
	v float64, unit string, lo, hi *float64, repeats int)) {
	for _, p := range pd.Points {
		lo, hi := slices.Min(p.QPHRepeats), slices.Max(p.QPHRepeats)
		name := p.Placement + " " + p.Query
		row("placement_dop", p.Run, name, "dop", float64(p.DOP), "throughput", p.QPH, "queries/h", &lo, &hi, p.Repeats)
		row("placement_dop",
			p.Run, name, "dop", float64(p.DOP), "fewest_queries_in_window", float64(p.Queries), "queries", nil, nil, p.Repeats)
		row("placement_dop", p.Run, name, "dop", float64(p.DOP), "mean_latency", p.MeanMS, "ms", nil, nil, p.Repeats)
	}
}
