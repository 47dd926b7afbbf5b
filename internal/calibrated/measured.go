package calibrated

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sentinel"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/units"
)

// RunFit is the kind of run that stores a MeasuredFit: cells of one
// workload measured at two or more latencies, each bracketed by the speed
// sentinel (eval's page-size points).
const RunFit = "model-fit"

// KindMeasuredFit is a RunFit run's result.
const KindMeasuredFit result.Kind[MeasuredFit] = "model.MeasuredFit"

// FitMemory is one kind of memory the cells ran their data in, with the
// latency a fully random chain measured in memory mapped alike; or, Hot,
// the caches: the data of transactions run again at once with the same
// inputs, timed by a chain that fits in the level-2 cache.
type FitMemory struct {
	Name string `json:"name"` // "4 KiB pages"
	Hot  bool   `json:"hot,omitempty"`
	// DataHuge is the share of the data's mapping the kernel backed with
	// 2 MiB pages; ChainHuge the share of the chain's.
	DataHuge  float64 `json:"data_huge"`
	ChainHuge float64 `json:"chain_huge"`
	// ChainBytes is the chain's working set: as large as the data.
	ChainBytes int64 `json:"chain_bytes"`
	// LatencyNS is the median of SamplesNS, the chain's latency per load
	// measured next to the cells (each sample a median of clean windows).
	LatencyNS float64   `json:"latency_ns"`
	SamplesNS []float64 `json:"samples_ns"`
}

// CellCounters are hardware counts over one cell's stream thread.
type CellCounters struct {
	Instructions uint64 `json:"instructions"`
	LLCMisses    uint64 `json:"llc_misses"`
	Cycles       uint64 `json:"cycles,omitempty"` // 0: not counted
}

// FitCell is one cell of a measured fit: one stream on one core.
type FitCell struct {
	Label  string `json:"label"`  // "pair 2, 4 KiB pages"
	Memory int    `json:"memory"` // index into MeasuredFit.Memory
	// ChainNS is its memory's chain timed right after it, which Compute
	// takes as its latency; 0 when none was (its memory's median then).
	ChainNS float64 `json:"chain_ns,omitempty"`
	model.Point
	Txns    int64   `json:"txns"`
	Seconds float64 `json:"seconds"`
	// Before and After are the sentinel samples that bracket the cell.
	Before int `json:"sentinel_before"`
	After  int `json:"sentinel_after"`
	// Off is set when either sample's core reference read more than the
	// tolerance off the series' median: the cell is left out of the fit
	// and the held-out check. Repeat marks a cell run again for an off
	// one.
	Off      bool          `json:"off"`
	Repeat   bool          `json:"repeat,omitempty"`
	Counters *CellCounters `json:"counters,omitempty"`
	// NoCounters says why a cell whose counters opened has no counts (a
	// read of them failed); the cell is kept, uncounted.
	NoCounters string `json:"no_counters,omitempty"`
}

// MeasuredFit is A and M fitted to cells at two or more latencies, with
// everything needed to judge it: the cells, the memory and latency of
// each, the speed sentinel's series around them, the held-out check and,
// where readable, hardware counters. Calibrate uses its Fit whenever a
// RunFit run is among its runs: the report, its findings and eval's
// summary then rest on this one fit.
type MeasuredFit struct {
	// Engine and Workload are what the cells ran: "sqlite", "tpcc-ro".
	// A fit stored before they were ("" in both) is SQLite's tpcc-ro, the
	// only one measured then (FitEngine).
	Engine   string           `json:"engine,omitempty"`
	Workload string           `json:"workload,omitempty"`
	What     string           `json:"what"`   // the workload and where it ran, in words
	Method   string           `json:"method"` // how the points were made, in words
	GHz      float64          `json:"ghz"`
	Memory   []FitMemory      `json:"memory"`
	Cells    []FitCell        `json:"cells"`
	Sentinel sentinel.Series  `json:"sentinel"`
	Verdict  sentinel.Verdict `json:"verdict"`
	Fit      *model.Fit       `json:"fit,omitempty"`
	FitError string           `json:"fit_error,omitempty"`
	// HeldOut predicts, from the fit to the first half of each memory's
	// kept cells, the cold rates of the second half's from their own hot
	// rates (Compute).
	HeldOut      []HeldOut `json:"held_out,omitempty"`
	HeldOutError string    `json:"held_out_error,omitempty"`
	// Counters says why there are no hardware counts ("" when the cells
	// have them).
	CountersReason string `json:"counters_reason,omitempty"`
}

// Flag marks every cell whose bracketing sentinel samples read the core
// reference off the series' median by more than tol, and stores the
// verdict. The memory reference's readings do not leave a cell out: a
// cell's latency is its own chain timed next to it (ChainNS), so a phase
// of the memory's speed is in its point, and hot runs read the caches.
func (f *MeasuredFit) Flag(tol float64) {
	f.Verdict = f.Sentinel.Check(tol)
	coreOff := func(k int) bool { return k < len(f.Verdict.Deviation) && math.Abs(f.Verdict.Deviation[k]) > tol }
	for i := range f.Cells {
		c := &f.Cells[i]
		c.Off = coreOff(c.Before) || coreOff(c.After)
	}
}

// kept are the cells the sentinel did not flag, in the order measured.
func (f *MeasuredFit) kept() []FitCell {
	var out []FitCell
	for _, c := range f.Cells {
		if !c.Off {
			out = append(out, c)
		}
	}
	return out
}

// Compute sets every cell's latency to its own chain's, else its
// memory's, fits A and M to the kept cells, and checks the fit to the
// first half of each memory's kept cells on the second half: each later
// cold cell's rate is predicted from its own hot runs' rate and the two
// latencies, C = A + M·L·f at each (the cold and hot runs alternate every
// transaction, so the machine's speed at the time cancels), and the
// median prediction is set against the median measured.
func (f *MeasuredFit) Compute() {
	for i := range f.Cells {
		c := &f.Cells[i]
		c.LatencyNS = f.Memory[c.Memory].LatencyNS
		if c.ChainNS > 0 {
			c.LatencyNS = c.ChainNS
		}
	}
	kept := f.kept()
	var pts []model.Point
	var lats []float64
	for _, c := range kept {
		pts, lats = append(pts, c.Point), append(lats, c.LatencyNS)
	}
	f.Fit, f.FitError = nil, latencyError(lats)
	if fit, err := model.FitPoints(pts); f.FitError == "" && err != nil {
		f.FitError = err.Error()
	} else if f.FitError == "" {
		f.Fit = &fit
	}
	f.HeldOut, f.HeldOutError = nil, ""
	if f.Fit == nil {
		f.HeldOutError = "the kept cells do not fit, so there is no fit to check"
		return
	}
	// The first half of each memory's kept cells, the caches' included,
	// is fitted; each later cold cell is predicted from its own hot runs.
	var first []model.Point
	later := map[int][]FitCell{}
	for mem := range f.Memory {
		var of []FitCell
		for _, c := range kept {
			if c.Memory == mem {
				of = append(of, c)
			}
		}
		if len(of) < 2 {
			f.HeldOutError = fmt.Sprintf("fewer than two kept cells in %s", f.Memory[mem].Name)
			return
		}
		h := len(of) / 2
		for _, c := range of[:h] {
			first = append(first, c.Point)
		}
		later[mem] = of[h:]
	}
	fit, err := model.FitPoints(first)
	if err != nil {
		f.HeldOutError = "the first half does not fit: " + err.Error()
		return
	}
	for mem, m := range f.Memory {
		if m.Hot {
			continue
		}
		var pred, meas, ns []float64
		for _, c := range later[mem] {
			hot, ok := f.hotOf(c)
			if !ok {
				continue
			}
			pred = append(pred, hot.TPSPerCore*fit.Cycles(hot.LatencyNS, f.GHz)/fit.Cycles(c.LatencyNS, f.GHz))
			meas, ns = append(meas, c.TPSPerCore), append(ns, c.LatencyNS)
		}
		if len(pred) == 0 {
			f.HeldOutError = fmt.Sprintf("no later cell in %s kept with its hot runs", m.Name)
			return
		}
		p, mt := stats.Median(pred), stats.Median(meas)
		f.HeldOut = append(f.HeldOut, HeldOut{
			What: "the cold runs of the second half of the kept cells in " + m.Name +
				", each from its own hot runs, by the fit to the first half",
			Latency:   "a random chain timed right after each cell; the hot runs at the chain in the caches",
			LatencyNS: stats.Median(ns),
			Workload:  fit.Workload, PredictedTPS: p, MeasuredTPS: mt, Cells: len(pred), Error: (p - mt) / mt,
		})
	}
}

// hotOf is the kept hot cell that ran with cold cell c: the one in the
// caches between the same sentinel samples.
func (f *MeasuredFit) hotOf(c FitCell) (FitCell, bool) {
	for _, h := range f.Cells {
		if f.Memory[h.Memory].Hot && h.Before == c.Before && !h.Off {
			return h, true
		}
	}
	return FitCell{}, false
}

// Points are the kept cells as points, with each cell's label.
func (f *MeasuredFit) Points() (pts []model.Point, cells []string) {
	for _, c := range f.kept() {
		pts = append(pts, c.Point)
		cells = append(cells, c.Label)
	}
	return pts, cells
}

// HeldOutMedian is the median of the held-out errors; false without any.
func (f *MeasuredFit) HeldOutMedian() (float64, bool) {
	var e []float64
	for _, h := range f.HeldOut {
		e = append(e, h.Error)
	}
	if len(e) == 0 {
		return 0, false
	}
	return stats.Median(e), true
}

// Counted are the per-transaction figures the counters give, over the
// kept cold cells that have them (hot runs repeat the same transactions
// from the caches, which is not how the workload runs): instructions and
// last-level misses per transaction, cycles per transaction (counted, else
// the clock over the rate), IPC, and the stall share M·L·f/C at each
// cell's latency (medians over cells). ok is false without counts.
type Counted struct {
	Cells            int
	InstructionsPerT float64
	MissesPerT       float64
	CyclesPerT       float64
	CyclesCounted    bool
	IPC              float64
	StallShare       float64 // 0 without a fit
}

// Counted derives the per-transaction figures from the cells' counters.
func (f *MeasuredFit) Counted() (Counted, bool) {
	var ins, miss, cyc, ipc, stall []float64
	counted := true
	for _, c := range f.kept() {
		if c.Counters == nil || c.Txns == 0 || f.Memory[c.Memory].Hot {
			continue
		}
		n := float64(c.Txns)
		i := float64(c.Counters.Instructions) / n
		cy := c.GHz * 1e9 / c.TPSPerCore
		if c.Counters.Cycles > 0 {
			cy = float64(c.Counters.Cycles) / n
		} else {
			counted = false
		}
		ins, miss, cyc, ipc = append(ins, i), append(miss, float64(c.Counters.LLCMisses)/n),
			append(cyc, cy), append(ipc, i/cy)
		if f.Fit != nil {
			stall = append(stall, f.Fit.M*model.LatencyCycles(c.LatencyNS, c.GHz)/cy)
		}
	}
	if len(ins) == 0 {
		return Counted{}, false
	}
	out := Counted{Cells: len(ins), InstructionsPerT: stats.Median(ins), MissesPerT: stats.Median(miss),
		CyclesPerT: stats.Median(cyc), CyclesCounted: counted, IPC: stats.Median(ipc)}
	if len(stall) > 0 {
		out.StallShare = stats.Median(stall)
	}
	return out, true
}

// CounterLine is the hardware counters' figures in one line, or why there
// are none, naming the kept cells whose counters could not be read.
func (f *MeasuredFit) CounterLine() string {
	c, ok := f.Counted()
	unread, readWhy := f.unread()
	if !ok {
		why := f.CountersReason
		switch {
		case why != "":
		case len(unread) > 0:
			why = "every kept cell's counters opened but a read failed: " + readWhy
		default:
			why = "no kept cell was counted"
		}
		return "hardware counters: not readable here: " + why
	}
	cyc := "cycles counted"
	if !c.CyclesCounted {
		cyc = "cycles from the clock and the rate"
	}
	s := fmt.Sprintf("hardware counters (medians over %d kept cold cells): %s instructions and %s last-level "+
		"misses per transaction, %s cycles per transaction (%s), IPC %.2f",
		c.Cells, model.Thousands(c.InstructionsPerT), model.Thousands(c.MissesPerT),
		model.Thousands(c.CyclesPerT), cyc, c.IPC)
	if f.Fit != nil {
		s += fmt.Sprintf(", stall share M·L·f/C %s", model.Percent(c.StallShare))
	}
	if len(unread) > 0 {
		s += fmt.Sprintf("; %d kept cell(s) not counted, a read of their counters failed (%s: %s)",
			len(unread), strings.Join(unread, ", "), readWhy)
	}
	return s
}

// unread are the labels of the kept cells whose counters opened but could
// not be read, and the first cell's reason.
func (f *MeasuredFit) unread() (cells []string, why string) {
	for _, c := range f.kept() {
		if c.NoCounters == "" {
			continue
		}
		if why == "" {
			why = c.NoCounters
		}
		cells = append(cells, c.Label)
	}
	return cells, why
}

// Lines are the measured fit in words: the memory and latencies, the
// cells (left-out ones marked), the fit with its intervals, why there is
// no held-out check if there is none, the counters and the sentinel's
// verdict. The held-out checks themselves are the calibration's Checks,
// printed next to these wherever the fit is shown.
func (f *MeasuredFit) Lines() []string {
	var mem []string
	for _, m := range f.Memory {
		if m.Hot {
			mem = append(mem, fmt.Sprintf("%s for the hot runs (a random chain of %s reads %.1f ns, median of %d timings)",
				m.Name, units.Bytes(m.ChainBytes), m.LatencyNS, len(m.SamplesNS)))
			continue
		}
		mem = append(mem, fmt.Sprintf("%s for the cold runs (data %.0f%% in 2 MiB pages; a random chain of %s in "+
			"memory mapped alike, %.0f%% huge, reads %.1f ns, median of %d timings)",
			m.Name, 100*m.DataHuge, units.Bytes(m.ChainBytes), 100*m.ChainHuge, m.LatencyNS, len(m.SamplesNS)))
	}
	out := []string{f.What + ": " + strings.Join(mem, "; ")}
	var cells []string
	off := 0
	for _, c := range f.Cells {
		mark := ""
		if c.Off {
			off++
			mark = " (left out: the sentinel was off next to it)"
		}
		if c.Repeat {
			mark += " (repeat)"
		}
		at := ""
		if c.ChainNS > 0 {
			at = fmt.Sprintf(" at %.1f ns", c.ChainNS)
		}
		cells = append(cells, fmt.Sprintf("%s %.0f%s%s", c.Label, c.TPSPerCore, at, mark))
	}
	out = append(out, fmt.Sprintf("  tps per cell: %s; %d of %d cells kept (left out: a core reading of "+
		"the sentinel off next to it; the memory's speed is in each cold cell's latency, its chain timed right after it)",
		strings.Join(cells, ", "), len(f.Cells)-off, len(f.Cells)))
	if fit := f.Fit; fit != nil {
		out = append(out, fmt.Sprintf("  fit: A = %s core cycles%s, M = %s memory waits%s, R² %.3f over %d cells",
			model.Thousands(fit.A), fit.AInterval.Parenthesised(), model.Thousands(fit.M), fit.MInterval.Parenthesised(),
			fit.R2, fit.Points))
	} else {
		out = append(out, "  no fit: "+f.FitError)
	}
	if f.HeldOutError != "" {
		out = append(out, "  no held-out check: "+f.HeldOutError)
	}
	out = append(out, "  "+f.CounterLine())
	return append(out, "  "+f.Verdict.String(&f.Sentinel))
}

// OffCells are the labels of the cells the sentinel flagged.
func (f *MeasuredFit) OffCells() []string {
	var out []string
	for _, c := range f.Cells {
		if c.Off {
			out = append(out, c.Label)
		}
	}
	return slices.Clip(out)
}

// Headline is the fit in one line for run listings.
func (f *MeasuredFit) Headline() string {
	if f.Fit == nil {
		return fmt.Sprintf("%d cells, no fit: %s", len(f.Cells), f.FitError)
	}
	s := fmt.Sprintf("A = %s core cycles%s, M = %s memory waits%s over %d of %d cells",
		model.Thousands(f.Fit.A), f.Fit.AInterval.Parenthesised(), model.Thousands(f.Fit.M),
		f.Fit.MInterval.Parenthesised(), f.Fit.Points, len(f.Cells))
	if e, ok := f.HeldOutMedian(); ok {
		s += fmt.Sprintf("; held-out median error %+.1f%%", 100*e)
	}
	return s
}

// FitEngine is the engine f's cells ran on.
func (f *MeasuredFit) FitEngine() string { return cmp.Or(f.Engine, LegacyEngine) }

// FitWorkload is the workload f's cells ran.
func (f *MeasuredFit) FitWorkload() string { return cmp.Or(f.Workload, LegacyWorkload) }

// MinSpread is how far apart, as a fraction of the lower, the kept cells'
// lowest and highest latencies must be for a fit: closer, the slope M is
// the noise of the rates, not their dependence on latency.
const MinSpread = 0.15

// latencyError says why latencies lats cannot fit A and M ("" when they
// can): fewer than two, one outside the range model accepts as a memory
// latency (an emulator's or a stalled host's timing, which model would
// refuse as a flag), or the highest less than MinSpread above the lowest.
func latencyError(lats []float64) string {
	if len(lats) == 0 {
		return "no kept cell to fit"
	}
	if v, why := model.Implausible(lats, nil, nil); why != "" {
		return fmt.Sprintf("a kept cell's chain read %s ns, which is not %s: the host, or an emulator, timed what "+
			"no memory does, so A and M are not fitted (the published stall share is assumed instead)", v, why)
	}
	lo, hi := lats[0], lats[0]
	for _, l := range lats {
		lo, hi = min(lo, l), max(hi, l)
	}
	if hi < lo*(1+MinSpread) {
		return fmt.Sprintf("the kept cells' latencies span %.1f to %.1f ns, %.0f%% apart: a fit needs two at least "+
			"%.0f%% apart, so M is not fitted (the published stall share is assumed instead)",
			lo, hi, 100*(hi/lo-1), 100*MinSpread)
	}
	return ""
}
