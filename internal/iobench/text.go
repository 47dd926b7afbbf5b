package iobench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/units"
)

// WriteText renders a probe as a terminal table with units.
func WriteText(w io.Writer, r *result.IOProbe) error {
	var b strings.Builder
	mode := "O_DIRECT"
	if !r.Direct {
		mode = r.Buffered
	}
	fmt.Fprintf(&b, "storage probe of %s (%s): test file %s, %s, %s per pattern, %s\n",
		r.Dir, r.FSType, units.Bytes(r.FileSize), mode, r.Duration, engineText(r.Engine))
	if r.Span > 0 {
		how := "the gaps allocated (not known to keep holes)"
		if r.Sparse {
			how = "sparse: holes between"
		}
		fmt.Fprintf(&b, "span %s: the %s of data in 1 MiB chunks spread evenly over it, %s; where they land on the "+
			"device is the filesystem's choice\n",
			units.Bytes(r.Span), units.Bytes(r.FileSize), how)
	}
	if r.Fill.Elapsed > 0 {
		fmt.Fprintf(&b, "filled with incompressible data in %.2f s (%.0f MB/s, write + fsync)\n",
			r.Fill.Elapsed.Seconds(), r.Fill.MBps)
	}
	if r.Interrupted {
		b.WriteString("interrupted: only the patterns below finished\n")
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-18s\tblock\tQD\tIOPS\tMB/s\tmean µs\tp50 µs\tp99 µs\tmax µs\t\n", "pattern")
	row := func(name string, p result.IOPattern, s result.IOStats) {
		qd := strconv.Itoa(p.QD)
		if p.Readers > 0 {
			qd = fmt.Sprintf("%d readers", p.Readers)
		}
		fmt.Fprintf(tw, "%-18s\t%s\t%s\t%.0f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n",
			name, units.Bytes(p.BlockSize), qd, s.IOPS, s.MBps, s.MeanUs, s.P50Us, s.P99Us, s.MaxUs)
	}
	for _, p := range r.Patterns {
		switch p.Name {
		case RandRead:
			row("random read", p, p.Read)
		case SeqRead:
			row("sequential read", p, p.Read)
		case RandRW:
			row(fmt.Sprintf("mix %d/%d: read", p.ReadPct, 100-p.ReadPct), p, p.Read)
			if p.Write != nil {
				row(fmt.Sprintf("mix %d/%d: write", p.ReadPct, 100-p.ReadPct), p, *p.Write)
			}
		}
	}
	tw.Flush()
	b.WriteString("MB = 10^6 bytes; latency from system call to return; p50/p99 over every operation, within 0.05%\n")
	if q := r.Ratio; q != nil {
		fmt.Fprintf(&b, "\nrandom vs sequential 8 KiB pages:\n")
		fmt.Fprintf(&b, "  measured:  %.0f random reads/s (QD1) vs %.0f sequential pages/s (%s reads): "+
			"%.1f sequential pages per random read\n",
			q.RandomIOPS, q.SeqPagesPerSec, units.Bytes(q.SeqBlockSize), q.Ratio)
		fmt.Fprintf(&b, "  model:     %.0f random reads/s vs %.0f sequential pages/s: %.1f, the %s\n",
			q.ModelRandom, q.ModelSeqPages, q.ModelRatio, q.ModelName)
	}
	if len(r.Ratios) > 1 {
		b.WriteString("\nthe same ratio at each queue depth (one sequence, QD reads in flight) and for concurrent " +
			"readers (each its own sequence), against random reads at that depth:\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "  %-11s\tQD\trandom IOPS\tsequential pages/s\tratio\t\n", "sequential")
		for _, x := range r.Ratios {
			kind := "one sequence"
			if x.Readers > 0 {
				kind = fmt.Sprintf("%d reader%s", x.Readers, map[bool]string{true: "s"}[x.Readers > 1])
			}
			fmt.Fprintf(tw, "  %-11s\t%d\t%.0f\t%.0f\t%.1f\t\n", kind, x.QD, x.RandomIOPS, x.SeqPagesPerSec, x.Ratio)
		}
		tw.Flush()
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func engineText(e string) string {
	if e == Engine {
		return "QD = threads each with one pread/pwrite in flight"
	}
	return e
}

// Headline is a probe's one-line figure for run listings: 8 KiB random
// reads at QD1, the best IOPS, 1 MiB sequential MB/s, the page-rate ratio,
// and the buffered label when O_DIRECT was not used. Empty for nil.
func Headline(r *result.IOProbe) string {
	if r == nil {
		return ""
	}
	var parts []string
	best := 0.0
	for _, p := range r.Patterns {
		if p.Name == RandRead && p.QD == 1 && p.BlockSize == PageSize {
			parts = append(parts, fmt.Sprintf("8 KiB random read QD1 %.0f IOPS", p.Read.IOPS))
		}
		if p.Name == RandRead {
			best = max(best, p.Read.IOPS)
		}
	}
	if best > 0 {
		parts = append(parts, fmt.Sprintf("best %.0f IOPS", best))
	}
	for _, p := range r.Patterns {
		if p.Name == SeqRead && p.BlockSize == 1<<20 {
			parts = append(parts, fmt.Sprintf("1 MiB sequential %.0f MB/s", p.Read.MBps))
		}
	}
	if r.Ratio != nil {
		parts = append(parts, fmt.Sprintf("page-rate ratio %.1f (model %.1f)", r.Ratio.Ratio, r.Ratio.ModelRatio))
	}
	if r.Span > 0 {
		parts = append(parts, "span "+units.Bytes(r.Span).String())
	}
	if !r.Direct {
		parts = append(parts, r.Buffered)
	}
	return strings.Join(parts, ", ")
}
