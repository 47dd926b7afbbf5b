package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/chart"
	"github.com/numalab/numalab/internal/iobench"
	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/units"
)

//go:embed report.html.tmpl
var htmlTemplate string

//go:embed style.css
var styleCSS string

var tmpl = template.Must(template.New("report").Parse(htmlTemplate))

// CSS is the report's style sheet, for other pages drawn with this
// package's charts (their classes are styled here).
func CSS() template.CSS { return template.CSS(styleCSS) }

// Table is a rendered table: a caption with the provenance, a header and
// rows of formatted cells.
type Table struct {
	ID      string
	Caption string
	Head    []string
	Rows    [][]string
	Fold    bool // under a disclosure, whatever its length (a chart's numbers)
}

// Plot is an SVG chart with its anchor.
type Plot struct {
	ID  string
	SVG template.HTML
}

// HTMLSection is one section of the HTML report: the report builds its
// own, and a workload's Section hands in its with the report's helpers.
type HTMLSection struct {
	ID, Title string
	Absent    string // why the section is empty; "" when present
	Intro     string // provenance and method, one paragraph
	Figures   []Plot
	Tables    []Table
	Notes     []string
	Drawing   template.HTML // the machine only
	// Shows are the figures a workload's section shows, so that each
	// preflight warning that affects them is linked from it.
	Shows []preflight.Figure
	// Warned are the settings of the preflight warnings that affect its
	// figures: the section links to the one box that shows them.
	Warned []string
}

type htmlView struct {
	Title    string
	CSS      template.CSS
	Subtitle string
	Card     card
	Findings []Finding
	Notes    []string
	// Details are the findings that follow the answers (folded);
	// Warnings the preflight warnings, each once.
	Details  []Finding
	Warnings []warningView
	Sections []HTMLSection
	Runs     Table
}

// WriteHTML writes the report as one self-contained HTML file: inline CSS
// and SVG, no script, no external reference.
func WriteHTML(w io.Writer, r *Report) error {
	v := htmlView{Title: "numalab report", CSS: template.CSS(styleCSS), Card: decisionCard(r), Findings: r.Findings, Notes: r.Notes}
	var hosts []string
	for _, ref := range r.Runs {
		if len(hosts) == 0 || hosts[len(hosts)-1] != ref.Host {
			hosts = append(hosts, ref.Host)
		}
	}
	var ids []int64
	for _, ref := range r.Runs {
		ids = append(ids, ref.ID)
	}
	v.Subtitle = fmt.Sprintf("host %s · runs %s", strings.Join(hosts, ", "), joinIDs(ids))
	if r.Machine != nil && r.Machine.Topology.CPUModel != "" {
		v.Title = "numalab report: " + r.Machine.Topology.CPUModel
	}
	v.Sections = append(v.Sections, machineSection(r), memorySection(r), oltpSection(r))
	for _, sec := range r.placed(true) {
		v.Sections = append(v.Sections, sec.HTML(r)...)
	}
	v.Sections = append(v.Sections, querySection(r))
	if r.PlacedDOP != nil {
		v.Sections = append(v.Sections, placedDOPSection(r))
	}
	v.Sections = append(v.Sections, ioSection(r), modelSection(r), buySection(r))
	for _, sec := range r.placed(false) {
		v.Sections = append(v.Sections, sec.HTML(r)...)
	}
	v.Findings, v.Details = splitFindings(r.Findings)
	v.Warnings = warningViews(r.Preflight, v.Sections)
	v.Runs = Table{ID: AnchorRuns, Caption: "Every figure above names the run it comes from.",
		Head: []string{"run", "kind", "host", "started", "finished", "status", "numalab", "command", "headline"}}
	for _, ref := range r.Runs {
		v.Runs.Rows = append(v.Runs.Rows, []string{strconv.FormatInt(ref.ID, 10), ref.Kind, ref.Host, ref.Started, OrDash(ref.Finished),
			ref.Status + errSuffix(ref.Error), ref.Version, ref.Command, ref.Headline})
	}
	return tmpl.Execute(w, v)
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return ": " + e
}

// AbsentText is what an empty section says: the run kind that would fill
// it and the command that measures it.
func AbsentText(r *Report, sec string) string {
	if a := absent(r, sec); a != nil {
		return fmt.Sprintf("No %s run was given, so this section is empty. To measure it: %s", a.Kind, a.Hint)
	}
	return "Not measured."
}

// absent is the section's entry in r.Absent; nil when the report does not
// say it is absent.
func absent(r *Report, sec string) *Absent {
	for i := range r.Absent {
		if r.Absent[i].Section == sec {
			return &r.Absent[i]
		}
	}
	return nil
}

func machineSection(r *Report) HTMLSection {
	s := HTMLSection{ID: AnchorMachine, Title: "The machine"}
	m := r.Machine
	if m == nil {
		s.Absent = "None of the runs recorded its machine."
		return s
	}
	s.Intro = fmt.Sprintf("%s: %s. Recorded with run %d (%s).", OrDash(m.Topology.CPUModel), machineShape(m), m.Run, m.Topology.Source)
	s.Drawing = template.HTML(machineHTML(m.Topology))
	if t := m.Topology; len(t.Distances) > 1 {
		tb := Table{ID: "node-distances", Caption: "NUMA distances as the firmware reports them (10 = local)", Head: []string{"node"}}
		for _, n := range t.Nodes {
			tb.Head = append(tb.Head, fmt.Sprintf("node %d", n.ID))
		}
		for i, row := range t.Distances {
			cells := []string{fmt.Sprintf("node %d", t.Nodes[i].ID)}
			for _, d := range row {
				cells = append(cells, strconv.Itoa(d))
			}
			tb.Rows = append(tb.Rows, cells)
		}
		s.Tables = append(s.Tables, tb)
	}
	return s
}

func memorySection(r *Report) HTMLSection {
	s := HTMLSection{ID: "memory", Title: "Memory latency"}
	m := r.Memory
	if m == nil {
		s.Absent = AbsentText(r, "memory")
		return s
	}
	s.Intro = fmt.Sprintf("Run %d: one dependent load at a time through a random cycle of cache lines, on one pinned thread. Each point is the median of %d clean windows of at least %d ms, with the min–max as a bar. Every cycle count is ns × the run's core clock, %s GHz.",
		m.Run, m.Samples, m.WindowMS, FmtF(m.GHz, 2))
	if d := m.DRAM; d != nil {
		s.Intro += fmt.Sprintf(" DRAM latency, the figure the model uses: %s ns = %s cycles, %s.", FmtF(d.NS, 1), FmtF(d.Cycles, 0), d.Label)
	}
	if len(m.Ladders) > 0 {
		c := Chart{ID: AnchorLadder, Title: "Load latency against working set (dotted: advertised cache sizes)",
			X:       Scale{Label: "working set (bytes, log 2 scale)", Log: 2, Format: func(v float64) string { return units.Bytes(v).String() }},
			Y:       Scale{Label: "ns per load (log scale)", Log: 10, Format: FmtSig},
			Y2Label: fmt.Sprintf("core cycles at %s GHz", FmtF(m.GHz, 2)), Y2Factor: m.GHz}
		tb := Table{ID: AnchorLadder + "-table", Fold: true, Caption: fmt.Sprintf("Ladder points (run %d): median ns [min–max] over %d windows; cycles at %s GHz", m.Run, m.Samples, FmtF(m.GHz, 2)),
			Head: []string{"chain", "pages (obtained)", "working set", "ns", "min–max ns", "cycles", "samples"}}
		for _, l := range m.Ladders {
			sr := Series{Name: fmt.Sprintf("%s chain, %s pages", l.Chain, pagesLabel(l)), Marks: len(l.Points) == 1}
			for _, p := range l.Points {
				sr.Points = append(sr.Points, Point{X: float64(p.Bytes), Y: p.NS.Median, Lo: p.NS.Min, Hi: p.NS.Max})
				tb.Rows = append(tb.Rows, []string{l.Chain, pagesLabel(l), units.Bytes(p.Bytes).String(), FmtF(p.NS.Median, 1),
					FmtF(p.NS.Min, 1) + "–" + FmtF(p.NS.Max, 1), FmtF(p.NS.Median*m.GHz, 0), strconv.Itoa(p.NS.Samples)})
			}
			c.Series = append(c.Series, sr)
			if len(l.Levels) > 0 && len(c.HLines) == 0 {
				// Plateaus are found in bytes touched; the axis is the
				// working set, so each is drawn where this ladder's points
				// touched those bytes.
				for _, lv := range l.Levels {
					from, to := workingSetAt(l, lv.FromBytes), workingSetAt(l, lv.ToBytes)
					if to <= from {
						to = from * 2
					}
					name := lv.Name
					if name == "DRAM" {
						name = "memory plateau"
					}
					c.HLines = append(c.HLines, HLine{Y: lv.NS, X0: from, X1: to,
						Text: fmt.Sprintf("%s %s ns = %s cycles (%s chain)", name, FmtF(lv.NS, 1), FmtF(lv.NS*m.GHz, 0), l.Chain)})
					if lv.CacheBytes > 0 {
						// The cache's advertised size, where this ladder touched it.
						c.VLines = append(c.VLines, VLine{X: workingSetAt(l, lv.CacheBytes), Text: lv.Name + " " + units.Bytes(lv.CacheBytes).String()})
					}
				}
			}
		}
		s.Figures = append(s.Figures, Plot{ID: AnchorLadder, SVG: template.HTML(c.SVG())})
		if m.Summary != nil && len(m.Summary.Levels) > 0 {
			lt := Table{ID: AnchorLevels, Caption: fmt.Sprintf("Plateaus of the TLB-local chain, in bytes touched (lines touched × 64 B), cycles at %s GHz. The knee is where latency crosses between two plateaus: the capacity the ladder saw; effective/advertised is the knee over the cache size the topology reports (below 1: less cache than advertised, as in a VM sharing its last-level cache)", FmtF(m.GHz, 2)),
				Head: []string{"level", "ns", "cycles", "from (touched)", "to (touched)", "knee (touched)", "cache (advertised)", "effective/advertised"}}
			for _, lv := range m.Summary.Levels {
				name := lv.Name
				if name == "DRAM" {
					name = "memory (a plateau, not the DRAM latency)"
				}
				lt.Rows = append(lt.Rows, []string{name, FmtF(lv.NS, 1), FmtF(lv.NS*m.GHz, 0), units.Bytes(lv.FromBytes).String(), units.Bytes(lv.ToBytes).String(),
					bytesOrDash(lv.KneeBytes), bytesOrDash(lv.CacheBytes), ratioOrDash(lv.KneeRatio)})
			}
			s.Tables = append(s.Tables, lt)
		}
		s.Tables = append(s.Tables, tb)
	}
	if mx := m.Matrix; mx != nil && len(mx.NS) > 0 {
		ns, estimator := matrixNS(m)
		title := fmt.Sprintf("NUMA latency matrix: %s chain over %s, %s pages, %s", mx.Chain, units.Bytes(mx.Bytes), memlat.PageLabel(mx.PageBytes, 1), estimator)
		if mx.SingleNode || len(mx.MemNodes) == 1 {
			title = "NUMA latency matrix (1×1: this machine has one NUMA node)"
		}
		s.Figures = append(s.Figures, Plot{ID: AnchorMatrix, SVG: template.HTML(chart.Heatmap(AnchorMatrix, mx.CPUNodes, mx.MemNodes, ns, mx.Relative, title))})
		if mx.Reused {
			s.Notes = append(s.Notes, "The quick probe's 1×1 matrix is the random chain's largest ladder point, not a separate run.")
		}
	}
	if ml := m.MLP; ml != nil && len(ml.Points) > 0 {
		tb := Table{ID: AnchorMLP, Caption: fmt.Sprintf("Memory-level parallelism: k independent random chains over %s, %s pages, CPU %d", units.Bytes(ml.Bytes), memlat.PageLabel(ml.PageBytes, 1), ml.CPU),
			Head: []string{"chains", "threads", "ns per load", "min–max ns", "misses in flight"}}
		for _, p := range ml.Points {
			tb.Rows = append(tb.Rows, []string{strconv.Itoa(p.Chains), strconv.Itoa(p.Threads), FmtF(p.NSPerLoad.Median, 1),
				FmtF(p.NSPerLoad.Min, 1) + "–" + FmtF(p.NSPerLoad.Max, 1), FmtF(p.InFlight, 1)})
		}
		s.Tables = append(s.Tables, tb)
	}
	if c := m.C2C; c != nil && len(c.Pairs) > 0 {
		tb := Table{ID: "memory-c2c", Caption: fmt.Sprintf("Cache-to-cache latency: one line bounced between two pinned threads, the lowest clean window; cycles at the probe's start clock, %s GHz; one way is half a round trip (multichase pingpong's figure)", FmtF(c.GHz, 2)),
			Head: []string{"pair", "CPUs", "round trip ns", "cycles", "one way ns", "median ns"}}
		for _, p := range c.Pairs {
			if p.Unsteady != "" {
				tb.Rows = append(tb.Rows, []string{p.Class, cpuList(p.CPUs[:]), "–", "–", "–", FmtF(p.RoundTripNS.Median, 1)})
				s.Notes = append(s.Notes, fmt.Sprintf("Cache-to-cache, %s (CPUs %s): %s.", p.Class, cpuList(p.CPUs[:]), p.Unsteady))
				continue
			}
			tb.Rows = append(tb.Rows, []string{p.Class, cpuList(p.CPUs[:]), FmtF(p.BestNS, 1), FmtF(p.Cycles, 0), FmtF(p.OneWayNS, 1), FmtF(p.RoundTripNS.Median, 1)})
		}
		s.Tables = append(s.Tables, tb)
	}
	if bw := m.Bandwidth; bw != nil && len(bw.Read) > 0 {
		caption := fmt.Sprintf("Sequential read bandwidth: each thread streams its own %s region", units.Bytes(bw.Read[0].RegionBytes))
		if bw.Kernel != "" { // the threads share one mapping since the vector kernels
			caption = fmt.Sprintf("Sequential read bandwidth, %s: the threads stream over %s together, each its own share",
				bw.Kernel, units.Bytes(bw.Read[0].RegionBytes*int64(bw.Read[0].Threads)))
		}
		tb := Table{ID: "memory-bandwidth", Caption: caption,
			Head: []string{"threads", "CPUs", "GB/s (10⁹ B/s)", "threads preempted"}}
		for _, p := range bw.Read {
			tb.Rows = append(tb.Rows, []string{strconv.Itoa(p.Threads), cpuList(p.CPUs), FmtF(p.GBps, 1), strconv.Itoa(p.Preempted)})
		}
		s.Tables = append(s.Tables, tb)
	}
	return s
}

func bytesOrDash(b int64) string {
	if b <= 0 {
		return "–"
	}
	return units.Bytes(b).String()
}

func ratioOrDash(v float64) string {
	if v == 0 {
		return "–"
	}
	return FmtF(v, 2)
}

// StreamsScale is a log-2 axis when the counts span 8× or more, else a
// linear one with a tick at each count measured.
func StreamsScale(label string, vals []float64) Scale {
	lo, hi := math.Inf(1), 0.0
	for _, v := range vals {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if lo > 0 && hi/lo >= 8 {
		return Scale{Label: label + " (log 2 scale)", Log: 2, Format: FmtSig}
	}
	ticks := slices.Clone(vals)
	slices.Sort(ticks)
	return Scale{Label: label, Format: FmtSig, Ticks: slices.Compact(ticks)}
}

func oltpSection(r *Report) HTMLSection {
	s := HTMLSection{ID: AnchorOLTP, Title: "OLTP throughput"}
	o := r.OLTP
	if o == nil {
		s.Absent = AbsentText(r, "oltp")
		return s
	}
	s.Intro = fmt.Sprintf("Run %d: %s on %s, %s, streams in closed loops with no think time; each cell %s s measured after %s s warm-up. Points are the median over repeats; bars are the repeats' min–max, or for a cell run once its slowest and fastest whole second. tps per core divides by the physical cores the streams ran on (the model's definition too). A cell is unstable when a whole second ran below half its median second.",
		o.Run, o.Workload, o.Engine, Plural(o.Warehouses, "warehouse"), FmtF(o.DurationS, 1), FmtF(o.WarmupS, 1))
	var xs []float64
	for _, sr := range o.Series {
		for _, p := range sr.Points {
			xs = append(xs, float64(p.Streams))
		}
	}
	tps := Chart{ID: AnchorOLTP + "-tps", Title: "Transactions per second against streams", X: StreamsScale("streams", xs), Y: Scale{Label: "tps (all streams)", Zero: true, Format: FmtCompact}}
	per := Chart{ID: AnchorOLTP + "-per-core", Title: "Transactions per second per core", X: StreamsScale("streams", xs), Y: Scale{Label: "tps per physical core", Zero: true, Format: FmtCompact}}
	lat := Chart{ID: AnchorOLTP + "-p95", Title: "95th percentile latency", X: StreamsScale("streams", xs), Y: Scale{Label: "p95 latency (ms)", Zero: true, Format: FmtSig}}
	tb := Table{ID: AnchorOLTPTable, Caption: fmt.Sprintf("Cells of run %d: median over repeats [min–max]; seconds: the slowest and fastest whole second, tps", o.Run),
		Head: []string{"placement", "streams", "CPUs of the streams (cores)", "repeats", "tps [min–max]", "seconds, tps", "tps per core", "p95 ms", "CPU busy %", "disk, stability"}}
	for _, sr := range o.Series {
		a, b, c := Series{Name: sr.Label}, Series{Name: sr.Label}, Series{Name: sr.Label}
		for _, p := range sr.Points {
			lo, hi := p.TPSMin, p.TPSMax
			if p.Repeats < 2 {
				lo, hi = p.SecMin, p.SecMax
			}
			a.Points = append(a.Points, Point{X: float64(p.Streams), Y: p.TPS, Lo: lo, Hi: hi})
			pl, ph := 0.0, 0.0
			if p.Cores > 0 {
				pl, ph = lo/float64(p.Cores), hi/float64(p.Cores)
			}
			b.Points = append(b.Points, Point{X: float64(p.Streams), Y: p.TPSPerCore, Lo: pl, Hi: ph})
			c.Points = append(c.Points, Point{X: float64(p.Streams), Y: p.P95MS, Lo: p.P95MS, Hi: p.P95MS})
			disk := "cached"
			if p.ReadFromDisk {
				disk = "read from disk"
			}
			if p.Unstable {
				disk += ", unstable"
			}
			tb.Rows = append(tb.Rows, []string{sr.Label, strconv.Itoa(p.Streams), fmt.Sprintf("%s (%d)", p.StreamCPUs, p.Cores), strconv.Itoa(p.Repeats),
				FmtN(p.TPS) + " [" + FmtN(p.TPSMin) + "–" + FmtN(p.TPSMax) + "]", FmtN(p.SecMin) + "–" + FmtN(p.SecMax), FmtN(p.TPSPerCore),
				FmtF(p.P95MS, 3), FmtF(p.BusyPct, 0), disk})
		}
		tps.Series, per.Series, lat.Series = append(tps.Series, a), append(per.Series, b), append(lat.Series, c)
	}
	s.Figures = append(s.Figures, Plot{ID: tps.ID, SVG: template.HTML(tps.SVG())}, Plot{ID: per.ID, SVG: template.HTML(per.SVG())},
		Plot{ID: lat.ID, SVG: template.HTML(lat.SVG())})
	s.Tables = append(s.Tables, tb)
	s.Notes = o.Notes
	return s
}

func querySection(r *Report) HTMLSection {
	s := HTMLSection{ID: AnchorQueries, Title: "Reporting queries"}
	q := r.Reporting
	if q == nil {
		s.Absent = AbsentText(r, "reporting")
		return s
	}
	s.Intro = fmt.Sprintf("Run %d: transtats P1 and P2 on %s %s, %s rows of tran_stats; each cell %s s measured after %s s warm-up. Queries per hour count all streams together; speedup is against DOP 1 at the same streams.",
		q.Run, q.Engine, q.Version, FmtN(float64(q.Rows)), FmtF(q.DurationS, 1), FmtF(q.WarmupS, 1))
	if q.Load != nil {
		how := "loaded"
		if q.Load.Reused {
			how = "reused from an earlier load"
		}
		s.Intro += fmt.Sprintf(" Data %s by %s at %s rows/s.", how, q.Load.Method, FmtN(q.Load.RowsPerSecond))
	}
	var xs, ds []float64
	for _, sr := range q.ByDOP {
		for _, p := range sr.Points {
			xs = append(xs, float64(p.Streams))
			ds = append(ds, float64(p.DOP))
		}
	}
	// One chart per query: their rates differ by orders of magnitude.
	var qphs []*Chart
	for _, sr := range q.ByDOP {
		if len(qphs) == 0 || qphs[len(qphs)-1].Title != sr.Query+": queries per hour against streams, per DOP" {
			qphs = append(qphs, &Chart{ID: AnchorQueries + "-qph-" + strings.ToLower(sr.Query), Title: sr.Query + ": queries per hour against streams, per DOP",
				X: StreamsScale("streams", xs), Y: Scale{Label: "queries per hour (all streams)", Zero: true, Format: FmtCompact}})
		}
		c := Series{Name: fmt.Sprintf("%s, DOP %d", sr.Query, sr.DOP)}
		for _, p := range sr.Points {
			c.Points = append(c.Points, Point{X: float64(p.Streams), Y: p.QPH, Lo: p.QPHMin, Hi: p.QPHMax})
		}
		qphs[len(qphs)-1].Series = append(qphs[len(qphs)-1].Series, c)
	}
	sp := Chart{ID: AnchorSpeedup, Title: "Speedup against DOP, per streams", X: StreamsScale("DOP", ds), Y: Scale{Label: "queries per hour ÷ DOP 1's", Zero: true, Format: FmtSig}, Ideal: true}
	for _, sr := range q.ByStreams {
		c := Series{Name: fmt.Sprintf("%s, %s", sr.Query, Plural(sr.Streams, "stream"))}
		for _, p := range sr.Points {
			if p.Speedup > 0 {
				c.Points = append(c.Points, Point{X: float64(p.DOP), Y: p.Speedup, Lo: p.Speedup, Hi: p.Speedup})
			}
		}
		if len(c.Points) > 0 {
			sp.Series = append(sp.Series, c)
		}
	}
	for _, c := range qphs {
		s.Figures = append(s.Figures, Plot{ID: c.ID, SVG: template.HTML(c.SVG())})
	}
	if len(sp.Series) > 0 {
		s.Figures = append(s.Figures, Plot{ID: sp.ID, SVG: template.HTML(sp.SVG())})
	}
	tb := Table{ID: AnchorQueries + "-table", Caption: fmt.Sprintf("Cells of run %d: median over repeats [min–max]", q.Run),
		Head: []string{"query", "DOP", "streams", "repeats", "queries per hour [min–max]", "mean / p95 ms", "speedup vs DOP 1", "errors"}}
	workers := q.hasWorkers()
	if workers {
		tb.Caption += "; workers ran on: the CPUs their samples saw (in: every sample inside the placement)"
		tb.Head = append(tb.Head, "workers ran on (CPUs)")
	}
	for _, sr := range q.ByDOP {
		for _, p := range sr.Points {
			row := []string{sr.Query, strconv.Itoa(p.DOP), strconv.Itoa(p.Streams), strconv.Itoa(p.Repeats), FmtN(p.QPH) + " [" + FmtN(p.QPHMin) + "–" + FmtN(p.QPHMax) + "]",
				FmtF(p.MeanMS, 1) + " / " + FmtF(p.P95MS, 1), speedup(p), strconv.FormatInt(p.Errors, 10)}
			if workers {
				row = append(row, dashIfEmpty(p.Workers))
			}
			tb.Rows = append(tb.Rows, row)
		}
	}
	s.Tables = append(s.Tables, tb)
	if et, ok := EstimateTable(AnchorQueries+"-estimate", "", q.Estimates); ok {
		s.Tables = append(s.Tables, et)
	}
	if q.NoEstimate != "" {
		s.Notes = append(s.Notes, "There is "+q.NoEstimate+".")
	}
	for _, f := range q.Plans {
		s.Notes = append(s.Notes, "Plan: "+f.Detail)
	}
	for _, e := range q.Errors {
		s.Notes = append(s.Notes, "Error: "+e)
	}
	return s
}

func ioSection(r *Report) HTMLSection {
	s := HTMLSection{ID: AnchorIO, Title: "Storage"}
	x := r.IO
	if x == nil || x.Probe == nil {
		s.Absent = AbsentText(r, "io")
		return s
	}
	p := x.Probe
	s.Intro = fmt.Sprintf("Run %d: %s (%s), a %s test file, %s; %s queue depth.", x.Run, OrDash(p.Dir), OrDash(p.FSType), units.Bytes(p.FileSize), ioMode(p), OrDash(p.Engine))
	tb := Table{ID: AnchorIO + "-table", Caption: "Each pattern's measured window: operations per second and latency per operation",
		Head: []string{"pattern", "block", "QD", "read %", "IOPS", "MB/s (10⁶ B/s)", "mean µs", "p50 µs", "p99 µs", "max µs"}}
	for _, pt := range p.Patterns {
		tb.Rows = append(tb.Rows, []string{pt.Name, units.Bytes(pt.BlockSize).String(), strconv.Itoa(pt.QD), strconv.Itoa(pt.ReadPct),
			FmtN(pt.Read.IOPS), FmtF(pt.Read.MBps, 1), FmtF(pt.Read.MeanUs, 1), FmtF(pt.Read.P50Us, 1), FmtF(pt.Read.P99Us, 1), FmtF(pt.Read.MaxUs, 1)})
	}
	s.Tables = append(s.Tables, tb)
	if rt := p.Ratio; rt != nil {
		s.Notes = append(s.Notes, fmt.Sprintf("Sequential reads deliver %s pages of %s per second against %s random reads per second: %s×; %s assumes %s×.",
			FmtN(rt.SeqPagesPerSec), units.Bytes(rt.PageSize), FmtN(rt.RandomIOPS), FmtF(rt.Ratio, 1), rt.ModelName, FmtF(rt.ModelRatio, 1)))
	}
	if p.Span > 0 {
		how := "the gaps allocated (the filesystem is not known to keep holes)"
		if p.Sparse {
			how = "holes between them"
		}
		s.Notes = append(s.Notes, fmt.Sprintf("The %s of data lie in 1 MiB chunks spread evenly over a %s span, %s: random reads range over the span. Where the chunks land on the device is the filesystem's choice.",
			units.Bytes(p.FileSize), units.Bytes(p.Span), how))
	}
	if len(p.Ratios) > 1 {
		s.Figures = append(s.Figures, ioRatioFigure(p.Ratios))
		rt := Table{ID: AnchorIO + "-ratios", Caption: "Sequential 8 KiB pages per second against random 8 KiB reads per second at the same queue depth: one sequence with QD reads in flight, or QD concurrent readers of their own sequences",
			Head: []string{"sequential", "QD", "random IOPS", "sequential pages/s", "ratio"}}
		for _, x := range p.Ratios {
			kind := "one sequence"
			if x.Readers > 0 {
				kind = Plural(x.Readers, "reader")
			}
			rt.Rows = append(rt.Rows, []string{kind, strconv.Itoa(x.QD), FmtN(x.RandomIOPS), FmtN(x.SeqPagesPerSec), FmtF(x.Ratio, 1)})
		}
		s.Tables = append(s.Tables, rt)
	}
	if len(x.Spans) > 1 {
		s.Figures = append(s.Figures, ioSpanFigure(x.Spans))
	}
	if p.Interrupted {
		s.Notes = append(s.Notes, "The probe was cut short: only the patterns that finished are shown.")
	}
	return s
}

// ioRatioFigure plots the random/sequential page-rate ratio against queue
// depth, one line for one sequence and one for concurrent readers.
func ioRatioFigure(rs []result.IORatioAt) Plot {
	c := &Chart{ID: AnchorIO + "-ratio", Title: "Sequential pages per random read, against queue depth (an optimizer assumes one number: 4.2 in the classic model)",
		X: Scale{Label: "queue depth (threads, one read each in flight)", Log: 2, Format: FmtSig}, Y: Scale{Label: "sequential 8 KiB pages per random 8 KiB read", Log: 10, Format: FmtSig}}
	one, many := Series{Name: "one sequence, QD in flight"}, Series{Name: "QD concurrent readers"}
	var xs, ys []float64
	for _, r := range rs {
		pt := Point{X: float64(r.QD), Y: r.Ratio}
		if r.Readers > 0 {
			many.Points = append(many.Points, pt)
		} else {
			one.Points = append(one.Points, pt)
		}
		xs, ys = append(xs, pt.X), append(ys, pt.Y)
	}
	c.X.Fit(xs)
	c.Y.Fit(append(ys, iobench.ModelSeqPagesSec/iobench.ModelRandomIOPS))
	c.Series = append(c.Series, one)
	if len(many.Points) > 0 {
		c.Series = append(c.Series, many)
	}
	return Plot{ID: c.ID, SVG: template.HTML(c.SVG())}
}

// ioSpanFigure plots each probe's random reads against queue depth, one
// line per span.
func ioSpanFigure(spans []IOSpan) Plot {
	c := &Chart{ID: AnchorIO + "-span", Title: "8 KiB random reads per second against queue depth, one line per storage probe and the span its data covered",
		X: Scale{Label: "queue depth", Log: 2, Format: FmtSig}, Y: Scale{Label: "random reads per second", Log: 10, Format: FmtSig}}
	var xs, ys []float64
	for _, sp := range spans {
		sr := Series{Name: fmt.Sprintf("run %d, span %s", sp.Run, units.Bytes(sp.Span))}
		for _, p := range sp.Points {
			sr.Points = append(sr.Points, Point{X: float64(p.QD), Y: p.IOPS})
			xs, ys = append(xs, float64(p.QD)), append(ys, p.IOPS)
		}
		c.Series = append(c.Series, sr)
	}
	c.X.Fit(xs)
	c.Y.Fit(ys)
	return Plot{ID: c.ID, SVG: template.HTML(c.SVG())}
}
