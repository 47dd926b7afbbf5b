package report

import (
	"encoding/json"
	"fmt"
	"github.com/numalab/numalab/internal/estimate"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/units"
)

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteFindings writes the findings that answer (the decision first),
// up to n of them (all when n ≤ 0), one a line: the lines the HTML
// report's findings show, and what both the text report and eval's
// summary open with.
func WriteFindings(w io.Writer, r *Report, n int) error {
	var b strings.Builder
	answers, _ := splitFindings(r.Findings)
	for i, f := range answers {
		if n > 0 && i >= n {
			break
		}
		fmt.Fprintf(&b, "  - %s\n", f.Text)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteText writes the report as terminal tables: the findings first
// (the answers, then the details), then each section with its provenance.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "numalab report\n\nThe answer: %s\n\nFindings\n", cardText(r))
	WriteFindings(&b, r, 0)
	if _, details := splitFindings(r.Findings); len(details) > 0 {
		b.WriteString("\nDetails\n")
		for _, f := range details {
			fmt.Fprintf(&b, "  - %s\n", f.Text)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}

	b.WriteString("\nRuns\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  id\tkind\thost\tstarted\tstatus\tnumalab\tcommand")
	for _, ref := range r.Runs {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\t%s\n", ref.ID, ref.Kind, ref.Host, ref.Started, ref.Status,
			ref.Version, ref.Command)
	}
	tw.Flush()

	if m := r.Machine; m != nil {
		t := m.Topology
		fmt.Fprintf(&b, "\nMachine (run %d): %s\n", m.Run, OrDash(t.CPUModel))
		fmt.Fprintf(&b, "  %s\n", machineShape(m))
		for _, line := range machineText(t) {
			fmt.Fprintf(&b, "  %s\n", line)
		}
	}

	if len(r.Preflight) > 0 {
		b.WriteString("\nPreflight: settings that distort these figures\n")
		for _, c := range r.Preflight {
			fmt.Fprintf(&b, "  ! %s\n    affects: %s\n", c, c.affectsText())
		}
	}

	absentNote := func(section string) {
		for _, a := range r.Absent {
			if a.Section == section {
				fmt.Fprintf(&b, "  no %s run given (try '%s')\n", a.Kind, a.Hint)
			}
		}
	}
	b.WriteString("\nMemory latency\n")
	if m := r.Memory; m != nil {
		textMemory(&b, m)
	} else {
		absentNote("memory")
	}
	b.WriteString("\nOLTP throughput\n")
	if o := r.OLTP; o != nil {
		textOLTP(&b, o)
	} else {
		absentNote("oltp")
	}
	for _, sec := range r.placed(true) {
		sec.Text(&b, r)
	}
	b.WriteString("\nReporting queries\n")
	if q := r.Reporting; q != nil {
		textQueries(&b, q)
	} else {
		absentNote("reporting")
	}
	if pd := r.PlacedDOP; pd != nil {
		fmt.Fprintf(&b, "\n%s (runs %s)\n  %s\n", pd.title(), joinIDs(pd.Runs), pd.Text())
	}
	b.WriteString("\nStorage\n")
	if x := r.IO; x != nil {
		textIO(&b, x)
	} else {
		absentNote("io")
	}
	for _, sec := range r.placed(false) {
		sec.Text(&b, r)
	}
	b.WriteString("\nModel: 1, 2 and 4 sockets of this CPU\n")
	if md := r.Model; md != nil {
		textModel(&b, md)
		if r.Published != nil {
			fmt.Fprintf(&b, "  %s\n", publishedLine(r.Published))
		}
	} else {
		absentNote("model")
	}
	b.WriteString("\nWhich server\n")
	textBuy(&b, r)
	_, err := io.WriteString(w, b.String())
	return err
}

// OrDash is s, or a dash when s is empty.
func OrDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// machineShape is "1 package, 1 node, 2 cores, 2 logical CPUs (1 per core)".
func machineShape(m *Machine) string {
	t := m.Topology
	s := fmt.Sprintf("%s, %s, %s, %s (%d per core)", Plural(len(t.Packages), "package"), Plural(len(t.Nodes), "NUMA node"),
		Plural(len(t.Cores), "core"), Plural(len(t.CPUs), "logical CPU"), m.Threads)
	var extra []string
	if t.Hypervisor != "" {
		extra = append(extra, "hypervisor "+t.Hypervisor)
	}
	if t.SMT != "" {
		extra = append(extra, "SMT "+t.SMT)
	}
	if t.THP != "" {
		extra = append(extra, "THP "+t.THP)
	}
	if t.Kernel != "" {
		extra = append(extra, t.Kernel)
	}
	if m.GHz > 0 {
		extra = append(extra, "core clock "+FmtF(m.GHz, 2)+" GHz (measured)")
	}
	if len(extra) > 0 {
		s += "; " + strings.Join(extra, ", ")
	}
	return s
}

// Plural is "1 stream" or "3 streams".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func textMemory(b *strings.Builder, m *Memory) {
	fmt.Fprintf(b, "  run %d: median of %d clean windows of >= %d ms per point, [min-max]; every cycle count "+
		"is ns × the run's clock, %s GHz\n",
		m.Run, m.Samples, m.WindowMS, FmtF(m.GHz, 2))
	if d := m.DRAM; d != nil {
		fmt.Fprintf(b, "  DRAM latency (the model's): %s ns = %s cycles, %s\n", FmtF(d.NS, 1), FmtF(d.Cycles, 0), d.Label)
	}
	for _, l := range m.Ladders {
		fmt.Fprintf(b, "  %s chain, %s pages, CPU %d:\n", l.Chain, pagesLabel(l), l.CPU)
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "    working set\tns\tmin-max ns\tcycles\t")
		for _, p := range l.Points {
			fmt.Fprintf(tw, "    %s\t%s\t%s-%s\t%s\t\n", units.Bytes(p.Bytes), FmtF(p.NS.Median, 1), FmtF(p.NS.Min, 1),
				FmtF(p.NS.Max, 1), FmtF(p.NS.Median*m.GHz, 0))
		}
		tw.Flush()
		if len(l.Levels) > 0 {
			var parts []string
			for _, lv := range l.Levels {
				name := lv.Name
				if name == "DRAM" {
					name = "memory"
				}
				p := fmt.Sprintf("%s %s ns up to %s touched", name, FmtF(lv.NS, 1), units.Bytes(lv.ToBytes))
				if lv.KneeRatio > 0 {
					p += fmt.Sprintf(" (knee %s of %s advertised)", units.Bytes(lv.KneeBytes), units.Bytes(lv.CacheBytes))
				}
				parts = append(parts, p)
			}
			fmt.Fprintf(b, "    plateaus in bytes touched: %s\n", strings.Join(parts, ", "))
		}
	}
	if mx := m.Matrix; mx != nil && len(mx.NS) > 0 {
		ns, estimator := matrixNS(m)
		fmt.Fprintf(b, "  NUMA matrix (ns; thread's node down, memory's node across; %s chain over %s, %s pages, %s)",
			mx.Chain, units.Bytes(mx.Bytes), memlat.PageLabel(mx.PageBytes, 1), estimator)
		if mx.SingleNode {
			b.WriteString(": 1×1, this machine has one NUMA node")
		}
		b.WriteString("\n")
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "    \t")
		for _, n := range mx.MemNodes {
			fmt.Fprintf(tw, "node %d\t", n)
		}
		fmt.Fprintln(tw)
		for i, row := range ns {
			fmt.Fprintf(tw, "    node %d\t", mx.CPUNodes[i])
			for _, v := range row {
				fmt.Fprintf(tw, "%s\t", FmtF(v, 1))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	if ml := m.MLP; ml != nil && len(ml.Points) > 0 {
		fmt.Fprintf(b, "  memory-level parallelism (%s, CPU %d):", units.Bytes(ml.Bytes), ml.CPU)
		for _, p := range ml.Points {
			fmt.Fprintf(b, " %d chains/%d thr %s ns/load (%s in flight);", p.Chains, p.Threads, FmtF(p.NSPerLoad.Median, 1),
				FmtF(p.InFlight, 1))
		}
		b.WriteString("\n")
	}
	if c := m.C2C; c != nil && len(c.Pairs) > 0 {
		fmt.Fprintf(b,
			"  cache-to-cache round trip (a line bounced between two pinned threads, lowest clean window, cycles at %s GHz):",
			FmtF(c.GHz, 2))
		for _, p := range c.Pairs {
			if p.Unsteady != "" {
				fmt.Fprintf(b, " %s (CPUs %d,%d) none: %s;", p.Class, p.CPUs[0], p.CPUs[1], p.Unsteady)
				continue
			}
			fmt.Fprintf(b, " %s (CPUs %d,%d) %s ns = %s cycles;", p.Class, p.CPUs[0], p.CPUs[1],
				FmtF(p.BestNS, 1), FmtF(p.Cycles, 0))
		}
		b.WriteString("\n")
	}
	if bw := m.Bandwidth; bw != nil && len(bw.Read) > 0 {
		b.WriteString("  sequential read bandwidth:")
		for _, p := range bw.Read {
			fmt.Fprintf(b, " %d threads %s GB/s;", p.Threads, FmtF(p.GBps, 1))
		}
		b.WriteString("\n")
	}
}

func textOLTP(b *strings.Builder, o *OLTP) {
	fmt.Fprintf(b, "  run %d: %s on %s, %s, %s s measured after %s s warm-up per cell; median of repeats [min-max]; "+
		"tps/core per physical core the streams ran on\n",
		o.Run, o.Workload, o.Engine, Plural(o.Warehouses, "warehouse"), FmtF(o.DurationS, 1), FmtF(o.WarmupS, 1))
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw,
		"    placement\tstreams\trepeats\ttps\tmin-max tps\tseconds min-max\ttps/core\tp95 ms\tCPU %\tflags\t")
	for _, s := range o.Series {
		for _, p := range s.Points {
			var flags []string
			if p.ReadFromDisk {
				flags = append(flags, "disk")
			}
			if p.Unstable {
				flags = append(flags, "unstable")
			}
			fmt.Fprintf(tw, "    %s\t%d\t%d\t%s\t%s-%s\t%s-%s\t%s\t%s\t%s\t%s\t\n", s.Label, p.Streams, p.Repeats, FmtN(p.TPS),
				FmtN(p.TPSMin), FmtN(p.TPSMax), FmtN(p.SecMin), FmtN(p.SecMax), FmtN(p.TPSPerCore), FmtF(p.P95MS, 3),
				FmtF(p.BusyPct, 0), strings.Join(flags, ","))
		}
	}
	tw.Flush()
	for _, n := range o.Notes {
		fmt.Fprintf(b, "  note: %s\n", n)
	}
}

func textQueries(b *strings.Builder, q *Reporting) {
	fmt.Fprintf(b, "  run %d: transtats on %s %s, %s rows, %s s measured after %s s warm-up per cell\n",
		q.Run, q.Engine, q.Version, FmtN(float64(q.Rows)), FmtF(q.DurationS, 1), FmtF(q.WarmupS, 1))
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	workers := q.hasWorkers()
	head := "    query\tDOP\tstreams\tqueries/h\tmin-max\tmean ms\tp95 ms\tspeedup vs DOP 1\t"
	if workers {
		head += "workers ran on\t"
	}
	fmt.Fprintln(tw, head)
	for _, s := range q.ByDOP {
		for _, p := range s.Points {
			fmt.Fprintf(tw, "    %s\t%d\t%d\t%s\t%s-%s\t%s\t%s\t%s\t", s.Query, p.DOP, p.Streams, FmtN(p.QPH),
				FmtN(p.QPHMin), FmtN(p.QPHMax),
				FmtF(p.MeanMS, 1), FmtF(p.P95MS, 1), speedup(p))
			if workers {
				fmt.Fprintf(tw, "%s\t", dashIfEmpty(p.Workers))
			}
			fmt.Fprintln(tw)
		}
	}
	tw.Flush()
	if len(q.Estimates) > 0 {
		var eb strings.Builder
		estimate.WriteTable(&eb, q.Estimates)
		for _, l := range strings.Split(strings.TrimSpace(eb.String()), "\n") {
			fmt.Fprintf(b, "  %s\n", l)
		}
	}
	if q.NoEstimate != "" {
		fmt.Fprintf(b, "  %s\n", q.NoEstimate)
	}
	for _, f := range q.Plans {
		fmt.Fprintf(b, "  plan: %s\n", f.Detail)
	}
	for _, e := range q.Errors {
		fmt.Fprintf(b, "  error: %s\n", e)
	}
}

func speedup(p QueryPoint) string {
	if p.Speedup == 0 {
		return "–"
	}
	return FmtF(p.Speedup, 2) + "×"
}

func textIO(b *strings.Builder, x *IO) {
	p := x.Probe
	fmt.Fprintf(b, "  run %d: %s (%s), %s test file, %s\n", x.Run, OrDash(p.Dir), OrDash(p.FSType),
		units.Bytes(p.FileSize), ioMode(p))
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "    pattern\tblock\tQD\tIOPS\tMB/s\tp50 µs\tp99 µs\t")
	for _, pt := range p.Patterns {
		fmt.Fprintf(tw, "    %s\t%s\t%d\t%s\t%s\t%s\t%s\t\n", pt.Name, units.Bytes(pt.BlockSize), pt.QD, FmtN(pt.Read.IOPS),
			FmtF(pt.Read.MBps, 1), FmtF(pt.Read.P50Us, 1), FmtF(pt.Read.P99Us, 1))
	}
	tw.Flush()
	if r := p.Ratio; r != nil {
		fmt.Fprintf(b, "  sequential/random page rate %s× (%s assumes %s×)\n", FmtF(r.Ratio, 1), r.ModelName,
			FmtF(r.ModelRatio, 1))
	}
	for _, r := range p.Ratios {
		kind := "one sequence"
		if r.Readers > 0 {
			kind = Plural(r.Readers, "reader")
		}
		fmt.Fprintf(b, "  at QD %d, %s: %s×\n", r.QD, kind, FmtF(r.Ratio, 1))
	}
	for _, sp := range x.Spans {
		var ps []string
		for _, pt := range sp.Points {
			ps = append(ps, fmt.Sprintf("QD %d %s IOPS", pt.QD, FmtN(pt.IOPS)))
		}
		fmt.Fprintf(b, "  run %d over a span of %s: %s\n", sp.Run, units.Bytes(sp.Span), strings.Join(ps, ", "))
	}
}

func ioMode(p *result.IOProbe) string {
	if p.Direct {
		return "O_DIRECT"
	}
	if p.Buffered != "" {
		return p.Buffered
	}
	return "buffered"
}

func textModel(b *strings.Builder, md *Model) {
	for _, n := range md.Statements() {
		fmt.Fprintf(b, "  %s\n", n)
	}
	if len(md.Table.Rows) == 0 {
		return
	}
	fmt.Fprintf(b, "  workload: %s; %s\n", md.Derived(), md.Method)
	fmt.Fprintf(b, "  %s; tps/core is per physical core\n", md.LatencyWords())
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "    sockets\tcores/socket\tSMT\tGHz\tlatency ns\tcycles\ttps/core\ttotal tps\tvs 1 socket\t")
	for _, row := range md.Table.Rows {
		fmt.Fprintf(tw, "    %d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s×\t\n", row.Sockets, row.CoresPerSocket,
			row.SMT, FmtF(row.GHz, 2), FmtF(row.LatencyNS, 1), FmtF(row.LatencyCycles, 0), FmtN(row.TPSPerCore),
			FmtN(row.TotalTPS), FmtF(row.TotalVs1S, 2))
	}
	tw.Flush()
	if f := md.Measured; f != nil {
		for _, l := range f.Lines() {
			fmt.Fprintf(b, "  %s\n", l)
		}
	}
}

// hasWorkers says whether any cell recorded where its workers ran.
func (q *Reporting) hasWorkers() bool {
	for _, s := range q.ByDOP {
		for _, p := range s.Points {
			if p.Workers != "" {
				return true
			}
		}
	}
	return false
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
