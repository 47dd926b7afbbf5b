// Package memlat measures what a dependent memory access costs on the
// machine at hand: a pointer-chasing latency ladder from L1 to DRAM (in ns
// and in measured core cycles, with 4 KiB and 2 MiB pages, TLB-local and
// fully random chains), the node-to-node latency matrix, memory-level
// parallelism, sequential-read bandwidth, latency under load and the
// cache-to-cache latency between pinned threads per class of CPU pair.
//
// Chains live in mmap'd memory outside the Go heap and are chased on a
// locked OS thread pinned to one CPU. Each number is the median of short
// timed windows in which the thread was not preempted, with the spread.
//
// Each result says the pages its mapping asked for and the share it got
// huge; a figure labelled 4 KiB comes only from a mapping that asked for 4
// KiB pages. A NUMA matrix whose remote reads are no slower than local is
// flagged (Matrix.NoNUMAEffect, Summary.NoNUMAEffect) as no NUMA effect
// measured, not a latency ratio.
//
// Files by measurement: config.go (the configuration), clock.go (the core
// clock), ladder.go and repeat.go (the latency ladders and their largest
// point again), mlp.go, bandwidth.go (bandwidth and loaded latency),
// matrix.go, c2c.go (cache-to-cache), summary.go, render.go (text);
// probe.go runs them in order.
//
// It refuses to use more memory than MemAvailable less a headroom, always
// unmaps what it mapped, and never prints: progress goes to a callback and
// results to the caller.
package memlat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/units"
)

// Report is everything one probe measured.
type Report struct {
	Config    Config     `json:"config"`
	Clocks    []Clock    `json:"clocks"`
	GHz       float64    `json:"ghz"`
	Ladders   []Ladder   `json:"ladders"`
	MLP       *MLP       `json:"mlp,omitempty"`
	Bandwidth *Bandwidth `json:"bandwidth,omitempty"`
	Matrix    *Matrix    `json:"matrix,omitempty"`
	C2C       *C2C       `json:"c2c,omitempty"`
	Summary   Summary    `json:"summary"`
	Notes     []string   `json:"notes,omitempty"`
	Elapsed   float64    `json:"elapsed_s"`
}

// Headline is the probe's one-line figure for run listings ("" for a nil
// report or before the summary).
func (r *Report) Headline() string {
	if r == nil {
		return ""
	}
	return r.Summary.Headline()
}

// Emit receives each result as soon as it is measured, as an entry of its
// kind (KindLadder, KindMLP, KindBandwidth, KindMatrix, KindClock,
// KindRepeat, KindC2C, KindSummary).
type Emit func(result.Entry) error

// dataCaches returns the data/unified cache size one CPU sees per level.
func dataCaches(t *result.Topology, cpu int) []int64 {
	var out []int64
	for lvl := 1; lvl <= 4; lvl++ {
		for _, c := range t.Caches {
			if c.Level == lvl && c.Type != "Instruction" && slices.Contains(c.CPUs, cpu) {
				out = append(out, c.SizeBytes)
				break
			}
		}
	}
	return out
}

// Probe runs the whole memory probe described by cfg on the machine t.
// cfg must have passed Validate. say gets progress lines; emit gets every
// result as it is measured. What was measured before an error or a
// cancelled ctx is in the returned report.
func Probe(ctx context.Context, cfg Config, t *result.Topology, say func(string), emit Emit) (rep *Report, err error) {
	start := time.Now()
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = "/"
	}
	rep = &Report{Config: cfg}
	defer func() {
		// A probe stopped after its clock (its deadline, Ctrl-C) keeps a
		// summary of what it measured: the clock, the ladders that
		// reached their largest working set, the matrix's cells so far.
		if err != nil && ctx.Err() != nil && rep.GHz > 0 {
			rep.Summary = summarize(rep)
			rep.Summary.Cut = true
			rep.Elapsed = time.Since(start).Seconds()
			err = errors.Join(err, emit(KindSummary.Of(rep.Summary)))
		}
	}()
	cpu0 := t.CPUs[0].ID
	clock := func(when string) (float64, error) {
		say("core clock: " + when)
		c, err := measureClock(ctx, cpu0, when)
		if err != nil {
			return 0, err
		}
		rep.Clocks = append(rep.Clocks, c)
		return c.GHz.Median, emit(KindClock.Of(c))
	}
	ghz, err := clock("start")
	if err != nil {
		return rep, err
	}
	rep.GHz = ghz // the median of every clock at the end
	if cfg.C2CSamples > 0 && len(t.CPUs) > 1 {
		if err := probeC2C(ctx, &cfg, t, ghz, rep, say); err != nil {
			return rep, err
		}
		if err := emit(KindC2C.Of(*rep.C2C)); err != nil {
			return rep, err
		}
	}
	if llc := t.LastLevelCache(); llc > 0 && cfg.MaxBytes/int64(cfg.SlotBytes)*lineBytes < 4*llc {
		rep.Notes = append(rep.Notes,
			fmt.Sprintf("--max %s touches %s of lines, less than 4x the %s last-level cache: the largest point may not be DRAM",
				units.Bytes(cfg.MaxBytes), units.Bytes(cfg.MaxBytes/int64(cfg.SlotBytes)*lineBytes), units.Bytes(llc)))
	}
	keep, random, err := probeLadders(ctx, &cfg, cpu0, dataCaches(t, cpu0), rep, clock, say, emit)
	if err != nil {
		return rep, err
	}
	defer keep.free()

	if err := probeMLP(ctx, &cfg, t, random, keep, rep, say); err != nil {
		return rep, err
	}
	if err := emit(KindMLP.Of(*rep.MLP)); err != nil {
		return rep, err
	}
	if err := probeBandwidth(ctx, &cfg, t, random, rep, say); err != nil {
		return rep, err
	}
	if err := emit(KindBandwidth.Of(*rep.Bandwidth)); err != nil {
		return rep, err
	}
	keep.free()

	// The largest working set again in fresh mappings, half of the
	// repeats now and the rest at the end, so that a busy spell of the
	// neighbours does not decide every one of them.
	round := 2
	repeat := func(n int) error {
		for ; n > 0; n-- {
			if err := repeatLargest(ctx, &cfg, rep, round, say, emit); err != nil {
				return err
			}
			round++
		}
		return nil
	}
	if err := repeat((cfg.Repeats - 1) / 2); err != nil {
		return rep, err
	}
	if err := probeMatrix(ctx, &cfg, t, rep, say); err != nil {
		if m := rep.Matrix; m != nil && m.Cells() > 0 {
			// The cells measured before the stop are kept.
			return rep, errors.Join(err, emit(KindMatrix.Of(*m)))
		}
		return rep, err
	}
	if err := emit(KindMatrix.Of(*rep.Matrix)); err != nil {
		return rep, err
	}
	if err := repeat(cfg.Repeats + 1 - round); err != nil {
		return rep, err
	}
	if _, err := clock("end"); err != nil {
		return rep, err
	}
	var g []float64
	for _, c := range rep.Clocks {
		g = append(g, c.GHz.Median)
	}
	rep.GHz = summarise(g, nil, len(g), 0).Median
	rep.Summary = summarize(rep)
	rep.Elapsed = time.Since(start).Seconds()
	return rep, emit(KindSummary.Of(rep.Summary))
}
