package tpch

import (
	"cmp"
	"encoding/json"
	"fmt"
	"html/template"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/estimate"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

// Report is what the report shows of tpch runs: one section, of the
// first run, with a row engine's times beside a column engine's; one run
// per engine. Its absence goes unsaid: 'run tpch' has its own command.
var Report = report.Workload{
	Kinds:   []string{RunKind},
	Default: true,
	Variant: report.EngineVariant,
	Build: func(_ *report.Report, runs []*result.Run) (report.Section, error) {
		t, err := buildTPCH(runs[0])
		if err != nil {
			return nil, err
		}
		rc, err := rowColumn(runs)
		if err != nil {
			return nil, err
		}
		return &Section{Run: t, RowColumn: rc}, nil
	},
}

// Section is the tpch section of a report.
type Section struct {
	Run *ReportRun `json:"tpch,omitempty"`
	// RowColumn sets a row engine's TPC-H-derived times beside a column
	// engine's, when runs of both at the same SF on the same host are in
	// the report.
	RowColumn []RowColumn `json:"row_column,omitempty"`
}

var _ report.Section = (*Section)(nil)

// RunLines are the power test's speedups in brief under run's step in
// eval's summary (Analysis.SpeedupLines), when run is the section's.
func (s *Section) RunLines(run int64) []string {
	if s.Run == nil || s.Run.Run != run {
		return nil
	}
	return s.Run.Analysis.SpeedupLines()
}

// CSV writes each query's time and speedup against DOP.
func (sec *Section) CSV(row report.CSVRow) {
	t := sec.Run
	for _, q := range t.Analysis.Queries {
		for _, p := range q.Points {
			row("tpch", t.Run, QueryName(q.Query), "dop", float64(p.DOP), "time", p.Seconds, "s", nil, nil, p.Repeats)
			row("tpch", t.Run, QueryName(q.Query), "dop", float64(p.DOP), "speedup", p.Speedup, "ratio", nil, nil, p.Repeats)
		}
	}
}

// AnchorTPCH is the TPC-H-derived section.
const AnchorTPCH = "tpch"

// ReportRun is a 'numalab run tpch' run: its analysis, as stored with it.
type ReportRun struct {
	Run    int64     `json:"run"`
	Config RunConfig `json:"-"`
	// Stored is Config as the run stored it, shown so in the report's
	// JSON, whatever spelling the run's numalab gave it.
	Stored   json.RawMessage   `json:"config"`
	Version  string            `json:"engine_version,omitempty"`
	Settings map[string]string `json:"settings,omitempty"`
	Analysis Analysis          `json:"analysis"`
	// seconds are each power cell's time, by query and DOP: the repeats
	// a finding's test compares.
	seconds map[[2]int][]float64
}

// buildTPCH reads a tpch run: its stored analysis, or one made from its
// cells when the run stopped before storing it (without the rule of thumb).
func buildTPCH(run *result.Run) (*ReportRun, error) {
	t := &ReportRun{Run: run.ID}
	t.Stored = run.Config
	if len(run.Config) > 0 {
		if err := json.Unmarshal(run.Config, &t.Config); err != nil {
			return nil, fmt.Errorf("reading the configuration of run %d: %w", run.ID, err)
		}
	} else {
		t.Stored, _ = json.Marshal(t.Config) // a RunConfig always marshals
	}
	if inf, err := engine.KindInfo.Last(run); err != nil {
		return nil, err
	} else if inf != nil {
		t.Version, t.Settings = inf.Version, inf.Settings
	}
	an, err := KindAnalysis.Last(run)
	if err != nil {
		return nil, err
	}
	cells, err := KindCell.All(run)
	if err != nil {
		return nil, err
	}
	t.seconds = map[[2]int][]float64{}
	for _, c := range cells {
		if c.Mode == ModePower && c.Cell != nil && (c.Cell.Total.Count > 0 || c.TimedByExplain) {
			k := [2]int{c.Query, c.DOP}
			t.seconds[k] = append(t.seconds[k], c.Seconds)
		}
	}
	fresh := Analyze(cells, nil)
	if an == nil {
		an = &fresh
	}
	t.Analysis = *an
	withRanges(&t.Analysis, fresh)
	return t, nil
}

// withRanges puts back what a stored analysis does not keep (tpch stores
// medians only), from one made again from the run's cells: each point's
// range over repeats and whether EXPLAIN ANALYZE timed it, and the
// throughput test's advice whole (the cells' alone, so a run an older
// numalab stored is judged by today's rules).
func withRanges(a *Analysis, fresh Analysis) {
	for i := range a.Queries {
		for _, q := range fresh.Queries {
			if q.Query != a.Queries[i].Query {
				continue
			}
			for j := range a.Queries[i].Points {
				for _, p := range q.Points {
					if pt := &a.Queries[i].Points[j]; p.DOP == pt.DOP {
						pt.Min, pt.Max, pt.Explained = p.Min, p.Max, p.Explained
						if pt.Cost == 0 { // stored before the cost at every DOP was
							pt.Cost, pt.PlanChanged, pt.EstSpeedup, pt.Departs = p.Cost, p.PlanChanged, p.EstSpeedup, p.Departs
						}
					}
				}
			}
		}
	}
	a.Advice = fresh.Advice
}

// RowColumn is one row engine's TPC-H-derived times against a column
// engine's, query by query at each DOP both ran.
type RowColumn struct {
	Row          int64            `json:"row_run"`
	RowEngine    string           `json:"row_engine"`
	Column       int64            `json:"column_run"`
	ColumnEngine string           `json:"column_engine"`
	SF           float64          `json:"sf"`
	Points       []RowColumnPoint `json:"points"`
}

// RowColumnPoint is one query at one DOP: the median times over repeats
// and how many times longer the row engine took, with its interval.
type RowColumnPoint struct {
	Query         int         `json:"query"`
	DOP           int         `json:"dop"`
	RowSeconds    float64     `json:"row_seconds"`
	ColumnSeconds float64     `json:"column_seconds"`
	Ratio         stats.Ratio `json:"row_over_column"`
}

// rowEngines store rows; the others (DuckDB) columns.
var rowEngines = []string{"postgres", "sqlite"}

// rowColumn pairs each row engine's tpch run with the column engine's,
// when both ran the same data (SF and seed) on the same host.
func rowColumn(runs []*result.Run) ([]RowColumn, error) {
	var rows, cols []*ReportRun
	hosts := map[int64]string{}
	for _, run := range runs {
		t, err := buildTPCH(run)
		if err != nil {
			return nil, err
		}
		hosts[t.Run] = run.Host
		if slices.Contains(rowEngines, t.Config.Engine) {
			rows = append(rows, t)
		} else {
			cols = append(cols, t)
		}
	}
	var out []RowColumn
	for _, r := range rows {
		for _, c := range cols {
			if hosts[r.Run] != hosts[c.Run] || r.Config.SF != c.Config.SF || r.Config.Seed != c.Config.Seed {
				continue
			}
			rc := RowColumn{Row: r.Run, RowEngine: r.Config.Engine, Column: c.Run,
				ColumnEngine: c.Config.Engine, SF: r.Config.SF}
			for _, k := range sortedPairs(r.seconds) {
				cs, ok := c.seconds[k]
				if !ok {
					continue
				}
				rs := r.seconds[k]
				rc.Points = append(rc.Points, RowColumnPoint{Query: k[0], DOP: k[1], RowSeconds: stats.Median(rs),
					ColumnSeconds: stats.Median(cs), Ratio: stats.RatioOf(cs, rs)})
			}
			if len(rc.Points) > 0 {
				out = append(out, rc)
			}
		}
	}
	return out, nil
}

// sortedPairs are the (query, DOP) keys of m, by query then DOP.
func sortedPairs(m map[[2]int][]float64) [][2]int {
	var ks [][2]int
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b [2]int) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	return ks
}

// rowColumnTable sets a row engine's times beside a column engine's.
func rowColumnTable(rc RowColumn) report.Table {
	t := report.Table{ID: fmt.Sprintf("%s-row-column-%d-%d", AnchorTPCH, rc.Row, rc.Column),
		Caption: fmt.Sprintf("Rows against columns at SF %g on this host: %s (run %d) over %s (run %d), each query "+
			"alone at each DOP both ran; the ratio is how many times longer the row engine took, the Hodges-Lehmann "+
			"estimate over repeats with its %.0f%% interval",
			rc.SF, rc.RowEngine, rc.Row, rc.ColumnEngine, rc.Column, 100*stats.Confidence),
		Head: []string{"query", "DOP", rc.RowEngine + ", s", rc.ColumnEngine + ", s", "row / column", "interval", "repeats"}}
	for _, p := range rc.Points {
		iv := "too few repeats"
		if p.Ratio.HasCI {
			iv = fmt.Sprintf("[%s, %s]", report.FmtF(p.Ratio.Lo, 2), report.FmtF(p.Ratio.Hi, 2))
		}
		t.Rows = append(t.Rows,
			[]string{QueryName(p.Query), strconv.Itoa(p.DOP), report.FmtF(p.RowSeconds, 4), report.FmtF(p.ColumnSeconds, 4),
				report.FmtF(p.Ratio.Estimate, 2) + "×", iv, fmt.Sprintf("%d+%d", p.Ratio.NB, p.Ratio.NA)})
	}
	return t
}

// HTML is the TPC-H-derived section: speedup against DOP, the row and
// column engines side by side, plan changes, the cost fit and the DOP
// advice.
func (sec *Section) HTML(r *report.Report) []report.HTMLSection {
	t := sec.Run
	s := report.HTMLSection{ID: AnchorTPCH, Title: "TPC-H-derived queries"}
	a := t.Analysis
	s.Intro = fmt.Sprintf("Run %d: %d TPC-H-derived queries on %s %s at SF %g (TPC-H-derived, not audited: no "+
		"figure here is a QphH). Power test: each query alone on one stream at each DOP; its time is the median "+
		"over repeats of its mean in a %v window. Speedup is against the lowest DOP.",
		t.Run, len(a.Queries), t.Config.Engine, t.Version, t.Config.SF, t.Config.Duration)
	var dops []float64
	for _, d := range t.Config.DOP {
		dops = append(dops, float64(d))
	}
	sp := &report.Chart{ID: AnchorTPCH + "-speedup", Title: "Speedup against DOP, one line per query (dashed grey: ideal)",
		X: report.Scale{Label: "DOP", Ticks: dops, Format: report.FmtSig},
		Y: report.Scale{Label: "speedup against the lowest DOP", Zero: true, Format: report.FmtSig}, Ideal: true}
	var ys []float64
	best := report.Table{ID: AnchorTPCH + "-best", Caption: "Best DOP per query, where it stops scaling (the " +
		"next DOP gains less than 10%), and the rule of thumb ('numalab model dop') for the plan's cost",
		Head: []string{"query", "time at the lowest DOP, s", "best DOP", "speedup there", "stops scaling at",
			"rule-of-thumb DOP", "plan cost", "DOP the engine used"}}
	var timedByExplain []string
	for _, q := range a.Queries {
		sr := report.Series{Name: QueryName(q.Query)}
		var used, explained []string
		bestSp := 1.0
		for _, p := range q.Points {
			if p.Explained {
				explained = append(explained, strconv.Itoa(p.DOP))
			}
			sr.Points = append(sr.Points, report.Point{X: float64(p.DOP), Y: p.Speedup})
			ys = append(ys, p.Speedup, float64(p.DOP))
			if p.DOP == q.BestDOP {
				bestSp = p.Speedup
			}
			if p.Used > 0 {
				used = append(used, fmt.Sprintf("%d→%d", p.DOP, p.Used))
			}
		}
		sp.Series = append(sp.Series, sr)
		stops, rule := "scales to the last DOP", "-"
		if q.StopsAt > 0 {
			stops = strconv.Itoa(q.StopsAt)
		}
		if q.Rule != nil {
			rule = strconv.Itoa(q.Rule.DOP)
		}
		first := report.FmtF(q.Points[0].Seconds, 4)
		if q.Points[0].Explained {
			first += " (EXPLAIN ANALYZE)"
		}
		if len(explained) > 0 {
			timedByExplain = append(timedByExplain, QueryName(q.Query)+" at DOP "+strings.Join(explained, ", "))
		}
		best.Rows = append(best.Rows,
			[]string{QueryName(q.Query), first, strconv.Itoa(q.BestDOP), report.FmtF(bestSp, 2) + "×", stops, rule,
				report.FmtN(q.Cost), report.OrDash(strings.Join(used, ", "))})
	}
	if len(timedByExplain) > 0 {
		s.Notes = append(s.Notes, "No run finished in the window, so the time is PostgreSQL's EXPLAIN ANALYZE's "+
			"one run (marked EXPLAIN ANALYZE), for: "+strings.Join(timedByExplain, "; ")+". Each such time is one run a repeat.")
	}
	sp.Y.Fit(ys)
	s.Figures = append(s.Figures, report.Plot{ID: sp.ID, SVG: template.HTML(sp.SVG())})
	s.Tables = append(s.Tables, best)
	if lt, ok := ladderTable(a); ok {
		s.Tables = append(s.Tables, lt)
	}
	if a.RuleNote != "" {
		s.Notes = append(s.Notes, a.RuleNote+".")
	}
	if est, ok := estimateTable(a); ok {
		s.Tables = append(s.Tables, est)
	}
	changes := report.Table{ID: AnchorTPCH + "-plans",
		Caption: fmt.Sprintf("Plan changes between consecutive DOPs: %d", len(a.Changes)),
		Head:    []string{"query", "from DOP", "to DOP", "operators gone", "operators new"}}
	for _, c := range a.Changes {
		changes.Rows = append(changes.Rows, []string{QueryName(c.Query), strconv.Itoa(c.FromDOP), strconv.Itoa(c.DOP),
			report.OrDash(strings.Join(c.Removed, ", ")), report.OrDash(strings.Join(c.Added, ", "))})
	}
	if len(changes.Rows) == 0 {
		changes.Rows = append(changes.Rows, []string{"none", "–", "–", "–", "–"})
	}
	s.Tables = append(s.Tables, changes)
	for _, rc := range sec.RowColumn {
		s.Tables = append(s.Tables, rowColumnTable(rc))
	}
	if f := a.Cost; f != nil {
		cc := &report.Chart{ID: AnchorTPCH + "-cost", Title: fmt.Sprintf(
			"Estimated cost against measured time at DOP %d (line: %.3g s per unit, the median ratio)", f.DOP, f.SecondsPerUnit),
			X: report.Scale{Label: "estimated cost (" + f.Unit + ")", Log: 10, Format: report.FmtCompact},
			Y: report.Scale{Label: "seconds", Log: 10, Format: report.FmtSig}}
		var xs, ys []float64
		on, off := report.Series{Name: "within 2× of the line", Marks: true},
			report.Series{Name: "more than 2× off", Marks: true}
		for _, p := range f.Points {
			xs, ys = append(xs, p.Cost), append(ys, p.Seconds)
			if p.Error > 2 || p.Error < 0.5 {
				off.Points = append(off.Points, report.Point{X: p.Cost, Y: p.Seconds})
			} else {
				on.Points = append(on.Points, report.Point{X: p.Cost, Y: p.Seconds})
			}
		}
		cc.X.Fit(xs)
		cc.Y.Fit(append(ys, cc.X.Min*f.SecondsPerUnit, cc.X.Max*f.SecondsPerUnit))
		line := report.Series{Name: "fitted",
			Points: []report.Point{{X: cc.X.Min, Y: cc.X.Min * f.SecondsPerUnit}, {X: cc.X.Max, Y: cc.X.Max * f.SecondsPerUnit}}}
		cc.Series = append(cc.Series, line, on, off)
		s.Figures = append(s.Figures, report.Plot{ID: cc.ID, SVG: template.HTML(cc.SVG())})
		ct := report.Table{ID: AnchorTPCH + "-cost-table",
			Caption: "The cost model's largest errors: measured time over the fitted line's",
			Head:    []string{"query", "cost", "seconds", "error", "operators"}}
		for _, p := range f.Largest(len(f.Points)) {
			ct.Rows = append(ct.Rows, []string{QueryName(p.Query), report.FmtN(p.Cost), report.FmtF(p.Seconds, 4),
				report.FmtF(p.Error, 2) + "×", strings.Join(p.Operators, ", ")})
		}
		s.Tables = append(s.Tables, ct)
		var offQ []string
		for _, q := range f.Off {
			offQ = append(offQ, QueryName(q))
		}
		s.Notes = append(s.Notes, fmt.Sprintf(
			"More than 2× off the line: %s; the plan operators they all have (and most queries on the line lack): %s.",
			report.OrDash(strings.Join(offQ, ", ")), report.OrDash(strings.Join(f.Common, ", "))))
		if pageCosts(t.Config.Engine) {
			var probe *result.IORatio
			if r.IO != nil && r.IO.Probe != nil {
				probe = r.IO.Probe.Ratio
			}
			s.Notes = append(s.Notes, StorageAdvice(t.Settings, probe, f)...)
		}
	}
	if adv := a.Advice; adv != nil {
		dt := report.Table{ID: AnchorTPCH + "-dop", Caption: "Throughput test: S streams, each the queries in its " +
			"own order; queries per hour of all streams (median [min–max] over repeats) and the slowest query's mean time",
			Head: []string{"streams", "DOP", "queries per hour", "slowest query, s", "repeats", "verdict"}}
		for _, ps := range adv.PerStreams {
			for _, p := range ps.Points {
				var v []string
				if p.DOP == ps.BestQPH {
					switch {
					case p.Repeats < 2:
						v = append(v, "most queries per hour (one repeat: no spread measured)")
					case ps.Clear:
						v = append(v, "most queries per hour, clear of the other DOPs' ranges")
					default:
						v = append(v, "most queries per hour, within another DOP's range")
					}
				}
				if p.DOP == ps.BestSlowest {
					v = append(v, "shortest slowest query")
				}
				if ps.BestQPH == 0 {
					v = append(v, "at every DOP the median repeat finished no query: nothing to choose by (lengthen --duration)")
				}
				qph, slowest := fmt.Sprintf("%s [%s–%s]", report.FmtN(p.QPH), report.FmtN(p.QPHMin), report.FmtN(p.QPHMax)),
					fmt.Sprintf("%s (%s)", report.FmtF(p.Slowest, 3), QueryName(p.SlowestQuery))
				if p.QPHMax == 0 {
					qph, slowest = "none finished", "-"
				}
				dt.Rows = append(dt.Rows, []string{strconv.Itoa(ps.Streams), strconv.Itoa(p.DOP), qph, slowest,
					strconv.Itoa(p.Repeats), report.OrDash(strings.Join(v, ", "))})
			}
		}
		s.Tables = append(s.Tables, dt)
		switch {
		case adv.Serial > 0:
			s.Notes = append(s.Notes,
				fmt.Sprintf("With %d or more concurrent streams, DOP 1 gives the most queries per hour.", adv.Serial))
		case adv.NeverSerial():
			s.Notes = append(s.Notes, "At no stream count measured does DOP 1 give the most queries per hour.")
		}
	}
	return []report.HTMLSection{s}
}

// ladderTable is the DOP rule of thumb's ladder in cost units and, when
// its threshold was a time, in seconds by the run's fit; false without a
// rule.
func ladderTable(a Analysis) (report.Table, bool) {
	r := a.Rule
	if r == nil {
		return report.Table{}, false
	}
	caption := fmt.Sprintf("The DOP rule of thumb's ladder: serial below cost %s, DOP 2 from there, doubled for "+
		"every 4× of cost, up to one socket's %d cores", report.FmtN(r.Threshold), r.CoresPerSocket)
	if r.SecondsPerUnit > 0 {
		caption += fmt.Sprintf("; the threshold is %s s, turned into cost by this run's fitted %.3g s per cost unit",
			report.FmtF(r.ThresholdSeconds, 3), r.SecondsPerUnit)
	}
	t := report.Table{ID: AnchorTPCH + "-rule", Caption: caption, Head: []string{"DOP", "from plan cost", "from seconds"}}
	for _, g := range a.Rungs() {
		secs := "-"
		if g.Seconds > 0 {
			secs = report.FmtF(g.Seconds, 3)
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(g.DOP), report.FmtN(g.Cost), secs})
	}
	return t, len(t.Rows) > 0
}

// estimateTable sets the optimizer's estimated speedup (plan cost at the
// lowest DOP over the cost at each DOP) beside the measured one; false
// when no point has an estimate (the engine's cost does not price DOP).
func estimateTable(a Analysis) (report.Table, bool) {
	return report.EstimateTable(AnchorTPCH+"-estimate", "", a.Estimates())
}

// Text is the TPC-H-derived section of the terminal report.
func (sec *Section) Text(b *strings.Builder, _ *report.Report) {
	b.WriteString("\nTPC-H-derived queries (not audited: no figure here is a QphH)\n")
	textTPCH(b, sec.Run)
}

func textTPCH(b *strings.Builder, t *ReportRun) {
	a := t.Analysis
	fmt.Fprintf(b, "  run %d: %d queries on %s %s at SF %g; power test per query and DOP, %v window, median of "+
		"repeats; speedup against the lowest DOP\n",
		t.Run, len(a.Queries), t.Config.Engine, t.Version, t.Config.SF, t.Config.Duration)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "    query\tDOP\tseconds\tmin-max\tspeedup\testimated\tbest DOP\tstops scaling at\t")
	for _, q := range a.Queries {
		stops := "-"
		if q.StopsAt > 0 {
			stops = strconv.Itoa(q.StopsAt)
		}
		for _, p := range q.Points {
			secs := report.FmtF(p.Seconds, 4)
			if p.Explained {
				secs += " (EXPLAIN ANALYZE)"
			}
			est := "-"
			if p.EstSpeedup > 0 {
				est = report.FmtF(p.EstSpeedup, 2) + "×"
				r := estimate.Row{Estimated: p.EstSpeedup, Measured: p.Speedup, Departs: p.Departs, PlanChanged: p.PlanChanged}
				if f := r.Flags(); len(f) > 0 {
					est += " (" + strings.Join(f, ", ") + ")"
				}
			}
			fmt.Fprintf(tw, "    %s\t%d\t%s\t%s-%s\t%s×\t%s\t%d\t%s\t\n", QueryName(q.Query), p.DOP,
				secs, report.FmtF(p.Min, 4), report.FmtF(p.Max, 4), report.FmtF(p.Speedup, 2), est, q.BestDOP, stops)
		}
	}
	tw.Flush()
	fmt.Fprintf(b, "  plan changes between consecutive DOPs: %d\n", len(a.Changes))
	if adv := a.Advice; adv != nil {
		for _, ps := range adv.PerStreams {
			for _, p := range ps.Points {
				if p.QPHMax == 0 {
					fmt.Fprintf(b, "  throughput test, %s at DOP %d: no query finished in the window, %d repeats\n",
						report.Plural(ps.Streams, "stream"), p.DOP, p.Repeats)
					continue
				}
				fmt.Fprintf(b, "  throughput test, %s at DOP %d: %s queries per hour [%s-%s], %d repeats\n",
					report.Plural(ps.Streams, "stream"), p.DOP, report.FmtN(p.QPH), report.FmtN(p.QPHMin),
					report.FmtN(p.QPHMax), p.Repeats)
			}
		}
	}
}

// Findings say which queries scaled with DOP and which server-wide
// DOP the throughput test supports, as firmly as its repeats' ranges.
func (sec *Section) Findings(_ *report.Report, add, _ report.Say) {
	t := sec.Run
	a := t.Analysis
	what := fmt.Sprintf("TPC-H on %s, SF %g (run %d)", t.Config.Engine, t.Config.SF, t.Run)
	var top, stop, explained []string
	shown, n := 0, 0
	for _, q := range a.Queries {
		if len(q.Points) < 2 {
			continue
		}
		for _, p := range q.Points {
			if p.Explained {
				explained = append(explained, QueryName(q.Query))
				break
			}
		}
		first, last := q.Points[0], q.Points[len(q.Points)-1]
		if q.BestDOP == last.DOP && q.StopsAt == 0 {
			d := stats.Compare(t.seconds[[2]int{q.Query, first.DOP}], t.seconds[[2]int{q.Query, last.DOP}])
			if d.Verdict == stats.Lower {
				shown++
			}
			n = max(n, d.A.N, d.B.N)
			top = append(top, fmt.Sprintf("%s %s×", QueryName(q.Query), report.FmtF(last.Speedup, 2)))
		} else {
			stop = append(stop, fmt.Sprintf("%s at DOP %d", QueryName(q.Query), max(q.StopsAt, q.BestDOP)))
		}
	}
	if len(top)+len(stop) > 0 {
		test := fmt.Sprintf("a U test shows the gain for %d of them", shown)
		switch {
		case len(top) == 0:
			test = "none gained to the last"
		case n < 4:
			test = fmt.Sprintf("at most %d repeats a DOP, too few for a U test", n)
		}
		timed := ""
		if len(explained) > 0 {
			timed = fmt.Sprintf("; %s timed by one EXPLAIN ANALYZE", strings.Join(explained, ", "))
		}
		add(AnchorTPCH+"-best",
			"%s: %d of %d queries ran fastest at the highest DOP (%s), and stopped scaling: %s (medians; %s%s).",
			what, len(top), len(top)+len(stop), report.OrDash(strings.Join(top, ", ")),
			report.OrDash(strings.Join(stop, ", ")), test, timed)
	}
	if adv := a.Advice; adv != nil {
		for _, ps := range adv.PerStreams {
			var best *Throughput
			var others []string
			for i, p := range ps.Points {
				if p.DOP == ps.BestQPH {
					best = &ps.Points[i]
					continue
				}
				others = append(others, fmt.Sprintf("%s at DOP %d", report.FmtN(p.QPH), p.DOP))
			}
			if best == nil || len(others) == 0 {
				continue
			}
			how := fmt.Sprintf("the ranges over %d repeats overlap: not settled", best.Repeats)
			switch {
			case best.Repeats < 2:
				how = "one repeat, no spread: not settled"
			case ps.Clear:
				how = fmt.Sprintf("clear of the others' ranges over %d repeats", best.Repeats)
			}
			add(AnchorTPCH+"-dop", "%s, throughput test with %s: DOP %d gave the most queries per hour, %s against %s (%s).",
				what, report.Plural(ps.Streams, "stream"), best.DOP, report.FmtN(best.QPH), strings.Join(others, ", "), how)
		}
	}
}
