package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/workload/insert"
)

// AnchorInsert is the concurrent-loading section.
const AnchorInsert = "insert"

// InsertRun is a 'numalab run insert' run: bulk loading into one table
// against streams, per placement.
type InsertRun struct {
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
	Series    []InsertSeries `json:"series"`
	// Drops are the run's own findings, a cell that loaded less than one
	// of fewer streams, their placement named as the series'.
	Drops []insert.Finding `json:"drops,omitempty"`
	Notes []string         `json:"notes,omitempty"`
}

// InsertSeries is one placement over stream counts.
type InsertSeries struct {
	Placement string        `json:"placement"` // the selector; "all CPUs" when none
	Points    []InsertPoint `json:"points"`
}

// InsertPoint is one stream count of a placement: medians over repeats,
// with the repeats' min and max of rows/s and each repeat's value.
type InsertPoint struct {
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
	LockWaitPct float64            `json:"lock_wait_pct,omitempty"`
	Waits       []insert.WaitShare `json:"waits,omitempty"`
	// Dominant is where the time went in the repeat nearest the median.
	Dominant    string `json:"dominant"`
	Empty       int    `json:"empty_repeats,omitempty"`
	Stopped     int    `json:"stopped_streams,omitempty"`
	Interrupted bool   `json:"interrupted,omitempty"`
}

// insertMethod is how an engine's streams load, as the insert workload
// names it: PostgreSQL's by the configuration.
func insertMethod(engineName, method string) string {
	switch engineName {
	case "postgres":
		return method
	case "duckdb":
		return "appender"
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

func buildInsert(run *result.Run) (*InsertRun, error) {
	var cfg insert.RunConfig
	if len(run.Config) > 0 {
		if err := json.Unmarshal(run.Config, &cfg); err != nil {
			return nil, fmt.Errorf("reading the configuration of run %d: %w", run.ID, err)
		}
	}
	in := &InsertRun{Run: run.ID, Engine: cfg.Engine, Method: insertMethod(cfg.Engine, cfg.Method), Indexes: cfg.Indexes,
		Batch: cfg.Batch, RowBytes: insert.RowBytes, DurationS: cfg.Duration.Seconds(), WarmupS: cfg.Warmup.Seconds()}
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
	sts, err := insert.KindCellStats.All(run)
	if err != nil {
		return nil, err
	}
	if in.Drops, err = insert.KindFinding.All(run); err != nil {
		return nil, err
	}
	byIndex := map[int]insert.CellStats{}
	for _, st := range sts {
		byIndex[st.Index] = st
	}
	type key struct {
		placement string
		streams   int
	}
	type repeat struct {
		cell  result.Cell
		stats insert.CellStats
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
		s := InsertSeries{Placement: pl}
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
			var ss []insert.CellStats
			for _, r := range rs {
				cs, ss = append(cs, r.cell), append(ss, r.stats)
			}
			s.Points = append(s.Points, insertPoint(cs, ss, in.RowBytes))
		}
		in.Series = append(in.Series, s)
	}
	if len(missing) > 0 {
		in.Notes = append(in.Notes, "cells "+strings.Join(missing, ", ")+" have no load figures stored (the run stopped between storing the cell and its figures)")
	}
	var empty []string
	for _, s := range in.Series {
		for _, p := range s.Points {
			if p.Empty > 0 {
				empty = append(empty, fmt.Sprintf("%s at %s (%d of %d repeats)", s.Placement, Plural(p.Streams, "stream"), p.Empty, p.Repeats))
			}
		}
	}
	if len(empty) > 0 {
		in.Notes = append(in.Notes, "cells that completed no batch in their window, counted as 0 rows/s: "+strings.Join(empty, "; "))
	}
	if len(cells) == 0 {
		in.Notes = append(in.Notes, "the run stored no cells")
	}
	return in, nil
}

func insertPoint(cells []result.Cell, sts []insert.CellStats, rowBytes int) InsertPoint {
	c0 := cells[0]
	p := InsertPoint{Streams: c0.Streams, Repeats: len(cells), StreamCPUs: StreamCPUs(c0.CPUs, c0.SpreadCPUs, c0.Streams)}
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
	p.P95MS, p.CPUBusyPct, p.CtxPerSec, p.LockWaitPct = stats.Median(p95), stats.Median(busy), stats.Median(cs), stats.Median(lock)
	total := 0
	for _, n := range samples {
		total += n
	}
	for ev, n := range samples {
		p.Waits = append(p.Waits, insert.WaitShare{Event: ev, Samples: n, Pct: 100 * float64(n) / float64(total)})
	}
	slices.SortFunc(p.Waits, func(a, b insert.WaitShare) int {
		if a.Samples != b.Samples {
			return b.Samples - a.Samples
		}
		return strings.Compare(a.Event, b.Event)
	})
	near := 0
	for i, st := range sts {
		if abs(st.RowsPerSec-p.RowsPerSec) < abs(sts[near].RowsPerSec-p.RowsPerSec) {
			near = i
		}
	}
	p.Dominant = sts[near].Dominant
	return p
}

func abs(v float64) float64 { return max(v, -v) }

// AnchorInsertTable is the insert runs' cells table.
const AnchorInsertTable = AnchorInsert + "-table"

// insertFindings carry each run's own findings (a cell that loaded less
// than a cell of fewer streams) into the report, once per placement and
// pair of stream counts, with how many repeats showed it and what a test
// over the repeats allows.
func insertFindings(r *Report, add, detail func(anchor, format string, a ...any)) {
	for _, in := range r.Insert {
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
			what := fmt.Sprintf("on %s (%s, run %d): %s loaded %s rows/s against %s with %s (%s, medians over repeats); the run found a fall in %d of %d repeats; dominant wait at %s: %s; %s",
				in.Label, k.placement, in.Run, Plural(k.to, "stream"), FmtN(to.RowsPerSec), FmtN(from.RowsPerSec), Plural(k.from, "stream"),
				Pct(to.RowsPerSec/from.RowsPerSec-1), seen[k], min(from.Repeats, to.Repeats), Plural(k.to, "stream"), to.Dominant, Evidence(d))
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

func insertPointAt(in InsertRun, placement string, streams int) *InsertPoint {
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

func insertSection(r *Report) HTMLSection {
	s := HTMLSection{ID: AnchorInsert, Title: "Concurrent loading into one table"}
	if len(r.Insert) == 0 {
		s.Absent = AbsentText(r, AnchorInsert)
		return s
	}
	var runs []string
	for _, in := range r.Insert {
		v := ""
		if in.Version != "" {
			v = " (engine version " + in.Version + ")"
		}
		runs = append(runs, fmt.Sprintf("run %d: %s%s, batches of %s rows, %s s measured after %s s warm-up per cell",
			in.Run, in.Label, v, FmtN(float64(in.Batch)), FmtF(in.DurationS, 1), FmtF(in.WarmupS, 1)))
	}
	s.Intro = fmt.Sprintf("S streams each load batches of rows into one shared table in a closed loop (%s). Rows/s count batches completed in the window, all streams together; MB/s is rows/s × %d bytes of values a row, not what the engine writes. CPU busy is the placement's CPUs'; context switches are the whole machine's. Where the time went: SQLite's write-lock wait, PostgreSQL's wait events sampled from pg_stat_activity; DuckDB has none to sample. Each figure is the median over repeats, [min–max] the repeats'.",
		strings.Join(runs, "; "), insert.RowBytes)
	var xs []float64
	for _, in := range r.Insert {
		for _, sr := range in.Series {
			for _, p := range sr.Points {
				xs = append(xs, float64(p.Streams))
			}
		}
	}
	c := Chart{ID: AnchorInsert + "-rows", Title: "Rows loaded per second against streams",
		X: StreamsScale("streams", xs), Y: Scale{Label: "rows/s (all streams)", Zero: true, Format: FmtCompact},
		Y2Label: fmt.Sprintf("MB/s (%d B a row)", insert.RowBytes), Y2Factor: float64(insert.RowBytes) / 1e6}
	tb := Table{ID: AnchorInsertTable, Caption: "Cells: median over repeats [min–max]",
		Head: []string{"run", "engine, method", "placement", "streams", "CPUs of the streams", "repeats", "rows/s", "min–max", "MB/s", "p95 batch ms", "CPU busy %", "context switches/s", "where the time went", "wait events sampled"}}
	for _, in := range r.Insert {
		for _, sr := range in.Series {
			line := Series{Name: fmt.Sprintf("%s, %s", in.Label, sr.Placement)}
			for _, p := range sr.Points {
				line.Points = append(line.Points, Point{X: float64(p.Streams), Y: p.RowsPerSec, Lo: p.RowsMin, Hi: p.RowsMax})
				where := p.Dominant
				if p.Empty > 0 {
					where += fmt.Sprintf(" (%d of %d repeats loaded nothing)", p.Empty, p.Repeats)
				}
				if p.Stopped > 0 {
					where += fmt.Sprintf(" (%s stopped early)", Plural(p.Stopped, "stream"))
				}
				tb.Rows = append(tb.Rows, []string{strconv.FormatInt(in.Run, 10), in.Label, sr.Placement, strconv.Itoa(p.Streams), p.StreamCPUs, strconv.Itoa(p.Repeats),
					FmtN(p.RowsPerSec), FmtN(p.RowsMin) + "–" + FmtN(p.RowsMax), FmtF(p.MBPerSec, 1), FmtF(p.P95MS, 3), FmtF(p.CPUBusyPct, 0), FmtN(p.CtxPerSec),
					where, OrDash(waitsText(p.Waits, 3))})
			}
			c.Series = append(c.Series, line)
		}
	}
	s.Figures = append(s.Figures, Plot{ID: c.ID, SVG: template.HTML(c.SVG())})
	s.Tables = append(s.Tables, tb)
	for _, in := range r.Insert {
		for _, f := range in.Drops {
			s.Notes = append(s.Notes, fmt.Sprintf("Run %d, cell %d, the run's finding: %s.", in.Run, f.Index, f.Text))
		}
		for _, n := range in.Notes {
			s.Notes = append(s.Notes, fmt.Sprintf("Run %d: %s.", in.Run, n))
		}
	}
	return s
}

// waitsText is the n most frequent wait events: "Client:ClientRead 50%, CPU 30%".
func waitsText(ws []insert.WaitShare, n int) string {
	var parts []string
	for i, w := range ws {
		if i == n {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s%%", w.Event, FmtF(w.Pct, 0)))
	}
	return strings.Join(parts, ", ")
}

func textInsert(b *strings.Builder, in InsertRun) {
	fmt.Fprintf(b, "  run %d: %s (engine version %s), batches of %d rows, %s s measured after %s s warm-up per cell; median of repeats [min-max]; MB/s at %d B a row\n",
		in.Run, in.Label, in.Version, in.Batch, FmtF(in.DurationS, 1), FmtF(in.WarmupS, 1), in.RowBytes)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "    placement\tstreams\trepeats\trows/s\tmin-max\tMB/s\tp95 ms\tCPU %\tcs/s\twhere the time went\t")
	for _, s := range in.Series {
		for _, p := range s.Points {
			fmt.Fprintf(tw, "    %s\t%d\t%d\t%s\t%s-%s\t%s\t%s\t%s\t%s\t%s\t\n", s.Placement, p.Streams, p.Repeats, FmtN(p.RowsPerSec), FmtN(p.RowsMin), FmtN(p.RowsMax),
				FmtF(p.MBPerSec, 1), FmtF(p.P95MS, 3), FmtF(p.CPUBusyPct, 0), FmtN(p.CtxPerSec), p.Dominant)
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
