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

	"github.com/numalab/numalab/internal/iobench"
	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/units"
)

//go:embed report.html.tmpl
var htmlTemplate string

//go:embed style.css
var styleCSS string

var tmpl = template.Must(template.New("report").Parse(htmlTemplate))

// table is a rendered table: a caption with the provenance, a header and
// rows of formatted cells.
type table struct {
	ID      string
	Caption string
	Head    []string
	Rows    [][]string
	Fold    bool // under a disclosure, whatever its length (a chart's numbers)
}

// figure is an SVG chart with its anchor.
type figure struct {
	ID  string
	SVG template.HTML
}

type section struct {
	ID, Title string
	Absent    string // why the section is empty; "" when present
	Intro     string // provenance and method, one paragraph
	Figures   []figure
	Tables    []table
	Notes     []string
	Drawing   template.HTML // the machine only
}

type htmlView struct {
	Title    string
	CSS      template.CSS
	Subtitle string
	Card     card
	Findings []Finding
	Notes    []string
	Sections []section
	Runs     table
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
	if len(r.Null) > 0 || absent(r, AnchorNull) != nil {
		v.Sections = append(v.Sections, nullSection(r))
	}
	v.Sections = append(v.Sections, querySection(r))
	if r.PlacedDOP != nil {
		v.Sections = append(v.Sections, placedDOPSection(r))
	}
	v.Sections = append(v.Sections, ioSection(r), modelSection(r), buySection(r))
	if r.TPCH != nil {
		v.Sections = append(v.Sections, tpchSection(r))
	}
	if len(r.Insert) > 0 {
		v.Sections = append(v.Sections, insertSection(r))
	}
	if r.Monitor != nil {
		v.Sections = append(v.Sections, monitorSection(r))
	}
	if len(r.Curves) > 0 {
		v.Sections = append(v.Sections, curveSection(r))
	}
	if len(r.PacedQueries) > 0 {
		v.Sections = append(v.Sections, pacedSection(r))
	}
	for i, s := range v.Sections {
		if s.Absent == "" {
			v.Sections[i].Notes = append(caveatNotes(r.Preflight, sectionFigures[s.ID]), s.Notes...)
		}
	}
	v.Runs = table{ID: AnchorRuns, Caption: "Every figure above names the run it comes from.",
		Head: []string{"run", "kind", "host", "started", "finished", "status", "numalab", "command", "headline"}}
	for _, ref := range r.Runs {
		v.Runs.Rows = append(v.Runs.Rows, []string{strconv.FormatInt(ref.ID, 10), ref.Kind, ref.Host, ref.Started, orDash(ref.Finished),
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

func absentText(r *Report, sec string) string {
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

func machineSection(r *Report) section {
	s := section{ID: AnchorMachine, Title: "The machine"}
	m := r.Machine
	if m == nil {
		s.Absent = "None of the runs recorded its machine."
		return s
	}
	s.Intro = fmt.Sprintf("%s: %s. Recorded with run %d (%s).", orDash(m.Topology.CPUModel), machineShape(m), m.Run, m.Topology.Source)
	s.Drawing = template.HTML(machineHTML(m.Topology))
	if t := m.Topology; len(t.Distances) > 1 {
		tb := table{ID: "node-distances", Caption: "NUMA distances as the firmware reports them (10 = local)", Head: []string{"node"}}
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

func memorySection(r *Report) section {
	s := section{ID: "memory", Title: "Memory latency"}
	m := r.Memory
	if m == nil {
		s.Absent = absentText(r, "memory")
		return s
	}
	s.Intro = fmt.Sprintf("Run %d: one dependent load at a time through a random cycle of cache lines, on one pinned thread. Each point is the median of %d clean windows of at least %d ms, with the min–max as a bar. Every cycle count is ns × the run's core clock, %s GHz.",
		m.Run, m.Samples, m.WindowMS, fmtF(m.GHz, 2))
	if d := m.DRAM; d != nil {
		s.Intro += fmt.Sprintf(" DRAM latency, the figure the model uses: %s ns = %s cycles, %s.", fmtF(d.NS, 1), fmtF(d.Cycles, 0), d.Label)
	}
	if len(m.Ladders) > 0 {
		c := chart{ID: AnchorLadder, Title: "Load latency against working set (dotted: advertised cache sizes)",
			X:       scale{Label: "working set (bytes, log 2 scale)", Log: 2, Format: func(v float64) string { return units.Bytes(v).String() }},
			Y:       scale{Label: "ns per load (log scale)", Log: 10, Format: fmtSig},
			Y2Label: fmt.Sprintf("core cycles at %s GHz", fmtF(m.GHz, 2)), Y2Factor: m.GHz}
		tb := table{ID: AnchorLadder + "-table", Fold: true, Caption: fmt.Sprintf("Ladder points (run %d): median ns [min–max] over %d windows; cycles at %s GHz", m.Run, m.Samples, fmtF(m.GHz, 2)),
			Head: []string{"chain", "pages (obtained)", "working set", "ns", "min–max ns", "cycles", "samples"}}
		for _, l := range m.Ladders {
			sr := series{Name: fmt.Sprintf("%s chain, %s pages", l.Chain, pagesLabel(l)), Marks: len(l.Points) == 1}
			for _, p := range l.Points {
				sr.Points = append(sr.Points, point{X: float64(p.Bytes), Y: p.NS.Median, Lo: p.NS.Min, Hi: p.NS.Max})
				tb.Rows = append(tb.Rows, []string{l.Chain, pagesLabel(l), units.Bytes(p.Bytes).String(), fmtF(p.NS.Median, 1),
					fmtF(p.NS.Min, 1) + "–" + fmtF(p.NS.Max, 1), fmtF(p.NS.Median*m.GHz, 0), strconv.Itoa(p.NS.Samples)})
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
					c.HLines = append(c.HLines, hline{Y: lv.NS, X0: from, X1: to,
						Text: fmt.Sprintf("%s %s ns = %s cycles (%s chain)", name, fmtF(lv.NS, 1), fmtF(lv.NS*m.GHz, 0), l.Chain)})
					if lv.CacheBytes > 0 {
						// The cache's advertised size, where this ladder touched it.
						c.VLines = append(c.VLines, vline{X: workingSetAt(l, lv.CacheBytes), Text: lv.Name + " " + units.Bytes(lv.CacheBytes).String()})
					}
				}
			}
		}
		s.Figures = append(s.Figures, figure{ID: AnchorLadder, SVG: template.HTML(c.svg())})
		if m.Summary != nil && len(m.Summary.Levels) > 0 {
			lt := table{ID: AnchorLevels, Caption: fmt.Sprintf("Plateaus of the TLB-local chain, in bytes touched (lines touched × 64 B), cycles at %s GHz. The knee is where latency crosses between two plateaus: the capacity the ladder saw; effective/advertised is the knee over the cache size the topology reports (below 1: less cache than advertised, as in a VM sharing its last-level cache)", fmtF(m.GHz, 2)),
				Head: []string{"level", "ns", "cycles", "from (touched)", "to (touched)", "knee (touched)", "cache (advertised)", "effective/advertised"}}
			for _, lv := range m.Summary.Levels {
				name := lv.Name
				if name == "DRAM" {
					name = "memory (a plateau, not the DRAM latency)"
				}
				lt.Rows = append(lt.Rows, []string{name, fmtF(lv.NS, 1), fmtF(lv.NS*m.GHz, 0), units.Bytes(lv.FromBytes).String(), units.Bytes(lv.ToBytes).String(),
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
		s.Figures = append(s.Figures, figure{ID: AnchorMatrix, SVG: template.HTML(heatmap(AnchorMatrix, mx.CPUNodes, mx.MemNodes, ns, mx.Relative, title))})
		if mx.Reused {
			s.Notes = append(s.Notes, "The quick probe's 1×1 matrix is the random chain's largest ladder point, not a separate run.")
		}
	}
	if ml := m.MLP; ml != nil && len(ml.Points) > 0 {
		tb := table{ID: AnchorMLP, Caption: fmt.Sprintf("Memory-level parallelism: k independent random chains over %s, %s pages, CPU %d", units.Bytes(ml.Bytes), memlat.PageLabel(ml.PageBytes, 1), ml.CPU),
			Head: []string{"chains", "threads", "ns per load", "min–max ns", "misses in flight"}}
		for _, p := range ml.Points {
			tb.Rows = append(tb.Rows, []string{strconv.Itoa(p.Chains), strconv.Itoa(p.Threads), fmtF(p.NSPerLoad.Median, 1),
				fmtF(p.NSPerLoad.Min, 1) + "–" + fmtF(p.NSPerLoad.Max, 1), fmtF(p.InFlight, 1)})
		}
		s.Tables = append(s.Tables, tb)
	}
	if c := m.C2C; c != nil && len(c.Pairs) > 0 {
		tb := table{ID: "memory-c2c", Caption: fmt.Sprintf("Cache-to-cache latency: one line bounced between two pinned threads, the lowest clean window; cycles at the probe's start clock, %s GHz; one way is half a round trip (multichase pingpong's figure)", fmtF(c.GHz, 2)),
			Head: []string{"pair", "CPUs", "round trip ns", "cycles", "one way ns", "median ns"}}
		for _, p := range c.Pairs {
			tb.Rows = append(tb.Rows, []string{p.Class, cpuList(p.CPUs[:]), fmtF(p.BestNS, 1), fmtF(p.Cycles, 0), fmtF(p.OneWayNS, 1), fmtF(p.RoundTripNS.Median, 1)})
		}
		s.Tables = append(s.Tables, tb)
	}
	if bw := m.Bandwidth; bw != nil && len(bw.Read) > 0 {
		tb := table{ID: "memory-bandwidth", Caption: fmt.Sprintf("Sequential read bandwidth: each thread streams its own %s region", units.Bytes(bw.Read[0].RegionBytes)),
			Head: []string{"threads", "CPUs", "GB/s (10⁹ B/s)", "threads preempted"}}
		for _, p := range bw.Read {
			tb.Rows = append(tb.Rows, []string{strconv.Itoa(p.Threads), cpuList(p.CPUs), fmtF(p.GBps, 1), strconv.Itoa(p.Preempted)})
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
	return fmtF(v, 2)
}

// streamsScale is a log-2 axis when the counts span 8× or more, else a
// linear one with a tick at each count measured.
func streamsScale(label string, vals []float64) scale {
	lo, hi := math.Inf(1), 0.0
	for _, v := range vals {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if lo > 0 && hi/lo >= 8 {
		return scale{Label: label + " (log 2 scale)", Log: 2, Format: fmtSig}
	}
	ticks := slices.Clone(vals)
	slices.Sort(ticks)
	return scale{Label: label, Format: fmtSig, Ticks: slices.Compact(ticks)}
}

func oltpSection(r *Report) section {
	s := section{ID: AnchorOLTP, Title: "OLTP throughput"}
	o := r.OLTP
	if o == nil {
		s.Absent = absentText(r, "oltp")
		return s
	}
	s.Intro = fmt.Sprintf("Run %d: %s on %s, %s, streams in closed loops with no think time; each cell %s s measured after %s s warm-up. Points are the median over repeats; bars are the repeats' min–max, or for a cell run once its slowest and fastest whole second. tps per core divides by the physical cores the streams ran on (the model's definition too). A cell is unstable when a whole second ran below half its median second.",
		o.Run, o.Workload, o.Engine, plural(o.Warehouses, "warehouse"), fmtF(o.DurationS, 1), fmtF(o.WarmupS, 1))
	var xs []float64
	for _, sr := range o.Series {
		for _, p := range sr.Points {
			xs = append(xs, float64(p.Streams))
		}
	}
	tps := chart{ID: AnchorOLTP + "-tps", Title: "Transactions per second against streams", X: streamsScale("streams", xs), Y: scale{Label: "tps (all streams)", Zero: true, Format: fmtCompact}}
	per := chart{ID: AnchorOLTP + "-per-core", Title: "Transactions per second per core", X: streamsScale("streams", xs), Y: scale{Label: "tps per physical core", Zero: true, Format: fmtCompact}}
	lat := chart{ID: AnchorOLTP + "-p95", Title: "95th percentile latency", X: streamsScale("streams", xs), Y: scale{Label: "p95 latency (ms)", Zero: true, Format: fmtSig}}
	tb := table{ID: AnchorOLTPTable, Caption: fmt.Sprintf("Cells of run %d: median over repeats [min–max]", o.Run),
		Head: []string{"placement", "streams", "CPUs of the streams", "cores", "repeats", "tps", "min–max tps", "slowest–fastest second", "tps per core", "p95 ms", "CPU busy %", "disk, stability"}}
	for _, sr := range o.Series {
		a, b, c := series{Name: sr.Label}, series{Name: sr.Label}, series{Name: sr.Label}
		for _, p := range sr.Points {
			lo, hi := p.TPSMin, p.TPSMax
			if p.Repeats < 2 {
				lo, hi = p.SecMin, p.SecMax
			}
			a.Points = append(a.Points, point{X: float64(p.Streams), Y: p.TPS, Lo: lo, Hi: hi})
			pl, ph := 0.0, 0.0
			if p.Cores > 0 {
				pl, ph = lo/float64(p.Cores), hi/float64(p.Cores)
			}
			b.Points = append(b.Points, point{X: float64(p.Streams), Y: p.TPSPerCore, Lo: pl, Hi: ph})
			c.Points = append(c.Points, point{X: float64(p.Streams), Y: p.P95MS, Lo: p.P95MS, Hi: p.P95MS})
			disk := "cached"
			if p.ReadFromDisk {
				disk = "read from disk"
			}
			if p.Unstable {
				disk += ", unstable"
			}
			tb.Rows = append(tb.Rows, []string{sr.Label, strconv.Itoa(p.Streams), p.StreamCPUs, strconv.Itoa(p.Cores), strconv.Itoa(p.Repeats),
				fmtN(p.TPS), fmtN(p.TPSMin) + "–" + fmtN(p.TPSMax), fmtN(p.SecMin) + "–" + fmtN(p.SecMax), fmtN(p.TPSPerCore),
				fmtF(p.P95MS, 3), fmtF(p.BusyPct, 0), disk})
		}
		tps.Series, per.Series, lat.Series = append(tps.Series, a), append(per.Series, b), append(lat.Series, c)
	}
	s.Figures = append(s.Figures, figure{ID: tps.ID, SVG: template.HTML(tps.svg())}, figure{ID: per.ID, SVG: template.HTML(per.svg())},
		figure{ID: lat.ID, SVG: template.HTML(lat.svg())})
	s.Tables = append(s.Tables, tb)
	s.Notes = o.Notes
	return s
}

func querySection(r *Report) section {
	s := section{ID: AnchorQueries, Title: "Reporting queries"}
	q := r.Reporting
	if q == nil {
		s.Absent = absentText(r, "reporting")
		return s
	}
	s.Intro = fmt.Sprintf("Run %d: transtats P1 and P2 on %s %s, %s rows of tran_stats; each cell %s s measured after %s s warm-up. Queries per hour count all streams together; speedup is against DOP 1 at the same streams.",
		q.Run, q.Engine, q.Version, fmtN(float64(q.Rows)), fmtF(q.DurationS, 1), fmtF(q.WarmupS, 1))
	if q.Load != nil {
		how := "loaded"
		if q.Load.Reused {
			how = "reused from an earlier load"
		}
		s.Intro += fmt.Sprintf(" Data %s by %s at %s rows/s.", how, q.Load.Method, fmtN(q.Load.RowsPerSecond))
	}
	var xs, ds []float64
	for _, sr := range q.ByDOP {
		for _, p := range sr.Points {
			xs = append(xs, float64(p.Streams))
			ds = append(ds, float64(p.DOP))
		}
	}
	// One chart per query: their rates differ by orders of magnitude.
	var qphs []*chart
	for _, sr := range q.ByDOP {
		if len(qphs) == 0 || qphs[len(qphs)-1].Title != sr.Query+": queries per hour against streams, per DOP" {
			qphs = append(qphs, &chart{ID: AnchorQueries + "-qph-" + strings.ToLower(sr.Query), Title: sr.Query + ": queries per hour against streams, per DOP",
				X: streamsScale("streams", xs), Y: scale{Label: "queries per hour (all streams)", Zero: true, Format: fmtCompact}})
		}
		c := series{Name: fmt.Sprintf("%s, DOP %d", sr.Query, sr.DOP)}
		for _, p := range sr.Points {
			c.Points = append(c.Points, point{X: float64(p.Streams), Y: p.QPH, Lo: p.QPHMin, Hi: p.QPHMax})
		}
		qphs[len(qphs)-1].Series = append(qphs[len(qphs)-1].Series, c)
	}
	sp := chart{ID: AnchorSpeedup, Title: "Speedup against DOP, per streams", X: streamsScale("DOP", ds), Y: scale{Label: "queries per hour ÷ DOP 1's", Zero: true, Format: fmtSig}, Ideal: true}
	for _, sr := range q.ByStreams {
		c := series{Name: fmt.Sprintf("%s, %s", sr.Query, plural(sr.Streams, "stream"))}
		for _, p := range sr.Points {
			if p.Speedup > 0 {
				c.Points = append(c.Points, point{X: float64(p.DOP), Y: p.Speedup, Lo: p.Speedup, Hi: p.Speedup})
			}
		}
		if len(c.Points) > 0 {
			sp.Series = append(sp.Series, c)
		}
	}
	for _, c := range qphs {
		s.Figures = append(s.Figures, figure{ID: c.ID, SVG: template.HTML(c.svg())})
	}
	if len(sp.Series) > 0 {
		s.Figures = append(s.Figures, figure{ID: sp.ID, SVG: template.HTML(sp.svg())})
	}
	tb := table{ID: AnchorQueries + "-table", Caption: fmt.Sprintf("Cells of run %d: median over repeats [min–max]", q.Run),
		Head: []string{"query", "DOP", "streams", "repeats", "queries per hour", "min–max", "mean ms", "p95 ms", "speedup vs DOP 1", "errors"}}
	workers := q.hasWorkers()
	if workers {
		tb.Head = append(tb.Head, "workers ran on (CPUs; in: every sample inside the placement)")
	}
	for _, sr := range q.ByDOP {
		for _, p := range sr.Points {
			row := []string{sr.Query, strconv.Itoa(p.DOP), strconv.Itoa(p.Streams), strconv.Itoa(p.Repeats), fmtN(p.QPH),
				fmtN(p.QPHMin) + "–" + fmtN(p.QPHMax), fmtF(p.MeanMS, 1), fmtF(p.P95MS, 1), speedup(p), strconv.FormatInt(p.Errors, 10)}
			if workers {
				row = append(row, dashIfEmpty(p.Workers))
			}
			tb.Rows = append(tb.Rows, row)
		}
	}
	s.Tables = append(s.Tables, tb)
	if et, ok := estimates(AnchorQueries+"-estimate", "", q.Estimates); ok {
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

func ioSection(r *Report) section {
	s := section{ID: AnchorIO, Title: "Storage"}
	x := r.IO
	if x == nil || x.Probe == nil {
		s.Absent = absentText(r, "io")
		return s
	}
	p := x.Probe
	s.Intro = fmt.Sprintf("Run %d: %s (%s), a %s test file, %s; %s queue depth.", x.Run, orDash(p.Dir), orDash(p.FSType), units.Bytes(p.FileSize), ioMode(p), orDash(p.Engine))
	tb := table{ID: AnchorIO + "-table", Caption: "Each pattern's measured window: operations per second and latency per operation",
		Head: []string{"pattern", "block", "QD", "read %", "IOPS", "MB/s (10⁶ B/s)", "mean µs", "p50 µs", "p99 µs", "max µs"}}
	for _, pt := range p.Patterns {
		tb.Rows = append(tb.Rows, []string{pt.Name, units.Bytes(pt.BlockSize).String(), strconv.Itoa(pt.QD), strconv.Itoa(pt.ReadPct),
			fmtN(pt.Read.IOPS), fmtF(pt.Read.MBps, 1), fmtF(pt.Read.MeanUs, 1), fmtF(pt.Read.P50Us, 1), fmtF(pt.Read.P99Us, 1), fmtF(pt.Read.MaxUs, 1)})
	}
	s.Tables = append(s.Tables, tb)
	if rt := p.Ratio; rt != nil {
		s.Notes = append(s.Notes, fmt.Sprintf("Sequential reads deliver %s pages of %s per second against %s random reads per second: %s×; %s assumes %s×.",
			fmtN(rt.SeqPagesPerSec), units.Bytes(rt.PageSize), fmtN(rt.RandomIOPS), fmtF(rt.Ratio, 1), rt.ModelName, fmtF(rt.ModelRatio, 1)))
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
		rt := table{ID: AnchorIO + "-ratios", Caption: "Sequential 8 KiB pages per second against random 8 KiB reads per second at the same queue depth: one sequence with QD reads in flight, or QD concurrent readers of their own sequences",
			Head: []string{"sequential", "QD", "random IOPS", "sequential pages/s", "ratio"}}
		for _, x := range p.Ratios {
			kind := "one sequence"
			if x.Readers > 0 {
				kind = plural(x.Readers, "reader")
			}
			rt.Rows = append(rt.Rows, []string{kind, strconv.Itoa(x.QD), fmtN(x.RandomIOPS), fmtN(x.SeqPagesPerSec), fmtF(x.Ratio, 1)})
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
func ioRatioFigure(rs []result.IORatioAt) figure {
	c := &chart{ID: AnchorIO + "-ratio", Title: "Sequential pages per random read, against queue depth (an optimizer assumes one number: 4.2 in the classic model)",
		X: scale{Label: "queue depth (threads, one read each in flight)", Log: 2, Format: fmtSig}, Y: scale{Label: "sequential 8 KiB pages per random 8 KiB read", Log: 10, Format: fmtSig}}
	one, many := series{Name: "one sequence, QD in flight"}, series{Name: "QD concurrent readers"}
	var xs, ys []float64
	for _, r := range rs {
		pt := point{X: float64(r.QD), Y: r.Ratio}
		if r.Readers > 0 {
			many.Points = append(many.Points, pt)
		} else {
			one.Points = append(one.Points, pt)
		}
		xs, ys = append(xs, pt.X), append(ys, pt.Y)
	}
	c.X.fit(xs)
	c.Y.fit(append(ys, iobench.ModelSeqPagesSec/iobench.ModelRandomIOPS))
	c.Series = append(c.Series, one)
	if len(many.Points) > 0 {
		c.Series = append(c.Series, many)
	}
	return figure{ID: c.ID, SVG: template.HTML(c.svg())}
}

// ioSpanFigure plots each probe's random reads against queue depth, one
// line per span.
func ioSpanFigure(spans []IOSpan) figure {
	c := &chart{ID: AnchorIO + "-span", Title: "8 KiB random reads per second against queue depth, one line per storage probe and the span its data covered",
		X: scale{Label: "queue depth", Log: 2, Format: fmtSig}, Y: scale{Label: "random reads per second", Log: 10, Format: fmtSig}}
	var xs, ys []float64
	for _, sp := range spans {
		sr := series{Name: fmt.Sprintf("run %d, span %s", sp.Run, units.Bytes(sp.Span))}
		for _, p := range sp.Points {
			sr.Points = append(sr.Points, point{X: float64(p.QD), Y: p.IOPS})
			xs, ys = append(xs, float64(p.QD)), append(ys, p.IOPS)
		}
		c.Series = append(c.Series, sr)
	}
	c.X.fit(xs)
	c.Y.fit(ys)
	return figure{ID: c.ID, SVG: template.HTML(c.svg())}
}

func assumedWord(b bool) string {
	if b {
		return ", assumed"
	}
	return ""
}
