package null

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

// AnchorNull is the null-transaction section of the report.
const AnchorNull = "null"

// Report is what the report shows of null runs: one section, beside the
// OLTP section, whose one-stream cell it explains; one run per engine.
var Report = report.Workload{
	Kinds:      []string{RunKind},
	Default:    true,
	BesideOLTP: true,
	Variant:    report.EngineVariant,
	Absent: func(r *report.Report) *report.Absent {
		if r.OLTP != nil && nullRuns(r.OLTP.Engine) {
			return &report.Absent{Section: AnchorNull, Kind: RunKind, Hint: "numalab run null --engine " + r.OLTP.Engine}
		}
		return nil
	},
	Build: func(_ *report.Report, runs []*result.Run) (report.Section, error) {
		sec := &Section{}
		for _, run := range runs {
			n, err := buildNull(run)
			if err != nil {
				return nil, err
			}
			sec.Runs = append(sec.Runs, *n)
		}
		slices.SortFunc(sec.Runs, func(a, b ReportRun) int { return cmp.Compare(a.Run, b.Run) })
		return sec, nil
	},
	Figures: figures,
}

// Section is the null runs' section of a report: a report may show
// several (one per engine), as eval's null step stores SQLite's floor and
// PostgreSQL's matrix as two runs.
type Section struct {
	Runs []ReportRun `json:"null,omitempty"`
}

var _ report.Section = (*Section)(nil)

// CSV writes every null cell's figures.
func (sec *Section) CSV(row report.CSVRow) {
	for _, n := range sec.Runs {
		for _, p := range n.Points {
			name, x := fmt.Sprintf("%s %s", n.Engine, p.Label()), float64(p.Streams)
			row("null", n.Run, name, "streams", x, "round_trips", p.Calls, "calls/s", &p.CallsMin, &p.CallsMax, p.Repeats)
			row("null", n.Run, name, "streams", x, "round_trips_per_stream", p.PerStream, "calls/s", nil, nil, p.Repeats)
			row("null", n.Run, name, "streams", x, "p50_latency", p.P50US, "us", nil, nil, p.Repeats)
			row("null", n.Run, name, "streams", x, "p95_latency", p.P95US, "us", nil, nil, p.Repeats)
			row("null", n.Run, name, "streams", x, "p99_latency", p.P99US, "us", nil, nil, p.Repeats)
			row("null", n.Run, name, "streams", x, "context_switches", p.CtxPerSec, "1/s", nil, nil, p.Repeats)
			row("null", n.Run, name, "streams", x, "context_switches_per_call", p.CtxPerCall, "1/call", nil, nil, p.Repeats)
		}
	}
}

// figures are a null run's round trips per second, per transport,
// pairing and streams, a value a repeat, and their p50 latency: what
// 'numalab compare' sets side by side.
func figures(in *result.Run) ([]report.Figure, error) {
	n, err := buildNull(in)
	if err != nil {
		return nil, err
	}
	var out []report.Figure
	for _, p := range n.Points {
		key := fmt.Sprintf("%s %s, %s", n.Engine, p.Label(), report.Plural(p.Streams, "stream"))
		out = append(out, report.NewFigure(key+": round trips", "calls/s", p.CallsRepeats...), report.NewFigure(key+": p50 latency", "µs", p.P50US))
	}
	return out, nil
}

// ReportRun is a 'numalab run null' run: round trips of SELECT 1 per
// transport and client/backend pairing.
type ReportRun struct {
	Run       int64   `json:"run"`
	Engine    string  `json:"engine"`
	Version   string  `json:"engine_version,omitempty"`
	Protocol  string  `json:"protocol,omitempty"` // PostgreSQL's: prepared or simple
	DurationS float64 `json:"duration_s"`         // measured window per cell
	WarmupS   float64 `json:"warmup_s"`
	// Matrix is every pairing of client and backend on the machine, those
	// it cannot offer with the reason (PostgreSQL runs).
	Matrix []Pairing     `json:"matrix,omitempty"`
	Points []ReportPoint `json:"points"`
	Notes  []string      `json:"notes,omitempty"`
}

// ReportPoint is one transport, pairing and stream count: the median over
// repeats, with the repeats' min and max and each repeat's value.
type ReportPoint struct {
	Transport  string `json:"transport"`
	Pairing    string `json:"pairing"`
	ClientCPU  int    `json:"client_cpu"`
	BackendCPU int    `json:"backend_cpu"` // -1: in-process, no backend
	Streams    int    `json:"streams"`
	Repeats    int    `json:"repeats"`
	// Calls is round trips per second of all streams; PerStream that
	// over the streams (the mean stream), both medians over repeats.
	Calls        float64   `json:"calls_per_s"`
	CallsMin     float64   `json:"calls_per_s_min"`
	CallsMax     float64   `json:"calls_per_s_max"`
	CallsRepeats []float64 `json:"calls_per_s_repeats"`
	PerStream    float64   `json:"per_stream_per_s"`
	// Latency percentiles of one call, µs: medians over repeats.
	P50US float64 `json:"p50_us"`
	P95US float64 `json:"p95_us"`
	P99US float64 `json:"p99_us"`
	// Context switches of the whole machine per second of the window and
	// per call: medians over repeats.
	CtxPerSec  float64 `json:"ctx_switches_per_s"`
	CtxPerCall float64 `json:"ctx_switches_per_call"`
	// Empty counts repeats that completed no call in their window.
	Empty       int  `json:"empty_repeats,omitempty"`
	Unstable    bool `json:"unstable,omitempty"`
	Interrupted bool `json:"interrupted,omitempty"`
}

// Label is "unix, same-cpu" (or "in-process").
func (p ReportPoint) Label() string {
	if p.Transport == p.Pairing {
		return p.Transport
	}
	return p.Transport + ", " + p.Pairing
}

// CPUs is "0/1": the client's CPU and the backend's.
func (p ReportPoint) CPUs() string {
	if p.BackendCPU < 0 {
		return fmt.Sprint(p.ClientCPU)
	}
	return fmt.Sprintf("%d/%d", p.ClientCPU, p.BackendCPU)
}

func buildNull(run *result.Run) (*ReportRun, error) {
	var cfg RunConfig
	if len(run.Config) > 0 {
		if err := json.Unmarshal(run.Config, &cfg); err != nil {
			return nil, fmt.Errorf("reading the configuration of run %d: %w", run.ID, err)
		}
	}
	n := &ReportRun{Run: run.ID, Engine: cfg.Engine, DurationS: cfg.Duration.Seconds(), WarmupS: cfg.Warmup.Seconds()}
	if namedOn(cfg.Engine) {
		n.Protocol = cfg.Protocol
	}
	if inf, err := engine.KindInfo.Last(run); err != nil {
		return nil, err
	} else if inf != nil {
		n.Version = inf.Version
	}
	if m, err := KindMatrix.Last(run); err != nil {
		return nil, err
	} else if spec, _ := engine.Lookup(cfg.Engine); m != nil && spec.Server {
		n.Matrix = *m
	}
	cells, err := KindCell.All(run)
	if err != nil {
		return nil, err
	}
	type key struct {
		transport, pairing string
		streams            int
	}
	groups := map[key][]Cell{}
	var order []key
	for _, c := range cells {
		k := key{c.Transport, c.Pairing.Name, c.Cell.Streams}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], c)
	}
	var empty, cut []string
	for _, k := range order {
		p := nullPoint(groups[k])
		n.Points = append(n.Points, p)
		if p.Empty > 0 {
			empty = append(empty, fmt.Sprintf("%s at %s (%d of %d repeats)", p.Label(), report.Plural(p.Streams, "stream"), p.Empty, p.Repeats))
		}
		if p.Interrupted {
			cut = append(cut, fmt.Sprintf("%s at %s", p.Label(), report.Plural(p.Streams, "stream")))
		}
	}
	if len(empty) > 0 {
		n.Notes = append(n.Notes, "cells that completed no call in their window, counted as 0 round trips/s: "+strings.Join(empty, "; "))
	}
	if len(cut) > 0 {
		n.Notes = append(n.Notes, "cells cut short (Ctrl-C); their figures cover the time measured: "+strings.Join(cut, "; "))
	}
	if len(cells) == 0 {
		n.Notes = append(n.Notes, "the run stored no cells")
	}
	return n, nil
}

func nullPoint(cells []Cell) ReportPoint {
	c0 := cells[0]
	p := ReportPoint{Transport: c0.Transport, Pairing: c0.Pairing.Name, ClientCPU: c0.Pairing.Client, BackendCPU: c0.Pairing.Backend,
		Streams: c0.Cell.Streams, Repeats: len(cells)}
	var calls, p50, p95, p99, cs, csc []float64
	for _, c := range cells {
		calls = append(calls, c.Cell.TPS)
		if c.Cell.Total.Count == 0 {
			p.Empty++
		} else {
			p50, p95, p99 = append(p50, c.Cell.Total.P50US), append(p95, c.Cell.Total.P95US), append(p99, c.Cell.Total.P99US)
		}
		if c.Cell.Usage != nil {
			cs = append(cs, c.CtxSwitchesPerSec)
			if c.Cell.TPS > 0 {
				csc = append(csc, c.CtxSwitchesPerCall)
			}
		}
		p.Unstable = p.Unstable || report.Unstable(c.Cell)
		p.Interrupted = p.Interrupted || c.Cell.Interrupted
	}
	p.Calls, p.CallsMin, p.CallsMax, p.CallsRepeats = stats.Median(calls), slices.Min(calls), slices.Max(calls), calls
	p.PerStream = p.Calls / float64(max(p.Streams, 1))
	p.P50US, p.P95US, p.P99US = stats.Median(p50), stats.Median(p95), stats.Median(p99)
	p.CtxPerSec, p.CtxPerCall = stats.Median(cs), stats.Median(csc)
	return p
}

// nullFloor is the null run's fastest one-stream point on engine: the
// round-trip floor an OLTP run on that engine stands on. PostgreSQL's
// is taken over the unix socket when the run measured it.
func nullFloor(runs []ReportRun, engineName string) (*ReportRun, *ReportPoint) {
	for i := range runs {
		n := &runs[i]
		if n.Engine != engineName {
			continue
		}
		var best *ReportPoint
		unix := false
		for j := range n.Points {
			unix = unix || n.Points[j].Transport == Unix
		}
		for j := range n.Points {
			p := &n.Points[j]
			if p.Streams != 1 || unix && p.Transport != Unix || !(p.Calls > 0) {
				continue
			}
			if best == nil || p.Calls > best.Calls {
				best = p
			}
		}
		if best != nil {
			return n, best
		}
	}
	return nil, nil
}

// Floor is the report's null run on engine with its fastest one-stream
// point (nullFloor); nil when it has none.
func (sec *Section) Floor(engine string) (*ReportRun, *ReportPoint) {
	return nullFloor(sec.Runs, engine)
}

// nullRuns says whether the null transaction runs on an engine.
func nullRuns(engineName string) bool {
	c := DefaultRunConfig()
	c.Engine = engineName
	return c.Check() == nil
}

// CellsAnchor is the anchor of a null run's cells table.
func CellsAnchor(run int64) string { return fmt.Sprintf("%s-%d-cells", AnchorNull, run) }

// Findings say what the round-trip floor means for single-stream
// OLTP, and what the placement of client and backend did.
func (sec *Section) Findings(r *report.Report, add, detail report.Say) {
	if o := r.OLTP; o != nil && len(sec.Runs) > 0 {
		floorFinding(sec.Runs, o, add, detail)
	}
	for _, n := range sec.Runs {
		var transports []string
		for _, p := range n.Points {
			if !slices.Contains(transports, p.Transport) && p.Transport != InProcess {
				transports = append(transports, p.Transport)
			}
		}
		for _, tr := range transports {
			var ps []ReportPoint
			for _, p := range n.Points {
				if p.Transport == tr && p.Streams == 1 {
					ps = append(ps, p)
				}
			}
			if len(ps) < 2 {
				continue
			}
			fast, slow := ps[0], ps[0]
			for _, p := range ps {
				if p.Calls > fast.Calls {
					fast = p
				}
				if p.Calls < slow.Calls {
					slow = p
				}
			}
			if !(slow.Calls > 0) {
				continue
			}
			detail(CellsAnchor(n.Run), "Null transaction on %s over %s, one stream: backend %s gave %s× the round trips of %s, %s/s against %s/s (%s; run %d).",
				n.Engine, tr, fast.Pairing, report.FmtF(fast.Calls/slow.Calls, 2), slow.Pairing, report.FmtN(fast.Calls), report.FmtN(slow.Calls),
				report.Evidence(stats.Compare(slow.CallsRepeats, fast.CallsRepeats)), n.Run)
		}
		var un []string
		for _, p := range n.Matrix {
			if p.Unavailable != "" {
				un = append(un, fmt.Sprintf("%s (%s)", p.Name, p.Unavailable))
			}
		}
		if len(un) > 0 {
			detail(CellsAnchor(n.Run), "Client/backend pairings not measured, as this machine cannot offer them: %s.", strings.Join(un, ", "))
		}
		for _, note := range n.Notes {
			detail(CellsAnchor(n.Run), "Null run %d: %s.", n.Run, note)
		}
	}
}

// Shares of a transaction's time the round trip must take, at least and
// at most, for single-stream OLTP to be called latency-bound or not.
const (
	LatencyBound    = 0.5
	NotLatencyBound = 0.2
)

// floorFinding sets the OLTP run's one-stream cell against the null
// floor on its engine: how much of a transaction's time one round trip
// takes, and how firmly the repeats say so.
func floorFinding(runs []ReportRun, o *report.OLTP, add, detail report.Say) {
	var one *report.OLTPPoint
	for i := range o.Series {
		if p := report.PointAt(o.Series[i].Points, 1); p != nil && p.TPS > 0 {
			one = p
			break
		}
	}
	if one == nil {
		return
	}
	n, f := nullFloor(runs, o.Engine)
	if f == nil {
		var engines []string
		for _, n := range runs {
			engines = append(engines, fmt.Sprintf("run %d on %s", n.Run, n.Engine))
		}
		try := "the null transaction does not run on it"
		if nullRuns(o.Engine) {
			try = "try 'numalab run null --engine " + o.Engine + "'"
		}
		detail(AnchorNull, "No one-stream null cell on %s, the OLTP run's engine (null %s), so the round trips' share of a transaction is not known (%s).",
			o.Engine, strings.Join(engines, ", "), try)
		return
	}
	share := one.TPS / f.Calls
	lo, hi := one.TPSMin/f.CallsMax, one.TPSMax/f.CallsMin
	spread := fmt.Sprintf("%s to %s at the repeats' extremes, %d and %d repeats", report.PctAbs(lo), report.PctAbs(hi), one.Repeats, f.Repeats)
	switch {
	case one.Repeats < 2 || f.Repeats < 2:
		spread = fmt.Sprintf("%d and %d repeats, too few for a spread", one.Repeats, f.Repeats)
	case hi > 1:
		spread = fmt.Sprintf("%s to over 100%% at the repeats' extremes, %d and %d repeats", report.PctAbs(lo), one.Repeats, f.Repeats)
	}
	is := "is"
	if oneCallOn(o.Engine) {
		is = "is at least" // the floor is the least a call takes
	}
	head := fmt.Sprintf("One-stream OLTP on %s: the %s µs round trip (null run %d) %s %s of a %s µs transaction (OLTP run %d; %s)",
		o.Engine, report.FmtF(1e6/f.Calls, 1), n.Run, is, report.PctAbs(share), report.FmtF(1e6/one.TPS, 1), o.Run, spread)
	if !oneCallOn(o.Engine) {
		// In-process engines make several calls per transaction, how many
		// depends on the transaction: the floor says how many it would take.
		add(CellsAnchor(n.Run), "%s, so calls set its pace only if it made %s of them.", head, report.FmtN(1/share))
		return
	}
	// A tpcc-ro transaction on PostgreSQL is one call: the share is a
	// lower bound of the round trip's part.
	verdict := "the repeats do not show whether the round trip or the work dominates"
	switch {
	case one.Repeats < 2 || f.Repeats < 2:
		verdict = "too few repeats to call it latency-bound or not"
	case lo >= LatencyBound:
		verdict = fmt.Sprintf("it is latency-bound (at least %s at the extremes)", report.PctAbs(LatencyBound))
	case hi <= NotLatencyBound:
		verdict = fmt.Sprintf("it is not latency-bound (at most %s at the extremes)", report.PctAbs(NotLatencyBound))
	}
	add(CellsAnchor(n.Run), "%s, its one call: %s.", head, verdict)
}

// HTML is the null section: per run a chart of round trips against
// streams (or per pairing), the placement matrix and every cell.
func (sec *Section) HTML(r *report.Report) []report.HTMLSection {
	s := report.HTMLSection{ID: AnchorNull, Title: "Null transaction: the round-trip floor", Shows: []preflight.Figure{preflight.Scaling}}
	if len(sec.Runs) == 0 {
		s.Absent = report.AbsentText(r, AnchorNull)
		return []report.HTMLSection{s}
	}
	s.Intro = "SELECT 1 in a closed loop: the fixed cost of a call (client library, transport, the server's scheduler) with no work on data. Round trips per second count all streams; per stream is that over the streams. Latency percentiles are of one call. Context switches are the whole machine's, per second of the window and per call. Each figure is the median over repeats, [min–max] the repeats'."
	for _, n := range sec.Runs {
		var runLabel string
		switch {
		case namedOn(n.Engine):
			runLabel = fmt.Sprintf("Run %d, PostgreSQL %s, %s protocol", n.Run, n.Version, n.Protocol)
		default:
			runLabel = fmt.Sprintf("Run %d, %s in-process (a prepared no-op: the floor of the floor)", n.Run, n.Engine)
		}
		runLabel += fmt.Sprintf(", %s s measured after %s s warm-up per cell", report.FmtF(n.DurationS, 1), report.FmtF(n.WarmupS, 1))
		var streams []float64
		low := 0
		for _, p := range n.Points {
			streams = append(streams, float64(p.Streams))
			if low == 0 || p.Streams < low {
				low = p.Streams
			}
		}
		if len(slices.Compact(slices.Sorted(slices.Values(streams)))) > 1 {
			c := report.Chart{ID: fmt.Sprintf("%s-%d-streams", AnchorNull, n.Run), Title: fmt.Sprintf("Run %d, %s: round trips/s against streams", n.Run, n.Engine),
				X: report.StreamsScale("streams", streams), Y: report.Scale{Label: "round trips/s (all streams)", Zero: true, Format: report.FmtCompact}}
			var order []string
			bySeries := map[string]*report.Series{}
			for _, p := range n.Points {
				if bySeries[p.Label()] == nil {
					bySeries[p.Label()] = &report.Series{Name: p.Label()}
					order = append(order, p.Label())
				}
				bySeries[p.Label()].Points = append(bySeries[p.Label()].Points, report.Point{X: float64(p.Streams), Y: p.Calls, Lo: p.CallsMin, Hi: p.CallsMax})
			}
			for _, l := range order {
				c.Series = append(c.Series, *bySeries[l])
			}
			s.Figures = append(s.Figures, report.Plot{ID: c.ID, SVG: template.HTML(c.SVG())})
		} else {
			var labels, notes []string
			var vals []float64
			for _, p := range n.Points {
				labels, notes, vals = append(labels, p.Pairing), append(notes, p.Transport), append(vals, p.Calls)
			}
			id := fmt.Sprintf("%s-%d-bars", AnchorNull, n.Run)
			title := fmt.Sprintf("Run %d, %s: round trips/s at %s, per pairing", n.Run, n.Engine, report.Plural(low, "stream"))
			s.Figures = append(s.Figures, report.Plot{ID: id, SVG: template.HTML(report.Bars(id, title, "round trips/s (median over repeats)", labels, vals, notes))})
		}
		if len(n.Matrix) > 0 {
			var transports []string
			for _, p := range n.Points {
				if !slices.Contains(transports, p.Transport) {
					transports = append(transports, p.Transport)
				}
			}
			mt := report.Table{ID: fmt.Sprintf("%s-%d-matrix", AnchorNull, n.Run),
				Caption: fmt.Sprintf("%s: the client/backend placement matrix at %s, round trips/s [min–max] and p50 µs; a pairing this machine cannot offer is labelled unavailable, with why", runLabel, report.Plural(low, "stream")),
				Head:    append([]string{"pairing", "client CPU", "backend CPU"}, transports...)}
			for _, pr := range n.Matrix {
				row := []string{pr.Name, cpuOrDash(pr.Client), cpuOrDash(pr.Backend)}
				for _, tr := range transports {
					cell := "not run"
					switch {
					case pr.Unavailable != "":
						cell = "unavailable: " + pr.Unavailable
					default:
						for _, p := range n.Points {
							if p.Transport == tr && p.Pairing == pr.Name && p.Streams == low {
								cell = fmt.Sprintf("%s [%s–%s], p50 %s µs", report.FmtN(p.Calls), report.FmtN(p.CallsMin), report.FmtN(p.CallsMax), report.FmtF(p.P50US, 1))
							}
						}
					}
					row = append(row, cell)
				}
				mt.Rows = append(mt.Rows, row)
			}
			s.Tables = append(s.Tables, mt)
		}
		tb := report.Table{ID: CellsAnchor(n.Run), Caption: runLabel + ": every cell, median over repeats [min–max]; context switches per second are in the CSV and the text report",
			Head: []string{"transport", "pairing", "CPUs (client/ backend)", "streams", "repeats", "round trips/s [min–max]", "per stream /s", "latency µs p50 / p95 / p99", "context switches per call", "flags"}}
		for _, p := range n.Points {
			tb.Rows = append(tb.Rows, []string{p.Transport, p.Pairing, p.CPUs(), strconv.Itoa(p.Streams), strconv.Itoa(p.Repeats),
				report.FmtN(p.Calls) + " [" + report.FmtN(p.CallsMin) + "–" + report.FmtN(p.CallsMax) + "]", report.FmtN(p.PerStream),
				report.FmtF(p.P50US, 1) + " / " + report.FmtF(p.P95US, 1) + " / " + report.FmtF(p.P99US, 1), report.FmtF(p.CtxPerCall, 2), report.OrDash(nullFlags(p))})
		}
		s.Tables = append(s.Tables, tb)
		for _, note := range n.Notes {
			s.Notes = append(s.Notes, fmt.Sprintf("Run %d: %s.", n.Run, note))
		}
	}
	return []report.HTMLSection{s}
}

func cpuOrDash(id int) string {
	if id < 0 {
		return "–"
	}
	return strconv.Itoa(id)
}

// nullFlags are a point's warnings: "2 of 3 repeats empty, unstable".
func nullFlags(p ReportPoint) string {
	var f []string
	if p.Empty > 0 {
		f = append(f, fmt.Sprintf("%d of %d repeats empty", p.Empty, p.Repeats))
	}
	if p.Repeats > 1 && p.CallsMin < report.UnstableBelow*p.Calls {
		f = append(f, fmt.Sprintf("a repeat below %s of the median", report.PctAbs(report.UnstableBelow)))
	}
	if p.Unstable {
		f = append(f, "unstable")
	}
	if p.Interrupted {
		f = append(f, "cut short")
	}
	return strings.Join(f, ", ")
}

// Text is the null section of the terminal report.
func (sec *Section) Text(b *strings.Builder, r *report.Report) {
	b.WriteString("\nNull transaction: the round-trip floor\n")
	for _, n := range sec.Runs {
		textNull(b, n)
	}
	for _, a := range r.Absent {
		if a.Section == AnchorNull {
			fmt.Fprintf(b, "  no %s run given (try '%s')\n", a.Kind, a.Hint)
		}
	}
}

func textNull(b *strings.Builder, n ReportRun) {
	what := fmt.Sprintf("%s in-process", n.Engine)
	if namedOn(n.Engine) {
		what = fmt.Sprintf("PostgreSQL %s, %s protocol", n.Version, n.Protocol)
	}
	fmt.Fprintf(b, "  run %d: SELECT 1 on %s, %s s measured after %s s warm-up per cell; median of repeats [min-max]; context switches are the machine's\n",
		n.Run, what, report.FmtF(n.DurationS, 1), report.FmtF(n.WarmupS, 1))
	for _, p := range n.Matrix {
		if p.Unavailable != "" {
			fmt.Fprintf(b, "    %s: unavailable (%s)\n", p.Name, p.Unavailable)
		}
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "    transport\tpairing\tcpus\tstreams\trepeats\tcalls/s\tmin-max\t/stream\tp50 µs\tp95 µs\tp99 µs\tcs/s\tcs/call\tflags\t")
	for _, p := range n.Points {
		fmt.Fprintf(tw, "    %s\t%s\t%s\t%d\t%d\t%s\t%s-%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", p.Transport, p.Pairing, p.CPUs(), p.Streams, p.Repeats,
			report.FmtN(p.Calls), report.FmtN(p.CallsMin), report.FmtN(p.CallsMax), report.FmtN(p.PerStream), report.FmtF(p.P50US, 1), report.FmtF(p.P95US, 1), report.FmtF(p.P99US, 1),
			report.FmtN(p.CtxPerSec), report.FmtF(p.CtxPerCall, 2), nullFlags(p))
	}
	tw.Flush()
	for _, note := range n.Notes {
		fmt.Fprintf(b, "  note: %s\n", note)
	}
}
