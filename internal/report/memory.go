package report

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/numalab/numalab/internal/calibrated"
	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/units"
)

func buildMemory(run *result.Run) (*Memory, error) {
	m := &Memory{Run: run.ID}
	var cfg memlat.Config
	if len(run.Config) > 0 {
		if err := json.Unmarshal(run.Config, &cfg); err != nil {
			return nil, fmt.Errorf("reading the configuration of run %d: %w", run.ID, err)
		}
	}
	m.Samples, m.WindowMS, m.Quick = cfg.Samples, cfg.WindowMS, cfg.Quick
	p, err := calibrated.ReadProbe(run)
	if err != nil {
		return nil, err
	}
	m.Summary, m.GHz = p.Summary, p.GHz
	if m.Ladders, err = memlat.KindLadder.All(run); err != nil {
		return nil, err
	}
	if m.Matrix, err = memlat.KindMatrix.Last(run); err != nil {
		return nil, err
	}
	if m.MLP, err = memlat.KindMLP.Last(run); err != nil {
		return nil, err
	}
	if m.Bandwidth, err = memlat.KindBandwidth.Last(run); err != nil {
		return nil, err
	}
	if m.C2C, err = memlat.KindC2C.Last(run); err != nil {
		return nil, err
	}
	m.DRAM = dramFigure(p, m.Matrix)
	return m, nil
}

// DRAM is the DRAM latency, defined once: the local latency the model uses
// (calibrated.ReadProbe's rule: the NUMA matrix's local cells, else the fully
// random chain with 4 KiB pages, else with 2 MiB pages, each its lowest
// clean window), with its cycles at the run's one clock. Every figure the
// report calls "DRAM latency" is this one; the other chains and pages are
// shown only as labelled variants.
type DRAM struct {
	NS     float64 `json:"ns"`
	GHz    float64 `json:"ghz"`    // the run's one clock, the multiplier of every cycle count
	Cycles float64 `json:"cycles"` // NS × GHz
	Label  string  `json:"label"`  // what was measured: chain, working set, pages, estimator
}

// dramFigure labels ReadProbe's local latency; nil when the probe measured
// none.
func dramFigure(p calibrated.ProbeLatency, mx *memlat.Matrix) *DRAM {
	s := p.Summary
	if s == nil || !(p.LocalNS > 0) {
		return nil
	}
	d := &DRAM{NS: p.LocalNS, GHz: p.GHz, Cycles: p.LocalNS * p.GHz}
	switch {
	case p.LocalNS == s.LocalNS && mx != nil:
		d.Label = fmt.Sprintf(
			"the NUMA matrix's local cells (mean of the diagonal): %s chain over %s, %s pages, lowest clean window",
			mx.Chain, units.Bytes(mx.Bytes), memlat.PageLabel(mx.PageBytes, 1))
	case p.LocalNS == s.DRAMNS4K:
		d.Label = fmt.Sprintf("fully random chain over %s, 4 KiB pages, lowest clean window", units.Bytes(s.WorkingSetBytes))
	default:
		d.Label = fmt.Sprintf("fully random chain over %s, %s pages, lowest clean window",
			units.Bytes(s.WorkingSetBytes), pageWords(s.PageBytes2M))
	}
	return d
}

// dramVariants are the probe's other DRAM readings, each labelled, that
// differ from the defined figure.
func dramVariants(m *Memory) []string {
	s, d := m.Summary, m.DRAM
	if s == nil || d == nil {
		return nil
	}
	var out []string
	for _, v := range []struct {
		ns   float64
		what string
	}{
		{s.DRAMNS4K, "fully random chain, 4 KiB pages"},
		{s.DRAMNS2M, "fully random chain, " + pageWords(s.PageBytes2M) + " pages"},
		{s.TLBLocalDRAMNS4K, "TLB-local chain, 4 KiB pages"},
		{s.TLBLocalDRAMNS2M, "TLB-local chain, " + pageWords(s.PageBytes2M) + " pages"},
	} {
		if v.ns > 0 && v.ns != d.NS {
			out = append(out, fmt.Sprintf("%s %s ns", v.what, FmtF(v.ns, 1)))
		}
	}
	return out
}

// matrixNS is the NUMA matrix as the summary defines it, each cell's
// lowest clean window (the estimator of the DRAM latency), or the cells'
// medians when the probe stored no summary; and which it is.
func matrixNS(m *Memory) ([][]float64, string) {
	if s := m.Summary; s != nil && len(s.MatrixNS) == len(m.Matrix.NS) {
		return s.MatrixNS, "lowest clean window"
	}
	ns := make([][]float64, len(m.Matrix.NS))
	for i, row := range m.Matrix.NS {
		for _, st := range row {
			ns[i] = append(ns[i], st.Median)
		}
	}
	return ns, "median window"
}

// workingSetAt is the working set at which ladder l touched the given
// bytes, interpolated in log-log between its points: plateaus and knees
// are found in bytes touched and drawn on the working-set axis.
func workingSetAt(l memlat.Ladder, touched int64) float64 {
	ps := l.Points
	if len(ps) == 0 {
		return float64(touched)
	}
	if touched <= ps[0].TouchedBytes {
		return float64(ps[0].Bytes) * float64(touched) / float64(max(ps[0].TouchedBytes, 1))
	}
	for i := 1; i < len(ps); i++ {
		a, b := ps[i-1], ps[i]
		if touched <= b.TouchedBytes {
			if b.TouchedBytes == a.TouchedBytes {
				return float64(b.Bytes)
			}
			f := math.Log(float64(touched)/float64(a.TouchedBytes)) / math.Log(float64(b.TouchedBytes)/float64(a.TouchedBytes))
			return math.Exp(math.Log(float64(a.Bytes)) + f*math.Log(float64(b.Bytes)/float64(a.Bytes)))
		}
	}
	last := ps[len(ps)-1]
	return float64(last.Bytes) * float64(touched) / float64(max(last.TouchedBytes, 1))
}
