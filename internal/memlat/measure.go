package memlat

import (
	"context"
	"runtime"
	"slices"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Stat is one measured quantity: the median of clean samples and their
// spread. A sample is clean when its thread was not preempted while it ran
// (no involuntary context switch): on a shared machine a preempted window
// reads slower than the memory is. When too few samples were clean, all are
// used and Noisy is set.
type Stat struct {
	Median  float64 `json:"median"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	Samples int     `json:"samples"` // samples behind Median
	Dropped int     `json:"dropped"` // preempted samples left out
	Noisy   bool    `json:"noisy,omitempty"`
	Window  float64 `json:"window_ms"` // length of one sample, ms
}

// summarise makes a Stat from clean and preempted samples.
func summarise(clean, preempted []float64, want int, windowMS float64) Stat {
	s := Stat{Dropped: len(preempted), Window: windowMS}
	use := clean
	if len(clean) < (want+1)/2 {
		use = append(slices.Clone(clean), preempted...)
		s.Noisy = true
		s.Dropped = 0
	}
	if len(use) == 0 {
		return s
	}
	v := slices.Clone(use)
	slices.Sort(v)
	s.Samples = len(v)
	s.Min, s.Max = v[0], v[len(v)-1]
	if n := len(v); n%2 == 1 {
		s.Median = v[n/2]
	} else {
		s.Median = (v[n/2-1] + v[n/2]) / 2
	}
	return s
}

// sampling says how long and how often to measure.
type sampling struct {
	Samples   int           // clean samples wanted
	MinWindow time.Duration // at least this long each
	Tries     int           // windows at most, clean or not (0: 2·Samples)
}

// threadTime is the CPU time the calling thread has run: unlike the wall
// clock it stops while the thread is preempted, so a window in which a
// neighbour took the CPU still measures the work it timed.
func threadTime() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// timeWindows runs step(n) repeatedly, each window at least s.MinWindow
// of the thread's CPU time, until s.Samples windows were clean (at most
// s.Tries windows), and returns the Stat of per(n, elapsed)
// over the windows. step must do work proportional to n; n is scaled from
// a short first run, rounded up to a multiple of 16. It runs on the calling
// (locked, pinned) thread. A window's time is the thread's CPU time; a
// preempted window also pays for the caches and TLB the intruder flushed,
// so such windows are set aside when enough clean ones exist.
func timeWindows(ctx context.Context, s sampling, step func(n int),
	per func(n int, d time.Duration) float64) (Stat, error) {
	// Calibrate: grow n until one run takes a millisecond.
	n := 16
	var d time.Duration
	for {
		t0 := threadTime()
		step(n)
		d = threadTime() - t0
		if d >= time.Millisecond || n >= 1<<40 {
			break
		}
		n *= 8
	}
	scale := func(n int, d time.Duration) int {
		m := int(float64(n) * 1.04 * float64(s.MinWindow) / float64(max(d, time.Microsecond)))
		return max((m+15)&^15, 16)
	}
	n = scale(n, d)
	var clean, preempted []float64
	var windows time.Duration
	tries := s.Tries
	if tries < s.Samples {
		tries = 2 * s.Samples
	}
	for try := 0; try < tries && len(clean) < s.Samples; try++ {
		if err := ctx.Err(); err != nil {
			return Stat{}, err
		}
		c0 := involuntarySwitches()
		t0 := threadTime()
		step(n)
		d := threadTime() - t0
		c1 := involuntarySwitches()
		if d < s.MinWindow { // too short to count: the estimate was off
			n = scale(n, d)
			try--
			continue
		}
		windows += d
		v := per(n, d)
		n = scale(n, d) // keep windows just above MinWindow
		if c1 != c0 {
			preempted = append(preempted, v)
		} else {
			clean = append(clean, v)
		}
	}
	k := len(clean) + len(preempted)
	return summarise(clean, preempted, s.Samples, float64(windows)/float64(max(k, 1))/1e6), nil
}

// chaseLatency measures ns per load of k interleaved chases on c.
func chaseLatency(ctx context.Context, c *chain, k int, s sampling) (Stat, error) {
	ps := c.starts
	// Spread the k chases evenly: chase j starts 16/k start points apart.
	var cur [16]unsafe.Pointer
	for j := range k {
		cur[j] = ps[j*16/k]
	}
	// Warm the caches and TLB when a full lap is cheap.
	if c.slots <= 1<<16 {
		chaseK(&cur, k, ((c.slots/k)+15)&^15)
	}
	st, err := timeWindows(ctx, s, func(n int) { chaseK(&cur, k, n) },
		func(n int, d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(n*k) })
	runtime.KeepAlive(cur)
	return st, err
}

// onCPU runs fn on a fresh OS thread pinned to cpu, and waits for it. The
// thread is locked and never unlocked, so it exits with the goroutine and
// its affinity never reaches other goroutines.
func onCPU(cpu int, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := pinThread(cpu); err != nil {
			done <- err
			return
		}
		done <- fn()
	}()
	return <-done
}
