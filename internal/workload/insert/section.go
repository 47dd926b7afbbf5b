package insert

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
	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

// AnchorInsert is the concurrent-loading section of the report.
const AnchorInsert = "insert"

// Report is what the report shows of insert runs: one section, one run
// per engine, method and key. Its absence goes unsaid: eval does not
// load.
var Report = report.Workload{
	Kinds:   []string{RunKind},
	Default: true,
	Variant: variant,
	Build: func(_ *report.Report, runs []*result.Run) (report.Section, error) {
		sec := &Section{}
		for _, run := range runs {
			in, err := buildInsert(run)
			if err != nil {
				return nil, err
			}
			sec.Runs = append(sec.Runs, *in)
		}
		slices.SortFunc(sec.Runs, func(a, b ReportRun) int { return cmp.Compare(a.Run, b.Run) })
		return sec, nil
	},
	Figures: figures,
}

// Section is the insert runs' section of a report: one entry per run.
type Section struct {
	Runs []ReportRun `json:"insert,omitempty"`
}

var _ report.Section = (*Section)(nil)

// variant is an insert run's engine, method, indexes and key: "on
// postgres copy, indexed".
func variant(run *result.Run) string {
	var c struct {
		Engine  string `json:"engine"`
		Method  string `json:"method"`
		Indexes bool   `json:"indexes"`
		Key     string `json:"key"`
	}
	// An unreadable configuration is reported when the section is built;
	// here it is one more variant.
	if err := json.Unmarshal(run.Config, &c); err != nil {
		return "with an unreadable configuration"
	}
	return "on " + insertLabel(c.Engine, insertMethod(c.Engine, c.Method), c.Indexes, c.Key)
}

// CSV writes every insert cell's figures.
func (sec *Section) CSV(row report.CSVRow) {
	for _, in := range sec.Runs {
		for _, s := range in.Series {
			name := in.Label + ", " + s.Placement
			for _, p := range s.Points {
				x := float64(p.Streams)
				row("insert", in.Run, name, "streams", x, "rows", p.RowsPerSec, "rows/s", &p.RowsMin, &p.RowsMax, p.Repeats)
				row("insert", in.Run, name, "streams", x, "bandwidth", p.MBPerSec, "MB/s", nil, nil, p.Repeats)
				row("insert", in.Run, name, "streams", x, "p95_batch_latency", p.P95MS, "ms", nil, nil, p.Repeats)
				row("insert", in.Run, name, "streams", x, "cpu_busy", p.CPUBusyPct, "%", nil, nil, p.Repeats)
				row("insert", in.Run, name, "streams", x, "context_switches", p.CtxPerSec, "1/s", nil, nil, p.Repeats)
			}
		}
	}
}

// figures are an insert run's rows per second, per placement and
// streams, a value a repeat: what 'numalab compare' sets side by side.
func figures(in *result.Run) ([]report.Figure, error) {
	x, err := buildInsert(in)
	if err != nil {
		return nil, err
	}
	var out []report.Figure
	for _, s := range x.Series {
		for _, p := range s.Points {
			out = append(out, report.NewFigure(fmt.Sprintf("%s, %s, %s: rows loaded", x.Label, s.Placement,
				report.Plural(p.Streams, "stream")), "rows/s", p.RowsRepeats...))
		}
	}
	return out, nil
}

// ReportRun is a 'numalab run insert' run: bulk loading into one table
// against streams, per placement.
type ReportRun struct {
	Run       int64          `json:"run"`
	Engine    string         `json:"engine"`
	Version   string         `json:"engine_version,omitempty"`
	Method    string         `json:"method"`  // copy or insert (PostgreSQL), appender (DuckDB), insert (SQLite)
	Indexes   bool           `json:"indexes"` // PostgreSQL's table had a primary key and an index
	Label     string         `json:"label"`   // engine and method: "postgres copy, indexed"
	Batch     int            `json:"batch"`   // rows per batch
	RowBytes  int            `json:"row_bytes"`
	DurationS float64        `json:"duration_s"`
	WarmupS   float64        `json:"warmup_s"`
	Series    []ReportSeries `json:"series"`
	// Drops are the run's own findings, a cell that loaded less than one
	// of fewer streams, their placement named as the series'.
	Drops []Finding `json:"drops,omitempty"`
	Notes []string  `json:"notes,omitempty"`
}

// ReportSeries is one placement over stream counts.
type ReportSeries struct {
	Placement string        `json:"placement"` // the selector; "all CPUs" when none
	Points    []ReportPoint `json:"points"`
}

// ReportPoint is one stream count of a placement: medians over repeats,
// with the repeats' min and max of rows/s and each repeat's value.
type ReportPoint struct {
	Streams     int       `json:"streams"`
	Repeats     int       `json:"repeats"`
	StreamCPUs  string    `json:"stream_cpus"`
	RowsPerSec  float64   `json:"rows_per_s"`
	RowsMin     float64   `json:"rows_per_s_min"`
	RowsMax     float64   `json:"rows_per_s_max"`
	RowsRepeats []float64 `json:"rows_per_s_repeats"`
	// MBPerSec is RowsPerSec × RowBytes / 10⁶: the rows' values, not what
	// the engine writes.
	MBPerSec   float64 `json:"mb_per_s"`
	P95MS      float64 `json:"p95_batch_ms"`
	CPUBusyPct float64 `json:"cpu_busy_pct"`
	CtxPerSec  float64 `json:"ctx_switches_per_s"`
	// LockWaitPct is SQLite's share of the streams' time waiting for the
	// write lock; Waits PostgreSQL's wait events over every repeat's
	// samples, most frequent first.
	LockWaitPct float64     `json:"lock_wait_pct,omitempty"`
	Waits       []WaitShare `json:"waits,omitempty"`
	// Dominant is where the time went in the repeat nearest the median.
	Dominant    string `json:"dominant"`
	Empty       int    `json:"empty_repeats,omitempty"`
	Stopped     int    `json:"stopped_streams,omitempty"`
	Interrupted bool   `json:"interrupted,omitempty"`
}

// insertMethod is how an engine's streams load, as the insert workload
// names it (its dialect's method): PostgreSQL's by the configuration.
func insertMethod(engineName, method string) string {
	if _, d, ok := dialectOf(engineName); ok {
		return d.method(method)
	}
	return "insert"
}

// insertLabel names an engine and method: "postgres copy, indexed".
func insertLabel(engineName, method string, indexes bool, key string) string {
	s := engineName + " " + method
	if indexes {
		s += ", indexed"
	}
	if key != "" && key != "none" {
		s += ", key " + key
	}
	return s
}

func buildInsert(run *result.Run) (*ReportRun, error) {
	var cfg RunConfig
	if len(run.Config) > 0 {
		if err := json.Unmarshal(run.Config, &cfg); err != nil {
			return nil, fmt.Errorf("reading the configuration of run %d: %w", run.ID, err)
		}
	}
	in := &ReportRun{Run: run.ID, Engine: cfg.Engine, Method: insertMethod(cfg.Engine, cfg.Method), Indexes: cfg.Indexes,
		Batch: cfg.Batch, RowBytes: RowBytes, DurationS: cfg.Duration.Seconds(), WarmupS: cfg.Warmup.Seconds()}
	in.Label = insertLabel(in.Engine, in.Method, in.Indexes, cfg.Key)
	if inf, err := engine.KindInfo.Last(run); err != nil {
		return nil, err
	} else if inf != nil {
		in.Version = inf.Version
	}
	cells, err := result.KindCell.All(run)
	if err != nil {
		return nil, err
	}
	sts, err := KindCellStats.All(run)
	if err != nil {
		return nil, err
	}
	if in.Drops, err = KindFinding.All(run); err != nil {
		return nil, err
	}
	byIndex := map[int]CellStats{}
	for _, st := range sts {
		byIndex[st.Index] = st
	}
	type key struct {
		placement string
		streams   int
	}
	type repeat struct {
		cell  result.Cell
		stats CellStats
	}
	groups := map[key][]repeat{}
	var placements []string
	var missing []string
	labels := map[int]string{}
	for _, c := range cells {
		labels[c.Index] = c.PlacementLabel()
		st, ok := byIndex[c.Index]
		if !ok {
			missing = append(missing, fmt.Sprint(c.Index))
			continue
		}
		pl := c.PlacementLabel()
		if !slices.Contains(placements, pl) {
			placements = append(placements, pl)
		}
		k := key{pl, c.Streams}
		groups[k] = append(groups[k], repeat{c, st})
	}
	for i, f := range in.Drops {
		if l, ok := labels[f.Index]; ok {
			in.Drops[i].Placement = l
		}
	}
	for _, pl := range placements {
		s := ReportSeries{Placement: pl}
		var streams []int
		for k := range groups {
			if k.placement == pl {
				streams = append(streams, k.streams)
			}
		}
		slices.Sort(streams)
		for _, n := range streams {
			rs := groups[key{pl, n}]
			var cs []result.Cell
			var ss []CellStats
			for _, r := range rs {
				cs, ss = append(cs, r.cell), append(ss, r.stats)
			}
			s.Points = append(s.Points, insertPoint(cs, ss, in.RowBytes))
		}
		in.Series = append(in.Series, s)
	}
	if len(missing) > 0 {
		in.Notes = append(in.Notes, "cells "+strings.Join(missing, ", ")+
			" have no load figures stored (the run stopped between storing the cell and its figures)")
	}
	var empty []string
	for _, s := range in.Series {
		for _, p := range s.Points {
			if p.Empty > 0 {
				empty = append(empty,
					fmt.Sprintf("%s at %s (%d of %d repeats)", s.Placement, report.Plural(p.Streams, "stream"), p.Empty, p.Repeats))
			}
		}
	}
	if len(empty) > 0 {
		in.Notes = append(in.Notes, "cells that completed no batch in their window, counted as 0 rows/s: "+
			strings.Join(empty, "; "))
	}
	if len(cells) == 0 {
		in.Notes = append(in.Notes, "the run stored no cells")
	}
	return in, nil
}

func insertPoint(cells []result.Cell, sts []CellStats, rowBytes int) ReportPoint {
	c0 := cells[0]
	p := ReportPoint{Streams: c0.Streams, Repeats: len(cells),
		StreamCPUs: report.StreamCPUs(c0.CPUs, c0.SpreadCPUs, c0.Streams)}
	var rows, p95, busy, cs, lock []float64
	samples := map[string]int{}
	for i, c := range cells {
		st := sts[i]
		rows = append(rows, st.RowsPerSec)
		if c.Total.Count == 0 {
			p.Empty++
		} else {
			p95 = append(p95, c.Total.P95US/1000)
		}
		if c.Usage != nil {
			busy, cs = append(busy, st.CPUBusyPct), append(cs, st.CtxSwitchesPerSec)
		}
		lock = append(lock, st.LockWaitPct)
		for _, w := range st.Waits {
			samples[w.Event] += w.Samples
		}
		p.Stopped += len(c.Stopped)
		p.Interrupted = p.Interrupted || c.Interrupted
	}
	p.RowsPerSec, p.RowsMin, p.RowsMax, p.RowsRepeats = stats.Median(rows), slices.Min(rows), slices.Max(rows), rows
	p.MBPerSec = p.RowsPerSec * float64(rowBytes) / 1e6
	p.P95MS, p.CPUBusyPct, p.CtxPerSec, p.LockWaitPct = stats.Median(p95), stats.Median(busy),
		stats.Median(cs), stats.Median(lock)
	total := 0
	for _, n := range samples {
		total += n
	}
	for ev, n := range samples {
		p.Waits = append(p.Waits, WaitShare{Event: ev, Samples: n, Pct: 100 * float64(n) / float64(total)})
	}
	slices.SortFunc(p.Waits, func(a, b WaitShare) int {
		if a.Samples != b.Samples {
			return b.Samples - a.Samples
		}
		return strings.Compare(a.Event, b.Event)
	})
	near := 0
	for i, st := range sts {
		if absF(st.RowsPerSec-p.RowsPerSec) < absF(sts[near].RowsPerSec-p.RowsPerSec) {
			near = i
		}
	}
	p.Dominant = sts[near].Dominant
	return p
}

func absF(v float64) float64 { return max(v, -v) }

// AnchorInsertTable is the insert runs' cells table.
const AnchorInsertTable = AnchorInsert + "-table"

// Findings carry each run's own findings (a cell that loaded less
// than a cell of fewer streams) into the report, once per placement and
// pair of stream counts, with how many repeats showed it and what a test
// over the repeats allows.
func (sec *Section) Findings(_ *report.Report, add, detail report.Say) {
	for _, in := range sec.Runs {
		type pair struct {
			placement string
			from, to  int
		}
		seen := map[pair]int{}
		var order []pair
		for _, f := range in.Drops {
			k := pair{f.Placement, f.FromStreams, f.ToStreams}
			if seen[k] == 0 {
				order = append(order, k)
			}
			seen[k]++
		}
		for _, k := range order {
			from, to := insertPointAt(in, k.placement, k.from), insertPointAt(in, k.placement, k.to)
			if from == nil || to == nil || !(from.RowsPerSec > 0) {
				continue
			}
			d := stats.Compare(from.RowsRepeats, to.RowsRepeats)
			what := fmt.Sprintf("on %s (%s, run %d): %s rows/s at %s against %s at %d (%s; a fall in %d of %d repeats; %s)",
				in.Label, k.placement, in.Run, report.FmtN(to.RowsPerSec), report.Plural(k.to, "stream"),
				report.FmtN(from.RowsPerSec), k.from,
				report.Pct(to.RowsPerSec/from.RowsPerSec-1), seen[k], min(from.Repeats, to.Repeats), report.Evidence(d))
			switch {
			case d.Verdict == stats.Lower:
				add(AnchorInsertTable, "More streams loaded less %s.", what)
			case to.RowsPerSec < from.RowsPerSec:
				add(AnchorInsertTable, "More streams measured lower %s.", what)
			default:
				detail(AnchorInsertTable, "More streams did not load less over the repeats %s.", what)
			}
		}
		for _, n := range in.Notes {
			detail(AnchorInsertTable, "Insert run %d: %s.", in.Run, n)
		}
	}
}

func insertPointAt(in ReportRun, placement string, streams int) *ReportPoint {
	for i := range in.Series {
		if in.Series[i].Placement != placement {
			continue
		}
		for j := range in.Series[i].Points {
			if p := &in.Series[i].Points[j]; p.Streams == streams {
				return p
			}
		}
	}
	return nil
}

// HTML is the insert section: rows/s against streams of every run, and
// every cell.
func (sec *Section) HTML(r *report.Report) []report.HTMLSection {
	s := report.HTMLSection{ID: AnchorInsert, Title: "Concurrent loading into one table",
		Shows: []preflight.Figure{preflight.Scaling}}
	if len(sec.Runs) == 0 {
		s.Absent = report.AbsentText(r, AnchorInsert)
		return []report.HTMLSection{s}
	}
	var runs []string
	for _, in := range sec.Runs {
		v := ""
		if in.Version != "" {
			v = " (engine version " + in.Version + ")"
		}
		runs = append(runs, fmt.Sprintf("run %d: %s%s, batches of %s rows, %s s measured after %s s warm-up per cell",
			in.Run, in.Label, v, report.FmtN(float64(in.Batch)), report.FmtF(in.DurationS, 1), report.FmtF(in.WarmupS, 1)))
	}
	s.Intro = fmt.Sprintf("S streams each load batches of rows into one shared table in a closed loop (%s). Rows/s "+
		"count batches completed in the window, all streams together; MB/s is rows/s × %d bytes of values a row, "+
		"not what the engine writes. CPU busy is the placement's CPUs'; context switches are the whole machine's. "+
		"Where the time went: SQLite's write-lock wait, PostgreSQL's wait events sampled from pg_stat_activity; "+
		"DuckDB has none to sample. Each figure is the median over repeats, [min–max] the repeats'.",
		strings.Join(runs, "; "), RowBytes)
	var xs []float64
	for _, in := range sec.Runs {
		for _, sr := range in.Series {
			for _, p := range sr.Points {
				xs = append(xs, float64(p.Streams))
			}
		}
	}
	c := report.Chart{ID: AnchorInsert + "-rows", Title: "Rows loaded per second against streams",
		X:       report.StreamsScale("streams", xs),
		Y:       report.Scale{Label: "rows/s (all streams)", Zero: true, Format: report.FmtCompact},
		Y2Label: fmt.Sprintf("MB/s (%d B a row)", RowBytes), Y2Factor: float64(RowBytes) / 1e6}
	tb := report.Table{ID: AnchorInsertTable, Caption: "Cells: median over repeats [min–max]; context switches " +
		"per second are in the text report and the CSV, the CPUs each stream ran on in the JSON",
		Head: []string{"run", "engine, method", "placement", "streams", "repeats", "rows/s [min–max]", "MB/s",
			"p95 batch ms", "CPU busy %", "where the time went", "wait events sampled"}}
	for _, in := range sec.Runs {
		for _, sr := range in.Series {
			line := report.Series{Name: fmt.Sprintf("%s, %s", in.Label, sr.Placement)}
			for _, p := range sr.Points {
				line.Points = append(line.Points,
					report.Point{X: float64(p.Streams), Y: p.RowsPerSec, Lo: p.RowsMin, Hi: p.RowsMax})
				where := p.Dominant
				if p.Empty > 0 {
					where += fmt.Sprintf(" (%d of %d repeats loaded nothing)", p.Empty, p.Repeats)
				}
				if p.Stopped > 0 {
					where += fmt.Sprintf(" (%s stopped early)", report.Plural(p.Stopped, "stream"))
				}
				tb.Rows = append(tb.Rows, []string{strconv.FormatInt(in.Run, 10), in.Label, sr.Placement,
					strconv.Itoa(p.Streams), strconv.Itoa(p.Repeats),
					report.FmtN(p.RowsPerSec) + " [" + report.FmtN(p.RowsMin) + "–" + report.FmtN(p.RowsMax) + "]",
					report.FmtF(p.MBPerSec, 1), report.FmtF(p.P95MS, 3), report.FmtF(p.CPUBusyPct, 0),
					where, report.OrDash(waitsText(p.Waits, 3))})
			}
			c.Series = append(c.Series, line)
		}
	}
	s.Figures = append(s.Figures, report.Plot{ID: c.ID, SVG: template.HTML(c.SVG())})
	s.Tables = append(s.Tables, tb)
	for _, in := range sec.Runs {
		for _, f := range in.Drops {
			s.Notes = append(s.Notes, fmt.Sprintf("Run %d, cell %d, the run's finding: %s.", in.Run, f.Index, f.Text))
		}
		for _, n := range in.Notes {
			s.Notes = append(s.Notes, fmt.Sprintf("Run %d: %s.", in.Run, n))
		}
	}
	return []report.HTMLSection{s}
}

// waitsText is the n most frequent wait events: "Client:ClientRead 50%, CPU 30%".
func waitsText(ws []WaitShare, n int) string {
	var parts []string
	for i, w := range ws {
		if i == n {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s%%", w.Event, report.FmtF(w.Pct, 0)))
	}
	return strings.Join(parts, ", ")
}

// Text is the insert section of the terminal report.
func (sec *Section) Text(b *strings.Builder, _ *report.Report) {
	b.WriteString("\nConcurrent loading into one table\n")
	for _, in := range sec.Runs {
		textInsert(b, in)
	}
}

func textInsert(b *strings.Builder, in ReportRun) {
	fmt.Fprintf(b, "  run %d: %s (engine version %s), batches of %d rows, %s s measured after %s s warm-up per "+
		"cell; median of repeats [min-max]; MB/s at %d B a row\n",
		in.Run, in.Label, in.Version, in.Batch, report.FmtF(in.DurationS, 1), report.FmtF(in.WarmupS, 1), in.RowBytes)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "    placement\tstreams\trepeats\trows/s\tmin-max\tMB/s\tp95 ms\tCPU %\tcs/s\twhere the time went\t")
	for _, s := range in.Series {
		for _, p := range s.Points {
			fmt.Fprintf(tw, "    %s\t%d\t%d\t%s\t%s-%s\t%s\t%s\t%s\t%s\t%s\t\n", s.Placement, p.Streams, p.Repeats,
				report.FmtN(p.RowsPerSec), report.FmtN(p.RowsMin), report.FmtN(p.RowsMax),
				report.FmtF(p.MBPerSec, 1), report.FmtF(p.P95MS, 3), report.FmtF(p.CPUBusyPct, 0),
				report.FmtN(p.CtxPerSec), p.Dominant)
		}
	}
	tw.Flush()
	for _, f := range in.Drops {
		fmt.Fprintf(b, "  finding (cell %d): %s\n", f.Index, f.Text)
	}
	for _, n := range in.Notes {
		fmt.Fprintf(b, "  note: %s\n", n)
	}
}
