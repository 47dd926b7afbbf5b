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
	"github.com/numalab/numalab/internal/workload/null"
)

// AnchorNull is the null-transaction section.
const AnchorNull = "null"

// NullRun is a 'numalab run null' run: round trips of SELECT 1 per
// transport and client/backend pairing.
type NullRun struct {
	Run       int64   `json:"run"`
	Engine    string  `json:"engine"`
	Version   string  `json:"engine_version,omitempty"`
	Protocol  string  `json:"protocol,omitempty"` // PostgreSQL's: prepared or simple
	DurationS float64 `json:"duration_s"`         // measured window per cell
	WarmupS   float64 `json:"warmup_s"`
	// Matrix is every pairing of client and backend on the machine, those
	// it cannot offer with the reason (PostgreSQL runs).
	Matrix []null.Pairing `json:"matrix,omitempty"`
	Points []NullPoint    `json:"points"`
	Notes  []string       `json:"notes,omitempty"`
}

// NullPoint is one transport, pairing and stream count: the median over
// repeats, with the repeats' min and max and each repeat's value.
type NullPoint struct {
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
func (p NullPoint) Label() string {
	if p.Transport == p.Pairing {
		return p.Transport
	}
	return p.Transport + ", " + p.Pairing
}

// CPUs is "0/1": the client's CPU and the backend's.
func (p NullPoint) CPUs() string {
	if p.BackendCPU < 0 {
		return fmt.Sprint(p.ClientCPU)
	}
	return fmt.Sprintf("%d/%d", p.ClientCPU, p.BackendCPU)
}

func buildNull(run *result.Run) (*NullRun, error) {
	var cfg null.RunConfig
	if len(run.Config) > 0 {
		if err := json.Unmarshal(run.Config, &cfg); err != nil {
			return nil, fmt.Errorf("reading the configuration of run %d: %w", run.ID, err)
		}
	}
	n := &NullRun{Run: run.ID, Engine: cfg.Engine, DurationS: cfg.Duration.Seconds(), WarmupS: cfg.Warmup.Seconds()}
	if cfg.Engine == "postgres" {
		n.Protocol = cfg.Protocol
	}
	if inf, err := engine.KindInfo.Last(run); err != nil {
		return nil, err
	} else if inf != nil {
		n.Version = inf.Version
	}
	if m, err := null.KindMatrix.Last(run); err != nil {
		return nil, err
	} else if m != nil && cfg.Engine != "sqlite" {
		n.Matrix = *m
	}
	cells, err := null.KindCell.All(run)
	if err != nil {
		return nil, err
	}
	type key struct {
		transport, pairing string
		streams            int
	}
	groups := map[key][]null.Cell{}
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
			empty = append(empty, fmt.Sprintf("%s at %s (%d of %d repeats)", p.Label(), Plural(p.Streams, "stream"), p.Empty, p.Repeats))
		}
		if p.Interrupted {
			cut = append(cut, fmt.Sprintf("%s at %s", p.Label(), Plural(p.Streams, "stream")))
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

func nullPoint(cells []null.Cell) NullPoint {
	c0 := cells[0]
	p := NullPoint{Transport: c0.Transport, Pairing: c0.Pairing.Name, ClientCPU: c0.Pairing.Client, BackendCPU: c0.Pairing.Backend,
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
		p.Unstable = p.Unstable || Unstable(c.Cell)
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
func nullFloor(runs []NullRun, engineName string) (*NullRun, *NullPoint) {
	for i := range runs {
		n := &runs[i]
		if n.Engine != engineName {
			continue
		}
		var best *NullPoint
		unix := false
		for j := range n.Points {
			unix = unix || n.Points[j].Transport == null.Unix
		}
		for j := range n.Points {
			p := &n.Points[j]
			if p.Streams != 1 || unix && p.Transport != null.Unix || !(p.Calls > 0) {
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

// nullRuns says whether the null transaction runs on an engine.
func nullRuns(engineName string) bool {
	c := null.DefaultRunConfig()
	c.Engine = engineName
	return c.Check() == nil
}

// nullTable is the anchor of a null run's cells table.
func nullTable(run int64) string { return fmt.Sprintf("%s-%d-cells", AnchorNull, run) }

// nullFindings say what the round-trip floor means for single-stream
// OLTP, and what the placement of client and backend did.
func nullFindings(r *Report, add, detail func(anchor, format string, a ...any)) {
	if o := r.OLTP; o != nil && len(r.Null) > 0 {
		floorFinding(r, o, add, detail)
	}
	for _, n := range r.Null {
		var transports []string
		for _, p := range n.Points {
			if !slices.Contains(transports, p.Transport) && p.Transport != null.InProcess {
				transports = append(transports, p.Transport)
			}
		}
		for _, tr := range transports {
			var ps []NullPoint
			for _, p := range n.Points {
				if p.Transport == tr && p.Streams == 1 {
					ps = append(ps, p)
				}
			}
			if len(ps) < 2 {
				continue
			}
			var parts []string
			fast, slow := ps[0], ps[0]
			for _, p := range ps {
				parts = append(parts, fmt.Sprintf("%s %s/s (p50 %s µs, %s context switches per call)", p.Pairing, FmtN(p.Calls), FmtF(p.P50US, 1), FmtF(p.CtxPerCall, 2)))
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
			detail(nullTable(n.Run), "Null transaction on %s over %s, one stream, by where the backend ran against the client: %s; %s gave %s× %s's round trips; %s (run %d).",
				n.Engine, tr, strings.Join(parts, ", "), fast.Pairing, FmtF(fast.Calls/slow.Calls, 2), slow.Pairing, Evidence(stats.Compare(slow.CallsRepeats, fast.CallsRepeats)), n.Run)
		}
		var un []string
		for _, p := range n.Matrix {
			if p.Unavailable != "" {
				un = append(un, fmt.Sprintf("%s (%s)", p.Name, p.Unavailable))
			}
		}
		if len(un) > 0 {
			detail(nullTable(n.Run), "Client/backend pairings this machine cannot offer, so not measured: %s.", strings.Join(un, ", "))
		}
		for _, note := range n.Notes {
			detail(nullTable(n.Run), "Null run %d: %s.", n.Run, note)
		}
	}
}

// Shares of a transaction's time the round trip must take, at least and
// at most, for single-stream OLTP to be called latency-bound or not.
const (
	latencyBound    = 0.5
	notLatencyBound = 0.2
)

// floorFinding sets the OLTP run's one-stream cell against the null
// floor on its engine: how much of a transaction's time one round trip
// takes, and how firmly the repeats say so.
func floorFinding(r *Report, o *OLTP, add, detail func(anchor, format string, a ...any)) {
	var one *OLTPPoint
	var label string
	for i := range o.Series {
		if p := PointAt(o.Series[i].Points, 1); p != nil && p.TPS > 0 {
			one, label = p, o.Series[i].Label
			break
		}
	}
	if one == nil {
		return
	}
	n, f := nullFloor(r.Null, o.Engine)
	if f == nil {
		var engines []string
		for _, n := range r.Null {
			engines = append(engines, fmt.Sprintf("run %d on %s", n.Run, n.Engine))
		}
		try := "the null transaction does not run on it"
		if nullRuns(o.Engine) {
			try = "try 'numalab run null --engine " + o.Engine + "'"
		}
		detail(AnchorNull, "No one-stream null cell on %s, the OLTP run's engine (null %s): the report cannot say how much of its transactions the round trips take (%s).",
			o.Engine, strings.Join(engines, ", "), try)
		return
	}
	share := one.TPS / f.Calls
	lo, hi := one.TPSMin/f.CallsMax, one.TPSMax/f.CallsMin
	spread := fmt.Sprintf("%s to %s over the repeats' extremes (%d and %d repeats)", PctAbs(lo), PctAbs(hi), one.Repeats, f.Repeats)
	switch {
	case one.Repeats < 2 || f.Repeats < 2:
		spread = fmt.Sprintf("with %d and %d repeats, too few to measure its spread", one.Repeats, f.Repeats)
	case hi > 1:
		spread = fmt.Sprintf("from %s to more than the whole transaction over the repeats' extremes (%d and %d repeats): they disagree too much to bound it", PctAbs(lo), one.Repeats, f.Repeats)
	}
	txn := fmt.Sprintf("One-stream OLTP on %s takes %s µs a transaction (%s tps, %s, OLTP run %d); the null round-trip floor is %s µs a call (%s/s, %s, null run %d)",
		o.Engine, FmtF(1e6/one.TPS, 1), FmtN(one.TPS), label, o.Run, FmtF(1e6/f.Calls, 1), FmtN(f.Calls), f.Label(), n.Run)
	if o.Engine != "postgres" {
		// In-process engines make several calls per transaction, how many
		// depends on the transaction: the floor says how many it would take.
		add(nullTable(n.Run), "%s: one call is %s of a transaction's time (%s), so calls alone would fill a transaction only if it made %s of them; the engine's work, not the call, sets its pace unless it makes that many.",
			txn, PctAbs(share), spread, FmtN(1/share))
		return
	}
	verdict := "the repeats do not show whether the round trip or the work dominates"
	switch {
	case one.Repeats < 2 || f.Repeats < 2:
		verdict = "too few repeats to call it latency-bound or not"
	case lo >= latencyBound:
		verdict = fmt.Sprintf("single-stream OLTP is latency-bound: even at the repeats' extremes the round trip takes at least %s of a transaction", PctAbs(latencyBound))
	case hi <= notLatencyBound:
		verdict = fmt.Sprintf("it is not latency-bound: even at the repeats' extremes the round trip takes at most %s, and the work inside the transaction dominates", PctAbs(notLatencyBound))
	}
	add(nullTable(n.Run), "%s: a tpcc-ro transaction on PostgreSQL is one call, so its round trip takes at least %s of the transaction's time (%s); %s.",
		txn, PctAbs(share), spread, verdict)
}

func nullSection(r *Report) HTMLSection {
	s := HTMLSection{ID: AnchorNull, Title: "Null transaction: the round-trip floor"}
	if len(r.Null) == 0 {
		s.Absent = AbsentText(r, AnchorNull)
		return s
	}
	s.Intro = "SELECT 1 in a closed loop: the fixed cost of a call (client library, transport, the server's scheduler) with no work on data. Round trips per second count all streams; per stream is that over the streams. Latency percentiles are of one call. Context switches are the whole machine's, per second of the window and per call. Each figure is the median over repeats, [min–max] the repeats'."
	for _, n := range r.Null {
		var runLabel string
		switch {
		case n.Engine == "postgres":
			runLabel = fmt.Sprintf("Run %d, PostgreSQL %s, %s protocol", n.Run, n.Version, n.Protocol)
		default:
			runLabel = fmt.Sprintf("Run %d, %s in-process (a prepared no-op: the floor of the floor)", n.Run, n.Engine)
		}
		runLabel += fmt.Sprintf(", %s s measured after %s s warm-up per cell", FmtF(n.DurationS, 1), FmtF(n.WarmupS, 1))
		var streams []float64
		low := 0
		for _, p := range n.Points {
			streams = append(streams, float64(p.Streams))
			if low == 0 || p.Streams < low {
				low = p.Streams
			}
		}
		if len(slices.Compact(slices.Sorted(slices.Values(streams)))) > 1 {
			c := Chart{ID: fmt.Sprintf("%s-%d-streams", AnchorNull, n.Run), Title: fmt.Sprintf("Run %d, %s: round trips/s against streams", n.Run, n.Engine),
				X: StreamsScale("streams", streams), Y: Scale{Label: "round trips/s (all streams)", Zero: true, Format: FmtCompact}}
			var order []string
			bySeries := map[string]*Series{}
			for _, p := range n.Points {
				if bySeries[p.Label()] == nil {
					bySeries[p.Label()] = &Series{Name: p.Label()}
					order = append(order, p.Label())
				}
				bySeries[p.Label()].Points = append(bySeries[p.Label()].Points, Point{X: float64(p.Streams), Y: p.Calls, Lo: p.CallsMin, Hi: p.CallsMax})
			}
			for _, l := range order {
				c.Series = append(c.Series, *bySeries[l])
			}
			s.Figures = append(s.Figures, Plot{ID: c.ID, SVG: template.HTML(c.SVG())})
		} else {
			var labels, notes []string
			var vals []float64
			for _, p := range n.Points {
				labels, notes, vals = append(labels, p.Pairing), append(notes, p.Transport), append(vals, p.Calls)
			}
			id := fmt.Sprintf("%s-%d-bars", AnchorNull, n.Run)
			title := fmt.Sprintf("Run %d, %s: round trips/s at %s, per pairing", n.Run, n.Engine, Plural(low, "stream"))
			s.Figures = append(s.Figures, Plot{ID: id, SVG: template.HTML(Bars(id, title, "round trips/s (median over repeats)", labels, vals, notes))})
		}
		if len(n.Matrix) > 0 {
			var transports []string
			for _, p := range n.Points {
				if !slices.Contains(transports, p.Transport) {
					transports = append(transports, p.Transport)
				}
			}
			mt := Table{ID: fmt.Sprintf("%s-%d-matrix", AnchorNull, n.Run),
				Caption: fmt.Sprintf("%s: the client/backend placement matrix at %s, round trips/s [min–max] and p50 µs; a pairing this machine cannot offer is labelled unavailable, with why", runLabel, Plural(low, "stream")),
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
								cell = fmt.Sprintf("%s [%s–%s], p50 %s µs", FmtN(p.Calls), FmtN(p.CallsMin), FmtN(p.CallsMax), FmtF(p.P50US, 1))
							}
						}
					}
					row = append(row, cell)
				}
				mt.Rows = append(mt.Rows, row)
			}
			s.Tables = append(s.Tables, mt)
		}
		tb := Table{ID: nullTable(n.Run), Caption: runLabel + ": every cell, median over repeats [min–max]",
			Head: []string{"transport", "pairing", "CPUs (client/backend)", "streams", "repeats", "round trips/s", "min–max", "per stream", "p50 µs", "p95 µs", "p99 µs", "context switches/s", "per call", "flags"}}
		for _, p := range n.Points {
			tb.Rows = append(tb.Rows, []string{p.Transport, p.Pairing, p.CPUs(), strconv.Itoa(p.Streams), strconv.Itoa(p.Repeats), FmtN(p.Calls),
				FmtN(p.CallsMin) + "–" + FmtN(p.CallsMax), FmtN(p.PerStream), FmtF(p.P50US, 1), FmtF(p.P95US, 1), FmtF(p.P99US, 1),
				FmtN(p.CtxPerSec), FmtF(p.CtxPerCall, 2), OrDash(nullFlags(p))})
		}
		s.Tables = append(s.Tables, tb)
		for _, note := range n.Notes {
			s.Notes = append(s.Notes, fmt.Sprintf("Run %d: %s.", n.Run, note))
		}
	}
	return s
}

func cpuOrDash(id int) string {
	if id < 0 {
		return "–"
	}
	return strconv.Itoa(id)
}

// nullFlags are a point's warnings: "2 of 3 repeats empty, unstable".
func nullFlags(p NullPoint) string {
	var f []string
	if p.Empty > 0 {
		f = append(f, fmt.Sprintf("%d of %d repeats empty", p.Empty, p.Repeats))
	}
	if p.Repeats > 1 && p.CallsMin < UnstableBelow*p.Calls {
		f = append(f, fmt.Sprintf("a repeat below %s of the median", PctAbs(UnstableBelow)))
	}
	if p.Unstable {
		f = append(f, "unstable")
	}
	if p.Interrupted {
		f = append(f, "cut short")
	}
	return strings.Join(f, ", ")
}

func textNull(b *strings.Builder, n NullRun) {
	what := fmt.Sprintf("%s in-process", n.Engine)
	if n.Engine == "postgres" {
		what = fmt.Sprintf("PostgreSQL %s, %s protocol", n.Version, n.Protocol)
	}
	fmt.Fprintf(b, "  run %d: SELECT 1 on %s, %s s measured after %s s warm-up per cell; median of repeats [min-max]; context switches are the machine's\n",
		n.Run, what, FmtF(n.DurationS, 1), FmtF(n.WarmupS, 1))
	for _, p := range n.Matrix {
		if p.Unavailable != "" {
			fmt.Fprintf(b, "    %s: unavailable (%s)\n", p.Name, p.Unavailable)
		}
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "    transport\tpairing\tcpus\tstreams\trepeats\tcalls/s\tmin-max\t/stream\tp50 µs\tp95 µs\tp99 µs\tcs/s\tcs/call\tflags\t")
	for _, p := range n.Points {
		fmt.Fprintf(tw, "    %s\t%s\t%s\t%d\t%d\t%s\t%s-%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", p.Transport, p.Pairing, p.CPUs(), p.Streams, p.Repeats,
			FmtN(p.Calls), FmtN(p.CallsMin), FmtN(p.CallsMax), FmtN(p.PerStream), FmtF(p.P50US, 1), FmtF(p.P95US, 1), FmtF(p.P99US, 1),
			FmtN(p.CtxPerSec), FmtF(p.CtxPerCall, 2), nullFlags(p))
	}
	tw.Flush()
	for _, note := range n.Notes {
		fmt.Fprintf(b, "  note: %s\n", note)
	}
}
