package memlat

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/numalab/numalab/internal/units"
)

// writeBandwidth prints the bandwidth per operation and thread count, per
// node pair, and the loaded latency.
func writeBandwidth(b *strings.Builder, bw *Bandwidth) {
	if bw == nil {
		return
	}
	if len(bw.Read) > 0 {
		writeBWThreads(b, bw)
	}
	writeBWNodes(b, bw)
	if len(bw.Loaded) > 0 {
		fmt.Fprintf(b, "\nLoaded latency: random chase over %s on CPU %d while k other CPUs stream\n",
			units.Bytes(bw.Bytes), bw.CPU)
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "streamers\tns\tspread ns\tstream GB/s\t")
		for _, p := range bw.Loaded {
			fmt.Fprintf(tw, "%d\t%.1f\t%s\t%.1f\t\n", p.Streamers, p.NS.Median, spread(p.NS), p.GBps)
		}
		tw.Flush()
	}
}

// writeBWThreads prints one row per thread count, one column per
// operation measured.
func writeBWThreads(b *strings.Builder, bw *Bandwidth) {
	kernel := bw.Kernel
	if kernel == "" {
		kernel = "scalar 8-byte loads (a run stored before the vector kernels)"
	}
	p := bw.Read[0]
	pages := ""
	if bw.Pages != "" {
		pages = ", " + PagesAsked(bw.Pages, bw.PageBytes, bw.HugeFraction)
	}
	fmt.Fprintf(b, "\nMemory bandwidth, %s, over %s%s, each thread its own share:\n", kernel,
		units.Bytes(p.RegionBytes*int64(p.Threads)), pages)
	b.WriteString("GB/s (10^9 B/s) of all threads, the highest clean window; " +
		"copy and triad count bytes read and written, as STREAM does\n")
	var ops []string
	for _, op := range bwOps {
		if len(bw.Op(op)) > 0 {
			ops = append(ops, op)
		}
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "threads\tCPUs\t%s GB/s\t\n", strings.Join(ops, " GB/s\t"))
	var one, many bool // a starred figure of one thread, of more
	for i, p := range bw.Read {
		fmt.Fprintf(tw, "%d\t%s\t", p.Threads, ints(p.CPUs))
		dirty := false
		for _, op := range ops {
			if pts := bw.Op(op); i < len(pts) {
				fmt.Fprintf(tw, "%s\t", bwFigure(pts[i], &dirty))
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintln(tw)
		one, many = one || dirty && p.Threads == 1, many || dirty && p.Threads > 1
	}
	tw.Flush()
	if one {
		b.WriteString("(* one thread: no window was clean, the thread was preempted in every one; " +
			"its window is its own CPU time, so the figure stands, less what the intruder took from its caches)\n")
	}
	if many {
		b.WriteString("(* more threads: no window was clean, a thread was preempted in every one, " +
			"and the others ran alone meanwhile, so the figure may overstate)\n")
	}
}

// bwFigure is a point's GB/s, starred when its window was not clean.
func bwFigure(p BWPoint, dirty *bool) string {
	if p.Preempted > 0 {
		*dirty = true
		return fmt.Sprintf("%.1f *", p.GBps)
	}
	return fmt.Sprintf("%.1f", p.GBps)
}

// writeBWNodes prints the read bandwidth per node pair as a matrix.
func writeBWNodes(b *strings.Builder, bw *Bandwidth) {
	if len(bw.Nodes) == 0 {
		return
	}
	var rows, cols []int
	cell := map[[2]int]BWPoint{}
	for _, n := range bw.Nodes {
		if !slices.Contains(rows, n.CPUNode) {
			rows = append(rows, n.CPUNode)
		}
		if !slices.Contains(cols, n.MemNode) {
			cols = append(cols, n.MemNode)
		}
		cell[[2]int{n.CPUNode, n.MemNode}] = n.Point
	}
	fmt.Fprintf(b, "\nRead bandwidth per node pair: "+
		"every CPU of the thread node streams its own region of memory bound to the memory node, GB/s\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "threads on \\ memory on\t")
	for _, c := range cols {
		fmt.Fprintf(tw, "node %d\t", c)
	}
	fmt.Fprintln(tw)
	dirty := false
	for _, r := range rows {
		fmt.Fprintf(tw, "node %d\t", r)
		for _, c := range cols {
			if p, ok := cell[[2]int{r, c}]; ok {
				fmt.Fprintf(tw, "%s (%d thr)\t", bwFigure(p, &dirty), p.Threads)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if dirty {
		b.WriteString("(* no window was clean: the figure may overstate)\n")
	}
}
