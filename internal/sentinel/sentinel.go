// Package sentinel times a fixed reference workload again and again, so
// that a run can tell when the machine under it changed speed: on a shared
// or virtual machine the same cell a minute apart can run at 10,472 and
// then 6,409 tps, and a fit whose points fall in different phases is noise.
//
// The core reference is pure core work on a buffer that stays in the L2
// cache (a multiply-xorshift hash chained through 64 KiB of words, a fixed
// count of steps), so it measures what the core gets: a slower sample says
// the CPU was taken or throttled. It misses memory interference (a
// neighbour's traffic slows a transaction's cache misses, not its core
// work), so a Series given a Memory times beside it a memory reference: a
// short dependent-load chain over a buffer larger than the last-level
// cache, each walk going on where the last stopped, timed the same way. A
// Series keeps every sample with its label; Check compares each reference
// with its median and flags the samples where either is more than a stated
// tolerance off it.
package sentinel

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/memlat"
)

// Steps is the reference workload's size: 1,000,000 dependent steps (4
// times as many took a median 113 ms on the 2-vCPU guest under load).
const Steps = 1_000_000

// words is the reference's buffer: 64 KiB, resident in any L2.
const words = 8192

// Run times the reference workload once on the calling goroutine, locked
// to its OS thread for the duration. The sum it returns keeps the
// compiler from removing the work.
func Run() (time.Duration, uint64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := make([]uint64, words)
	for i := range buf {
		buf[i] = uint64(i)*0x9e3779b97f4a7c15 + 1
	}
	start := time.Now()
	x, j := uint64(0x2545f4914f6cdd1d), uint64(0)
	for range Steps {
		x ^= buf[j]
		x *= 0xff51afd7ed558ccd
		x ^= x >> 33
		buf[j] = x
		j = x & (words - 1)
	}
	return time.Since(start), x
}

// MemLoads is the memory reference's size: 8,192 dependent loads (2.1 to
// 10.7 ms on the 2-vCPU guest under load, 253 to 1,306 ns a load), so that
// a sample's three timings add less than the core reference's.
const MemLoads = 8_192

// Memory is the memory reference: a fully random dependent-load chain
// (memlat's, in 4 KiB pages) over a buffer larger than the last-level
// cache.
type Memory struct{ chase *memlat.DRAMChase }

// MemoryBytes is the memory reference's buffer on a machine whose largest
// cache holds llc bytes: four times it, and at least 64 MiB.
func MemoryBytes(llc int64) int64 { return max(4*llc, 64<<20) }

// NewMemory maps and links the memory reference's chain over bytes.
func NewMemory(bytes int64) (*Memory, error) {
	c, err := memlat.NewDRAMChase(bytes)
	if err != nil {
		return nil, fmt.Errorf("mapping the speed sentinel's memory reference (%d MiB): %w", bytes>>20, err)
	}
	return &Memory{c}, nil
}

// Run times MemLoads loads of the chain once on the calling goroutine,
// locked to its OS thread for the duration, going on where the last run
// stopped (so that the loads miss the caches).
func (m *Memory) Run() time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return m.chase.Walk(MemLoads)
}

// Free unmaps the chain.
func (m *Memory) Free() { m.chase.Free() }

// Sample is one timing of the references, with what it was taken next
// to: the core reference's, and the memory reference's where the series
// has one.
type Sample struct {
	Label string        `json:"label"`
	Took  time.Duration `json:"took_ns"`
	Mem   time.Duration `json:"mem_ns,omitempty"`
}

// Series is the samples of one run, in order.
type Series struct {
	Samples []Sample `json:"samples"`
	sink    uint64
	mem     *Memory
}

// UseMemory makes Take time the memory reference m beside the core one.
func (s *Series) UseMemory(m *Memory) { s.mem = m }

// Take times the references (each the median of three runs, interleaved,
// so that one preemption does not make a sample) and keeps them under
// label.
func (s *Series) Take(label string) Sample {
	var t, mt []time.Duration
	for range 3 {
		d, x := Run()
		s.sink ^= x
		t = append(t, d)
		if s.mem != nil {
			mt = append(mt, s.mem.Run())
		}
	}
	sm := Sample{Label: label, Took: median(t)}
	if len(mt) > 0 {
		sm.Mem = median(mt)
	}
	s.Samples = append(s.Samples, sm)
	return sm
}

// median of t (sorted in place).
func median(t []time.Duration) time.Duration {
	slices.Sort(t)
	if len(t)%2 == 0 {
		return (t[len(t)/2-1] + t[len(t)/2]) / 2
	}
	return t[len(t)/2]
}

// Verdict is how a series compares with its medians.
type Verdict struct {
	Median    time.Duration `json:"median_ns"`
	Tolerance float64       `json:"tolerance"` // a fraction of the median
	// Off are the samples where either reference read more than Tolerance
	// off its median (indices into the series), with their deviations.
	Off       []int     `json:"off,omitempty"`
	Deviation []float64 `json:"deviation"` // per sample, (took − median) / median
	// MemMedian and MemDeviation are the memory reference's, when every
	// sample timed it.
	MemMedian    time.Duration `json:"mem_median_ns,omitempty"`
	MemDeviation []float64     `json:"mem_deviation,omitempty"`
}

// Check compares every sample with the series' medians: a sample where
// either reference ran slower or faster than its median by more than tol
// (a fraction) is off.
func (s *Series) Check(tol float64) Verdict {
	v := Verdict{Tolerance: tol}
	if len(s.Samples) == 0 {
		return v
	}
	var t, mt []time.Duration
	for _, sm := range s.Samples {
		t = append(t, sm.Took)
		if sm.Mem > 0 {
			mt = append(mt, sm.Mem)
		}
	}
	v.Median = median(t)
	mem := len(mt) == len(t)
	if mem {
		v.MemMedian = median(mt)
	}
	for i, sm := range s.Samples {
		d := float64(sm.Took-v.Median) / float64(v.Median)
		v.Deviation = append(v.Deviation, d)
		off := d > tol || d < -tol
		if mem {
			md := float64(sm.Mem-v.MemMedian) / float64(v.MemMedian)
			v.MemDeviation = append(v.MemDeviation, md)
			off = off || md > tol || md < -tol
		}
		if off {
			v.Off = append(v.Off, i)
		}
	}
	return v
}

// Between says whether anything between samples i and j (both included)
// was off: a cell timed between them ran while the machine was not at its
// usual speed.
func (v Verdict) Between(i, j int) bool {
	for _, k := range v.Off {
		if k >= i && k <= j {
			return true
		}
	}
	return false
}

// String is the verdict in one line, with the series.
func (v Verdict) String(s *Series) string {
	var parts []string
	for i, sm := range s.Samples {
		mark := ""
		if slices.Contains(v.Off, i) {
			mark = " (off)"
		}
		mem := ""
		if len(v.MemDeviation) > 0 {
			mem = fmt.Sprintf(", memory %.1f ms %+.0f%%", float64(sm.Mem)/1e6, 100*v.MemDeviation[i])
		}
		parts = append(parts, fmt.Sprintf("%s %.1f ms %+.0f%%%s%s", sm.Label, float64(sm.Took)/1e6, 100*v.Deviation[i], mem, mark))
	}
	head := fmt.Sprintf("speed sentinel: %d samples, median %.1f ms, tolerance ±%.0f%%: ", len(s.Samples), float64(v.Median)/1e6, 100*v.Tolerance)
	if len(v.MemDeviation) > 0 {
		head = fmt.Sprintf("speed sentinel: %d samples, median %.1f ms (core) and %.1f ms (memory: %d dependent loads beyond the last-level cache), tolerance ±%.0f%%: ",
			len(s.Samples), float64(v.Median)/1e6, float64(v.MemMedian)/1e6, MemLoads, 100*v.Tolerance)
	}
	switch {
	case len(s.Samples) == 0:
		return "speed sentinel: no samples"
	case len(v.Off) == 0:
		head += "the machine held its speed"
	default:
		head += fmt.Sprintf("%d sample(s) off: what ran next to them ran while the machine was not at its usual speed", len(v.Off))
	}
	return head + " (" + strings.Join(parts, "; ") + ")"
}
