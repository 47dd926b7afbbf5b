package memlat

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/numalab/numalab/internal/units"
)

// WriteText renders a report as terminal tables. Every number carries its
// unit; each table says the working set, page size and sampling behind it.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	cfg := r.Config
	fmt.Fprintf(&b, "Memory probe: %d clean windows of >= %d ms thread CPU time per point, median [min-max]; ",
		cfg.Samples, cfg.WindowMS)
	fmt.Fprintf(&b, "%d at the largest working set, measured %s, where DRAM latency is the lowest clean window; ",
		cfg.DRAMSamples, times(cfg.Repeats))
	fmt.Fprintf(&b, "chains of one pointer per %d B slot at a random line; TLB-local windows of %s.\n", cfg.SlotBytes,
		units.Bytes(cfg.WindowBytes))
	var cl []string
	for _, c := range r.Clocks {
		cl = append(cl, fmt.Sprintf("%s %.2f", c.When, c.GHz.Median))
	}
	fmt.Fprintf(&b,
		"Core clock: %.2f GHz (the median of dependent add chains on CPU %d: %s GHz); every cycle count is ns x %.2f.\n",
		r.GHz, firstCPU(r), strings.Join(cl, ", "), r.GHz)

	for _, pages := range cfg.Pages {
		writeLadders(&b, r, pages)
	}
	writeLevels(&b, r)
	writeSummary(&b, r)
	if m := r.MLP; m != nil && len(m.Points) > 0 {
		fmt.Fprintf(&b, "\nMemory-level parallelism: k independent random chains in one thread, %s working set, %s, CPU %d\n",
			units.Bytes(m.Bytes), PagesAsked(m.Pages, m.PageBytes, m.HugeFraction), m.CPU)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "chains\tthreads\tns/load\tspread ns\tmisses in flight\t")
		over := false
		for _, p := range m.Points {
			mark := ""
			if p.InFlight > float64(p.Chains) {
				mark, over = " *", true
			}
			fmt.Fprintf(tw, "%d\t%d\t%.1f\t%s\t%.1f%s\t\n", p.Chains, p.Threads, p.NSPerLoad.Median,
				spread(p.NSPerLoad), p.InFlight, mark)
		}
		tw.Flush()
		b.WriteString("(misses in flight: one chain's median ns per load over k chains' median")
		if over {
			b.WriteString("; * more than the chains: not every load missed to memory, so this is no count of misses")
		}
		b.WriteString(")\n")
		if m.Note != "" {
			fmt.Fprintf(&b, "(%s)\n", m.Note)
		}
	}
	writeBandwidth(&b, r.Bandwidth)
	if m := r.Matrix; m != nil && len(m.NS) > 0 {
		fmt.Fprintf(&b,
			"\nNUMA latency matrix: random chain over %s, %s, lowest clean window in ns (relative to the fastest)\n",
			units.Bytes(m.Bytes), PagesAsked(m.Pages, m.PageBytes, m.HugeFraction))
		if m.SingleNode {
			b.WriteString("(this machine has one NUMA node: the matrix is 1x1")
			if m.Reused {
				b.WriteString("; the quick probe reuses the ladder's random-chain point")
			}
			b.WriteString(")\n")
		}
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "thread on \\ memory on\t")
		for _, n := range m.MemNodes {
			fmt.Fprintf(tw, "node %d\t", n)
		}
		fmt.Fprintln(tw)
		for i, row := range m.NS {
			fmt.Fprintf(tw, "node %d (CPU %d)\t", m.CPUNodes[i], m.CPUs[i])
			for j := range m.MemNodes {
				if j < len(row) && i < len(m.Relative) && j < len(m.Relative[i]) {
					fmt.Fprintf(tw, "%.1f (%.2f)\t", best(row[j]), m.Relative[i][j])
				} else {
					fmt.Fprint(tw, "-\t")
				}
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		if m.Cut {
			fmt.Fprintf(&b, "(cut: the probe stopped after %d of the %d cells; - was not measured)\n", m.Cells(),
				len(m.CPUNodes)*len(m.MemNodes))
		}
		if c := m.Caveat(); c != "" {
			fmt.Fprintf(&b, "(%s)\n", c)
		}
	}
	writeC2C(&b, r.C2C)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if r.Elapsed > 0 {
		fmt.Fprintf(&b, "\nProbe took %.1f s.\n", r.Elapsed)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// PagesAsked says what a mapping asked for and what it obtained:
// "2m pages asked, 4KiB (30% huge) obtained".
func PagesAsked(pages string, pageBytes int64, hugeFraction float64) string {
	return fmt.Sprintf("%s pages asked, %s obtained", pages, PageLabel(pageBytes, hugeFraction))
}

func firstCPU(r *Report) int {
	if len(r.Clocks) > 0 {
		return r.Clocks[0].CPU
	}
	return 0
}

func spread(s Stat) string {
	mark := ""
	if s.Noisy {
		mark = " noisy"
	}
	return fmt.Sprintf("%.1f-%.1f%s", s.Min, s.Max, mark)
}

func ints(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// writeLadders prints the ladders of one page size side by side.
func writeLadders(b *strings.Builder, r *Report, pages string) {
	var ls []*Ladder
	for i := range r.Ladders {
		if r.Ladders[i].Pages == pages {
			ls = append(ls, &r.Ladders[i])
		}
	}
	if len(ls) == 0 {
		return
	}
	fmt.Fprintf(b, "\nLatency ladder, %s (smaps AnonHugePages), CPU %d\n",
		PagesAsked(pages, ls[0].PageBytes, ls[0].HugeFraction), ls[0].CPU)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "working set\tlines touched\t")
	for _, l := range ls {
		fmt.Fprintf(tw, "%s ns\tcycles\tspread ns\t", l.Chain)
	}
	fmt.Fprintln(tw)
	// Rows are the union of sizes, in order.
	idx := make([]int, len(ls))
	for {
		var next int64 = -1
		for k, l := range ls {
			if idx[k] < len(l.Points) && (next < 0 || l.Points[idx[k]].Bytes < next) {
				next = l.Points[idx[k]].Bytes
			}
		}
		if next < 0 {
			break
		}
		touched := ""
		row := ""
		for k, l := range ls {
			if idx[k] < len(l.Points) && l.Points[idx[k]].Bytes == next {
				p := l.Points[idx[k]]
				touched = units.Bytes(p.TouchedBytes).String()
				row += fmt.Sprintf("%.2f\t%.1f\t%s\t", p.NS.Median, p.NS.Median*r.GHz, spread(p.NS))
				idx[k]++
			} else {
				row += "\t\t\t"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", units.Bytes(next), touched, row)
	}
	tw.Flush()
}

// writeLevels prints the labelled plateaus of every full ladder.
func writeLevels(b *strings.Builder, r *Report) {
	any := false
	for _, l := range r.Ladders {
		any = any || len(l.Levels) > 0
	}
	if !any {
		return
	}
	fmt.Fprintf(b, "\nPlateaus found in the ladders, sizes in bytes touched (lines touched x 64 B), "+
		"against the caches the topology reports.\n")
	fmt.Fprintf(b, "The knee is where latency crosses between two plateaus: the capacity the ladder saw. "+
		"effective/advertised is knee / topology;\n"+
		"below 1 the level holds less than advertised (in a VM, the rest of a shared cache is the neighbours').\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "ladder\tlevel\tns\tcycles\tplateau\tknee\ttopology\teffective/advertised\t")
	for _, l := range r.Ladders {
		for _, lv := range l.Levels {
			knee, topo, ratio := "-", "-", "-"
			if lv.KneeBytes > 0 {
				knee = units.Bytes(lv.KneeBytes).String()
			}
			if lv.CacheBytes > 0 {
				topo = units.Bytes(lv.CacheBytes).String()
			}
			if lv.KneeRatio > 0 {
				ratio = fmt.Sprintf("%.2f", lv.KneeRatio)
			}
			fmt.Fprintf(tw, "%s %s\t%s\t%.2f\t%.1f\t%s-%s\t%s\t%s\t%s\t\n", l.Chain, l.Pages, lv.Name, lv.NS, lv.NS*r.GHz,
				units.Bytes(lv.FromBytes), units.Bytes(lv.ToBytes), knee, topo, ratio)
		}
		if l.LabelError != "" {
			fmt.Fprintf(tw, "%s %s\t%s\t\t\t\t\t\t\t\n", l.Chain, l.Pages, l.LabelError)
		}
	}
	tw.Flush()
}

// writeSummary prints the DRAM latencies at the largest working set.
func writeSummary(b *strings.Builder, r *Report) {
	var rows []string
	var largest int64
	for _, l := range r.Ladders {
		if l.Cut {
			continue
		}
		p := l.Last()
		largest = p.Bytes
		med := []string{fmt.Sprintf("%.1f", p.NS.Median)}
		n := p.NS.Samples
		for _, s := range p.Repeats {
			med = append(med, fmt.Sprintf("%.1f", s.Median))
			n += s.Samples
		}
		rows = append(rows, fmt.Sprintf("%s\t%s\t%s\t%.1f\t%.0f\t%s\t%d x %.0f ms\t",
			l.Chain, l.Pages, PageLabel(l.PageBytes, l.HugeFraction),
			p.BestNS, p.BestNS*r.GHz, strings.Join(med, " "), n, p.NS.Window))
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b,
		"\nLatency at the largest working set (%s): the lowest clean window, and the median of each mapping\n",
		units.Bytes(largest))
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "chain\tpages asked\tobtained\tns\tcycles\tmedians ns\twindows\t")
	for _, row := range rows {
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
	if ns, what := summarize(r).DRAM(); ns > 0 {
		fmt.Fprintf(b,
			"DRAM latency, the figure numalab model and report use: %.1f ns = %.0f cycles, %s (lowest clean window).\n",
			ns, ns*r.GHz, what)
	}
}

// times says how often the largest working set was measured, for the
// header line: "once", "twice, ...", "3 times, in fresh mappings after the first".
func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice, the second time in a fresh mapping"
	}
	return fmt.Sprintf("%d times, in fresh mappings after the first", n)
}

// writeC2C prints the cache-to-cache latency, one row per class of pair.
func writeC2C(b *strings.Builder, c *C2C) {
	if c == nil || len(c.Pairs) == 0 {
		return
	}
	fmt.Fprintf(b, "\nCache-to-cache latency: one line bounced between two pinned threads, "+
		"the lowest clean window of %d; cycles at the start clock, %.2f GHz\n",
		c.Pairs[0].RoundTripNS.Samples, c.GHz)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "pair\tCPUs\tround trip ns\tcycles\tone way ns\tmedian ns\tspread ns\t")
	var unsteady []string
	for _, p := range c.Pairs {
		if p.Unsteady != "" {
			fmt.Fprintf(tw, "%s\t%d,%d\t-\t-\t-\t%.1f\t%s\t\n", p.Class, p.CPUs[0], p.CPUs[1], p.RoundTripNS.Median,
				spread(p.RoundTripNS))
			unsteady = append(unsteady, fmt.Sprintf("(%s, CPUs %d,%d: %s)\n", p.Class, p.CPUs[0], p.CPUs[1], p.Unsteady))
			continue
		}
		fmt.Fprintf(tw, "%s\t%d,%d\t%.1f\t%.0f\t%.1f\t%.1f\t%s\t\n", p.Class, p.CPUs[0], p.CPUs[1], p.BestNS, p.Cycles,
			p.OneWayNS, p.RoundTripNS.Median, spread(p.RoundTripNS))
	}
	tw.Flush()
	for _, u := range unsteady {
		b.WriteString(u)
	}
	b.WriteString("(a round trip is two transfers of a modified line; " +
		"one way is half of it, the figure multichase's pingpong prints;\n" +
		" a median far above the lowest window means the threads often waited for their CPUs)\n")
	if len(c.Missing) > 0 {
		fmt.Fprintf(b, "(no pair on this machine: %s)\n", strings.Join(c.Missing, ", "))
	}
}
