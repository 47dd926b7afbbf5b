// Package sentinel times a fixed reference workload again and again, so
// that a run can tell when the machine under it changed speed: on a shared
// or virtual machine the same cell a minute apart can run at 10,472 and
// then 6,409 tps, and a fit whose points fall in different phases is noise.
//
// The reference is pure core work on a buffer that stays in the L2 cache
// (a multiply-xorshift hash chained through 64 KiB of words, a fixed count
// of steps), so it measures what the core gets, not memory: a slower
// sample says the CPU was taken or throttled. A Series keeps every sample
// with its label; Check compares each with the series' median and flags
// those more than a stated tolerance off it.
package sentinel

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"
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

// Sample is one timing of the reference, with what it was taken next to.
type Sample struct {
	Label string        `json:"label"`
	Took  time.Duration `json:"took_ns"`
}

// Series is the samples of one run, in order.
type Series struct {
	Samples []Sample `json:"samples"`
	sink    uint64
}

// Take times the reference (the median of three runs, so that one
// preemption does not make a sample) and keeps it under label.
func (s *Series) Take(label string) Sample {
	var t []time.Duration
	for range 3 {
		d, x := Run()
		s.sink ^= x
		t = append(t, d)
	}
	slices.Sort(t)
	sm := Sample{Label: label, Took: t[1]}
	s.Samples = append(s.Samples, sm)
	return sm
}

// Verdict is how a series compares with its median.
type Verdict struct {
	Median    time.Duration `json:"median_ns"`
	Tolerance float64       `json:"tolerance"` // a fraction of the median
	// Off are the samples more than Tolerance off the median (indices
	// into the series), with their deviation.
	Off       []int     `json:"off,omitempty"`
	Deviation []float64 `json:"deviation"` // per sample, (took − median) / median
}

// Check compares every sample with the series' median: a sample slower or
// faster than it by more than tol (a fraction) is off.
func (s *Series) Check(tol float64) Verdict {
	v := Verdict{Tolerance: tol}
	if len(s.Samples) == 0 {
		return v
	}
	var t []time.Duration
	for _, sm := range s.Samples {
		t = append(t, sm.Took)
	}
	slices.Sort(t)
	v.Median = t[len(t)/2]
	if len(t)%2 == 0 {
		v.Median = (t[len(t)/2-1] + t[len(t)/2]) / 2
	}
	for i, sm := range s.Samples {
		d := float64(sm.Took-v.Median) / float64(v.Median)
		v.Deviation = append(v.Deviation, d)
		if d > tol || d < -tol {
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
		parts = append(parts, fmt.Sprintf("%s %.1f ms %+.0f%%%s", sm.Label, float64(sm.Took)/1e6, 100*v.Deviation[i], mark))
	}
	head := fmt.Sprintf("speed sentinel: %d samples, median %.1f ms, tolerance ±%.0f%%: ", len(s.Samples), float64(v.Median)/1e6, 100*v.Tolerance)
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
