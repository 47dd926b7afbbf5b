package memlat

// Summary is what other commands (numalab model --from-run) read from a
// probe: stored as item kind "memlat.Summary".
type Summary struct {
	GHz             float64 `json:"ghz"`               // median measured core clock
	WorkingSetBytes int64   `json:"working_set_bytes"` // where the DRAM numbers were measured
	// DRAM latency of a fully random chain (every access may miss the
	// TLB) and of a TLB-local one, with 4 KiB and 2 MiB pages: the largest
	// point's BestNS, its lowest clean window; 0 when not measured.
	DRAMNS4K         float64 `json:"dram_ns_4k,omitempty"`
	DRAMNS2M         float64 `json:"dram_ns_2m,omitempty"`
	TLBLocalDRAMNS4K float64 `json:"tlb_local_dram_ns_4k,omitempty"`
	TLBLocalDRAMNS2M float64 `json:"tlb_local_dram_ns_2m,omitempty"`
	PageBytes2M      int64   `json:"page_bytes_2m,omitempty"` // page size obtained when 2m was asked
	// Nodes and MatrixNS: the NUMA matrix (rows: the thread's node in
	// CPUNodes order, columns: the memory's node in Nodes order), each
	// cell's lowest clean window in ns; LocalNS is the mean of its diagonal, RemoteNS of
	// the rest (0 on one node).
	Nodes    []int       `json:"nodes"`
	CPUNodes []int       `json:"cpu_nodes"` // the matrix's rows; equal to Nodes unless a node lacks CPUs or memory
	MatrixNS [][]float64 `json:"matrix_ns"`
	LocalNS  float64     `json:"local_ns"`
	RemoteNS float64     `json:"remote_ns,omitempty"`
	// Levels are the labelled plateaus of the TLB-local ladder (2 MiB pages
	// when measured, else 4 KiB).
	Levels []Level `json:"levels,omitempty"`
}

// summarize fills the Summary from the report's parts.
func summarize(rep *Report) Summary {
	s := Summary{GHz: rep.GHz}
	for _, l := range rep.Ladders {
		last := l.Last()
		s.WorkingSetBytes = last.Bytes
		switch {
		case l.Chain == Random && l.Pages == Pages4K:
			s.DRAMNS4K = last.BestNS
		case l.Chain == Random && l.Pages == Pages2M:
			s.DRAMNS2M = last.BestNS
			s.PageBytes2M = l.PageBytes
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
	}
	return s
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
