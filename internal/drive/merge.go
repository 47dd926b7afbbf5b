package drive

// A cell's figures, from its streams' measurements once they are over.

import (
	"cmp"
	"slices"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

// merge folds the streams' measurements into cell.
func merge(cell *result.Cell, cfg *Config, states []*streamState) {
	ntypes := len(cfg.Types)
	total := stats.NewHistogram()
	var totalErrs int64
	var firstErr string
	if !cfg.NoSeries {
		cell.PerSecond = make([]int64, slotCount(cfg.Duration))
	}
	for typ := range ntypes {
		h := stats.NewHistogram()
		var errs int64
		var first string
		for _, st := range states {
			if st.hists == nil {
				continue
			}
			h.Merge(st.hists[typ])
			errs += st.errs[typ]
			if first == "" {
				first = st.firstErr[typ]
			}
		}
		total.Merge(h)
		totalErrs += errs
		if firstErr == "" {
			firstErr = first
		}
		cell.Types = append(cell.Types, TxStats(cfg.Types[typ], h, errs, first))
	}
	cell.Total = TxStats("total", total, totalErrs, firstErr)
	if !cfg.Pace.Closed() {
		mergePace(cell, cfg.Pace, states)
	}
	for _, st := range states {
		for i, n := range st.perSec {
			cell.PerSecond[i] += n
		}
		cell.Trace = append(cell.Trace, st.trace...)
		cell.TraceDropped += st.dropped
		if st.stop != nil {
			cell.Stopped = append(cell.Stopped, *st.stop)
		}
	}
	if cell.Interrupted {
		cell.PerSecond = cell.PerSecond[:min(len(cell.PerSecond), slotCount(cell.Measured))]
	}
	slices.SortFunc(cell.Trace, func(a, b result.TraceEvent) int {
		if a.StartNS != b.StartNS {
			return cmp.Compare(a.StartNS, b.StartNS)
		}
		return a.Stream - b.Stream
	})
	if s := cell.Measured.Seconds(); s > 0 {
		cell.TPS = float64(cell.Total.Count) / s
	}
	cell.TPM = cell.TPS * 60
	if cell.Cores > 0 {
		cell.TPSPerCore = cell.TPS / float64(cell.Cores)
	}
	if u := cell.Usage; u != nil && u.Perf.Available && cell.Total.Count > 0 {
		n := float64(cell.Total.Count)
		cell.CyclesPerTx = float64(u.Perf.Cycles) / n
		cell.InstructionsPerTx = float64(u.Perf.Instructions) / n
		cell.LLCMissesPerTx = float64(u.Perf.LLCMisses) / n
	}
}

// TxStats turns a histogram (ns) into a TxStats (µs), with a type's
// failures and first error: a cell's figures of a type.
func TxStats(name string, h *stats.Histogram, errs int64, firstErr string) result.TxStats {
	q := h.Quantiles(0.5, 0.9, 0.95, 0.99, 0.999)
	const us = 1e3
	return result.TxStats{
		Name: name, Count: h.Count(), Errors: errs,
		MeanUS: h.Mean() / us, StdevUS: h.Stdev() / us,
		P50US: q[0] / us, P90US: q[1] / us, P95US: q[2] / us, P99US: q[3] / us, P999US: q[4] / us,
		MaxUS:      float64(h.Max()) / us,
		FirstError: firstErr,
	}
}
