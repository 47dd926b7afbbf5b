package memlat

import (
	"fmt"
	"strings"

	"github.com/numalab/numalab/internal/units"
)

// Summary is what other commands (numalab model --from-run) read from a
// probe: stored as item kind KindSummary.
type Summary struct {
	GHz             float64 `json:"ghz"`               // median measured core clock
	WorkingSetBytes int64   `json:"working_set_bytes"` // where the DRAM numbers were measured
	// DRAM latency of a fully random chain (every access may miss the
	// TLB) and of a TLB-local one, with 4 KiB and 2 MiB pages: the largest
	// point's BestNS, its lowest clean window; 0 when not measured. The 4
	// KiB figures come only from mappings that asked for 4 KiB pages, the 2
	// MiB ones from mappings that asked for 2 MiB, whatever share of them
	// was huge (PageBytes2M, HugeFraction2M).
	DRAMNS4K         float64 `json:"dram_ns_4k,omitempty"`
	DRAMNS2M         float64 `json:"dram_ns_2m,omitempty"`
	TLBLocalDRAMNS4K float64 `json:"tlb_local_dram_ns_4k,omitempty"`
	TLBLocalDRAMNS2M float64 `json:"tlb_local_dram_ns_2m,omitempty"`
	PageBytes2M      int64   `json:"page_bytes_2m,omitempty"` // page size obtained when 2m was asked
	HugeFraction2M   float64 `json:"huge_frac_2m,omitempty"`  // fraction of that mapping in 2 MiB pages
	// Nodes and MatrixNS: the NUMA matrix (rows: the thread's node in
	// CPUNodes order, columns: the memory's node in Nodes order), each
	// cell's lowest clean window in ns; LocalNS is the mean of its diagonal, RemoteNS of
	// the rest (0 on one node).
	Nodes    []int       `json:"nodes"`
	CPUNodes []int       `json:"cpu_nodes"` // the matrix's rows; equal to Nodes unless a node lacks CPUs or memory
	MatrixNS [][]float64 `json:"matrix_ns"`
	LocalNS  float64     `json:"local_ns"`
	RemoteNS float64     `json:"remote_ns,omitempty"`
	// NoNUMAEffect is the matrix's flag (Matrix.NoNUMAEffect): remote
	// reads were no slower than local, so RemoteNS/LocalNS is not the cost
	// of remote memory and must not be used as a latency ratio.
	NoNUMAEffect bool `json:"no_numa_effect,omitempty"`
	// Levels are the labelled plateaus of the TLB-local ladder (2 MiB pages
	// when measured, else 4 KiB).
	Levels []Level `json:"levels,omitempty"`
	// Cut is set on the summary of a probe that stopped before its end
	// (its deadline, Ctrl-C): it holds what was measured, ladders that
	// reached their largest working set and the matrix's cells so far.
	Cut bool `json:"cut,omitempty"`
}

// summarize fills the Summary from the report's parts.
func summarize(rep *Report) Summary {
	s := Summary{GHz: rep.GHz}
	for _, l := range rep.Ladders {
		if l.Cut {
			continue
		}
		last := l.Last()
		s.WorkingSetBytes = last.Bytes
		switch {
		case l.Chain == Random && l.Pages == Pages4K:
			s.DRAMNS4K = last.BestNS
		case l.Chain == Random && l.Pages == Pages2M:
			s.DRAMNS2M = last.BestNS
			s.PageBytes2M, s.HugeFraction2M = l.PageBytes, l.HugeFraction
		case l.Chain == TLBLocal && l.Pages == Pages4K:
			s.TLBLocalDRAMNS4K = last.BestNS
			if s.Levels == nil {
				s.Levels = l.Levels
			}
		case l.Chain == TLBLocal && l.Pages == Pages2M:
			s.TLBLocalDRAMNS2M = last.BestNS
			if len(l.Levels) > 0 {
				s.Levels = l.Levels
			}
		}
	}
	if m := rep.Matrix; m != nil {
		s.Nodes, s.CPUNodes = m.MemNodes, m.CPUNodes
		var loc, rem []float64
		for i, row := range m.NS {
			r := make([]float64, len(row))
			for j, st := range row {
				r[j] = best(st)
				if m.CPUNodes[i] == m.MemNodes[j] {
					loc = append(loc, r[j])
				} else {
					rem = append(rem, r[j])
				}
			}
			s.MatrixNS = append(s.MatrixNS, r)
		}
		s.LocalNS, s.RemoteNS = mean(loc), mean(rem)
		s.NoNUMAEffect = m.NoNUMAEffect
	}
	return s
}

// DRAM is the DRAM latency, defined once for every command that shows or
// uses it (the model's local latency, the report's "DRAM latency"): the
// NUMA matrix's local latency (LocalNS), else the fully random chain's
// DRAM latency with 4 KiB pages, else with 2 MiB pages; each is a lowest
// clean window. what says which, in words; 0 and "" when none was
// measured.
func (s Summary) DRAM() (ns float64, what string) {
	switch {
	case s.LocalNS > 0:
		return s.LocalNS, "the NUMA matrix's local latency"
	case s.DRAMNS4K > 0:
		return s.DRAMNS4K, "the fully random chain's DRAM latency with 4 KiB pages"
	case s.DRAMNS2M > 0:
		return s.DRAMNS2M, "the fully random chain's DRAM latency with 2 MiB pages"
	}
	return 0, ""
}

// Headline is the probe's one-line figure for run listings: the DRAM
// latency (DRAM) with what it is, then the fully random chain's readings
// that differ from it, labelled with the pages each mapping asked for and
// what a 2 MiB one obtained when it was not all huge, and the clock.
func (s Summary) Headline() string {
	var parts, variants []string
	ns, what := s.DRAM()
	if ns > 0 {
		parts = append(parts, fmt.Sprintf("DRAM latency %.0f ns (%s)", ns, what))
	}
	if s.DRAMNS4K > 0 && s.DRAMNS4K != ns {
		variants = append(variants, fmt.Sprintf("%.0f ns (4k pages)", s.DRAMNS4K))
	}
	if s.DRAMNS2M > 0 && s.DRAMNS2M != ns {
		pages := "2m pages"
		if s.PageBytes2M != hugeBytes {
			pages = "2m pages asked, " + PageLabel(s.PageBytes2M, s.HugeFraction2M) + " obtained"
		}
		variants = append(variants, fmt.Sprintf("%.0f ns (%s)", s.DRAMNS2M, pages))
	}
	if len(variants) > 0 {
		parts = append(parts, "random chain "+strings.Join(variants, ", "))
	}
	if s.WorkingSetBytes > 0 {
		parts = append(parts, "at "+units.Bytes(s.WorkingSetBytes).String())
	}
	if s.GHz > 0 {
		parts = append(parts, fmt.Sprintf("%.2f GHz", s.GHz))
	}
	if s.Cut {
		parts = append(parts, "the probe cut short")
	}
	return strings.Join(parts, "; ")
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
