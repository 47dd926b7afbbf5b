package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/numalab/numalab/internal/calibrated"
	"github.com/numalab/numalab/internal/sentinel"
)

// measuredTables are the measured fit's cells, each with the speed
// sentinel's samples around it, and the sentinel's whole series.
func measuredTables(f *calibrated.MeasuredFit) []Table {
	v := f.Verdict
	mem := len(v.MemDeviation) == len(f.Sentinel.Samples) && len(v.MemDeviation) > 0
	dev := func(i int) string {
		if i < 0 || i >= len(v.Deviation) {
			return "–"
		}
		s := fmt.Sprintf("%+.0f%%", 100*v.Deviation[i])
		if mem {
			s = fmt.Sprintf("core %+.0f%%, memory %+.0f%%", 100*v.Deviation[i], 100*v.MemDeviation[i])
		}
		if slices.Contains(v.Off, i) {
			s += " (off)"
		}
		return s
	}
	cells := Table{ID: AnchorModel + "-cells", Caption: fmt.Sprintf(
		"The measured fit's cells: %s; the sentinel's samples just before and after each, off its median", f.What),
		Head: []string{"cell", "memory", "latency ns", "tps per core", "sentinel before", "sentinel after", "in the fit",
			"instructions per txn", "LLC misses per txn"}}
	for _, c := range f.Cells {
		in := "yes"
		if c.Off {
			in = "no: the sentinel was off"
		}
		ins, miss := "–", "–"
		if c.NoCounters != "" {
			ins, miss = "– (the read failed)", "– (the read failed)"
		}
		if k := c.Counters; k != nil && c.Txns > 0 {
			ins, miss = FmtN(float64(k.Instructions)/float64(c.Txns)), FmtN(float64(k.LLCMisses)/float64(c.Txns))
		}
		cells.Rows = append(cells.Rows, []string{c.Label, f.Memory[c.Memory].Name, FmtF(c.LatencyNS, 1), FmtN(c.TPSPerCore),
			dev(c.Before), dev(c.After), in, ins, miss})
	}
	series := Table{ID: AnchorModel + "-sentinel", Fold: true,
		Caption: fmt.Sprintf("The speed sentinel around the measured fit's cells: median %s ms, tolerance ±%.0f%%",
			FmtF(float64(v.Median)/1e6, 2), 100*v.Tolerance),
		Head: []string{"sample", "after", "ms", "off the median"}}
	if mem {
		series.Caption = fmt.Sprintf("The speed sentinel around the measured fit's cells: core reference median "+
			"%s ms, memory reference (%s) median %s ns a load, tolerance ±%.0f%% for each; a sample is off when either "+
			"is, or when the memory reference's pages were not all in memory",
			FmtF(float64(v.Median)/1e6, 2), v.MemReference(), FmtF(sentinel.PerLoad(v.MemMedian), 0), 100*v.Tolerance)
		series.Head = []string{"sample", "after", "core ms", "core off its median", "memory ns a load",
			"memory off its median", "off"}
	}
	for i, s := range f.Sentinel.Samples {
		row := []string{fmt.Sprint(i), s.Label, FmtF(float64(s.Took)/1e6, 2), dev(i)}
		if mem {
			off := "no"
			switch {
			case !slices.Contains(v.Off, i):
			case s.MemNotResident != "":
				off = "yes: its pages: " + s.MemNotResident
			default:
				off = "yes"
			}
			row = []string{fmt.Sprint(i), s.Label, FmtF(float64(s.Took)/1e6, 2), fmt.Sprintf("%+.0f%%", 100*v.Deviation[i]),
				FmtF(sentinel.PerLoad(s.Mem), 0), fmt.Sprintf("%+.0f%%", 100*v.MemDeviation[i]), off}
		}
		series.Rows = append(series.Rows, row)
	}
	return []Table{cells, series}
}

// measuredNotes are why the measured fit has no held-out check (its
// checks are among the model's Statements), its counters, and its
// sentinel's stored verdict in the words stdout gives it, with the cells
// left out beside it, for the model section.
func measuredNotes(f *calibrated.MeasuredFit) []string {
	var out []string
	if f.HeldOutError != "" {
		out = append(out, "No held-out check: "+f.HeldOutError+".")
	}
	out = append(out, strings.ToUpper(f.CounterLine()[:1])+f.CounterLine()[1:]+".")
	line := f.Verdict.Line()
	out = append(out, strings.ToUpper(line[:1])+line[1:]+".")
	if off := f.OffCells(); len(off) > 0 {
		out = append(out, fmt.Sprintf(
			"%d cell(s) next to a sample whose core reference read off are left out of the fit and the held-out check: %s.",
			len(off), strings.Join(off, ", ")))
	}
	return out
}
