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
// dependent-load chain over a buffer larger than the last-level cache, in
// 2 MiB pages where the kernel gives them (asked for with madvise; each
// sample records the share it got, read from smaps), so that its loads
// time memory and not page walks, whose cost in 4 KiB pages moved with
// whatever ran before a sample; its pages made resident first (read, and
// checked with mincore(2)) so that it times memory, not page faults; and
// the lowest of several short windows kept, so that a preemption does not
// make a sample. A Series keeps every sample with its label; Check
// compares each reference with its median and flags the samples where
// either is more than a stated tolerance off it. That Verdict is the one
// judgement of the series: whatever says a sample, a step or a cell was
// off reads it. It does not tell a slower machine from a slower chain
// (a sample whose chain lost its huge pages reads slower, and says so).
package sentinel

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/memlat"
)

// Steps is the reference workload's size: 1,000,000 dependent steps (4
// times as many took a median 113 ms on the 2-vCPU guest under load).
const Steps = 1_000_000

// words is the reference's buffer: 64 KiB, resident in any L2.
const words = 8192

// Run times the reference workload once on the calling goroutine, locked
// to its OS thread for the duration, and says what share of that time
// the thread ran (its CPU time over the wall time; 0 where the thread's
// CPU time cannot be read). The sum it returns keeps the compiler from
// removing the work.
func Run() (time.Duration, float64, uint64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := make([]uint64, words)
	for i := range buf {
		buf[i] = uint64(i)*0x9e3779b97f4a7c15 + 1
	}
	cpu0, start := threadCPU(), time.Now()
	x, j := uint64(0x2545f4914f6cdd1d), uint64(0)
	for range Steps {
		x ^= buf[j]
		x *= 0xff51afd7ed558ccd
		x ^= x >> 33
		buf[j] = x
		j = x & (words - 1)
	}
	took, cpu := time.Since(start), threadCPU()-cpu0
	share := 0.0
	if cpu0 > 0 && took > 0 {
		share = min(float64(cpu)/float64(took), 1)
	}
	return took, share, x
}

// threadCPU is the calling thread's CPU time, 0 where it cannot be read.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// MemLoads is one window of the memory reference: 1,024 dependent loads
// (0.1 to 0.3 ms at 100 to 300 ns a load), shorter than a scheduler's
// time slice, so that most windows run whole.
const MemLoads = 1_024

// MemWindows is how many windows a sample of the memory reference times;
// it keeps the lowest, as memlat's probes keep their lowest clean window:
// a window a neighbour preempted reads slow, a memory the machine slowed
// reads slow in every window.
const MemWindows = 16

// Memory is the memory reference: a fully random dependent-load chain
// (memlat's) over a buffer larger than the last-level cache, in 2 MiB
// pages where the kernel gives them.
type Memory struct{ chase *memlat.DRAMChase }

// MemoryBytes is the memory reference's buffer on a machine whose largest
// cache holds llc bytes: four times it, and at least 64 MiB.
func MemoryBytes(llc int64) int64 { return max(4*llc, 64<<20) }

// NewMemory maps and links the memory reference's chain over bytes, in
// 2 MiB pages (transparent huge pages asked for with madvise): in 4 KiB
// pages every load of the chain misses the TLB, and its page walks, which
// the steps between samples evict from the caches, moved its readings
// more than memory did (the experiment in docs/model.md).
// A kernel built without transparent huge pages refuses the advice; the
// reference is then in 4 KiB pages, and every sample says so.
func NewMemory(bytes int64) (*Memory, error) {
	m, err := newMemory(bytes, memlat.Pages2M)
	if err != nil {
		m, err = newMemory(bytes, memlat.Pages4K)
	}
	return m, err
}

// newMemory is the memory reference in pages (memlat.Pages4K or Pages2M).
func newMemory(bytes int64, pages string) (*Memory, error) {
	c, err := memlat.NewChase(bytes, pages)
	if err != nil {
		return nil, fmt.Errorf("mapping the speed sentinel's memory reference (%d MiB): %w", bytes>>20, err)
	}
	return &Memory{c}, nil
}

// MemReading is one timing of the memory reference.
type MemReading struct {
	Took time.Duration // the lowest window's
	// PagedIn are the pages found out of memory before it and read back
	// in; NotResident says why its pages were not all in memory when it
	// was timed ("" when they were).
	PagedIn     int
	NotResident string
	// Huge is the share of the chain in 2 MiB pages when it was timed
	// (smaps; the share it was mapped with when smaps could not be read).
	Huge float64
}

// Run makes the chain's pages resident and reads what share of them is
// huge, then times MemWindows windows of MemLoads loads on the calling
// goroutine, locked to its OS thread for the duration, each going on where
// the last stopped (so that the loads miss the caches), and keeps the
// lowest.
func (m *Memory) Run() MemReading {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var r MemReading
	in, out, err := m.chase.Warm()
	switch {
	case err != nil:
		r.NotResident = err.Error()
	case out > 0:
		r.NotResident = fmt.Sprintf("%d still out of memory after three reads", out)
	}
	r.PagedIn = in - out
	if r.Huge, err = m.chase.Huge("/"); err != nil {
		r.Huge = m.chase.HugeFraction
	}
	for range MemWindows {
		d := m.chase.Walk(MemLoads)
		if r.Took == 0 || d < r.Took {
			r.Took = d
		}
	}
	return r
}

// Free unmaps the chain.
func (m *Memory) Free() { m.chase.Free() }

// Sample is one timing of the references, with what it was taken next
// to: the core reference's, and the memory reference's where the series
// has one.
type Sample struct {
	Label string        `json:"label"`
	Took  time.Duration `json:"took_ns"`
	// Share is the share of its CPU the core reference's thread got in
	// the run Took is (its CPU time over the wall time): well under 1,
	// other work on that CPU took the rest; near 1 with Took slow, the
	// CPU itself ran slower (a clock, or a host that took the vCPU). 0
	// where it could not be read, and in samples stored before it was.
	Share float64       `json:"cpu_share,omitempty"`
	Mem   time.Duration `json:"mem_ns,omitempty"`
	// MemPagedIn and MemNotResident are the memory reference's
	// MemReading.PagedIn and NotResident.
	MemPagedIn     int    `json:"mem_paged_in,omitempty"`
	MemNotResident string `json:"mem_not_resident,omitempty"`
	// MemHuge is the memory reference's MemReading.Huge: 0 in samples
	// stored before the reference asked for 2 MiB pages.
	MemHuge float64 `json:"mem_huge,omitempty"`
}

// Series is the samples of one run, in order.
type Series struct {
	Samples []Sample `json:"samples"`
	sink    uint64
	mem     *Memory
}

// UseMemory makes Take time the memory reference m beside the core one.
func (s *Series) UseMemory(m *Memory) { s.mem = m }

// Take times the core reference (the median of three runs, so that one
// preemption does not make a sample) and then the memory reference where
// the series has one, and keeps them under label.
func (s *Series) Take(label string) Sample {
	type run struct {
		took  time.Duration
		share float64
	}
	var rs []run
	for range 3 {
		d, share, x := Run()
		s.sink ^= x
		rs = append(rs, run{d, share})
	}
	slices.SortFunc(rs, func(a, b run) int { return int(a.took - b.took) })
	sm := Sample{Label: label, Took: rs[1].took, Share: rs[1].share}
	if s.mem != nil {
		r := s.mem.Run()
		sm.Mem, sm.MemPagedIn, sm.MemNotResident, sm.MemHuge = r.Took, r.PagedIn, r.NotResident, r.Huge
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

// Verdict is how a series compares with its medians: computed once by
// Check and kept with the series, it is what every text about the series
// reads.
type Verdict struct {
	Median    time.Duration `json:"median_ns"`
	Tolerance float64       `json:"tolerance"` // a fraction of the median
	// Off are the samples where either reference read more than Tolerance
	// off its median, or the memory reference's pages were not all in
	// memory (indices into the series).
	Off       []int     `json:"off,omitempty"`
	Deviation []float64 `json:"deviation"` // per sample, (took − median) / median
	// MemMedian and MemDeviation are the memory reference's, when every
	// sample timed it.
	MemMedian    time.Duration `json:"mem_median_ns,omitempty"`
	MemDeviation []float64     `json:"mem_deviation,omitempty"`
	// MemPages is the memory reference's page size over the samples, as
	// MemReference says it ("in 2 MiB pages"; "" in verdicts stored
	// before it was kept).
	MemPages string `json:"mem_pages,omitempty"`
}

// Check compares every sample with the series' medians: a sample where
// either reference ran slower or faster than its median by more than tol
// (a fraction), or whose memory reference was timed over pages not all in
// memory, is off.
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
		v.MemPages = pages(s.Samples)
	}
	for i, sm := range s.Samples {
		d := float64(sm.Took-v.Median) / float64(v.Median)
		v.Deviation = append(v.Deviation, d)
		off := d > tol || d < -tol
		if mem {
			md := float64(sm.Mem-v.MemMedian) / float64(v.MemMedian)
			v.MemDeviation = append(v.MemDeviation, md)
			off = off || md > tol || md < -tol || sm.MemNotResident != ""
		}
		if off {
			v.Off = append(v.Off, i)
		}
	}
	return v
}

// pages says in what pages the samples' memory reference was: "in 4 KiB
// pages", "in 2 MiB pages" (at least 99.9% of the chain in every sample),
// or the share of it in 2 MiB pages, the lowest and highest of the
// samples' when they differ.
func pages(ss []Sample) string {
	lo, hi := 1.0, 0.0
	for _, sm := range ss {
		lo, hi = min(lo, sm.MemHuge), max(hi, sm.MemHuge)
	}
	switch {
	case hi == 0:
		return "in 4 KiB pages"
	case lo >= 0.999:
		return "in 2 MiB pages"
	case percent(lo) == percent(hi):
		return percent(hi) + " in 2 MiB pages"
	}
	return percent(lo) + " to " + percent(hi) + " in 2 MiB pages"
}

// percent is a share in whole percent.
func percent(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) }

// MemReference describes the memory reference behind the verdict: how it
// is timed and, where the verdict knows, in what pages.
func (v Verdict) MemReference() string {
	p := ""
	if v.MemPages != "" {
		p = ", " + v.MemPages
	}
	return fmt.Sprintf(
		"the lowest of %d windows of %d dependent loads beyond the last-level cache%s, its pages in memory",
		MemWindows, MemLoads, p)
}

// Between says whether anything between samples i and j (both included)
// was off: a cell or step timed between them ran while the machine was
// not at its usual speed. It is the one test of a cell against the
// sentinel.
func (v Verdict) Between(i, j int) bool {
	for _, k := range v.Off {
		if k >= i && k <= j {
			return true
		}
	}
	return false
}

// Line is the verdict in one sentence: the medians, the tolerance and how
// many samples were off.
func (v Verdict) Line() string {
	n := len(v.Deviation)
	if n == 0 {
		return "speed sentinel: no samples"
	}
	head := fmt.Sprintf("speed sentinel: %d samples, median %.1f ms, tolerance ±%.0f%%: ",
		n, float64(v.Median)/1e6, 100*v.Tolerance)
	if len(v.MemDeviation) > 0 {
		head = fmt.Sprintf(
			"speed sentinel: %d samples, median %.1f ms (core) and %.0f ns a load (memory: %s), tolerance ±%.0f%%: ",
			n, float64(v.Median)/1e6, PerLoad(v.MemMedian), v.MemReference(), 100*v.Tolerance)
	}
	if len(v.Off) == 0 {
		return head + "the machine held its speed"
	}
	return head + fmt.Sprintf(
		"%d of %d samples off: what ran next to them ran while the machine was not at its usual speed", len(v.Off), n)
}

// busyShare is the share of its CPU under which a sample's core reference
// is said to have shared its CPU with other work.
const busyShare = 0.9

// PerLoad is a memory reference's timing in ns a load.
func PerLoad(d time.Duration) float64 { return float64(d) / MemLoads }

// String is the verdict's Line with the series.
func (v Verdict) String(s *Series) string {
	if len(s.Samples) == 0 {
		return v.Line()
	}
	// Where the samples' chains were not all in the same pages, each says
	// its share in 2 MiB pages.
	mixed := len(v.MemDeviation) > 0 &&
		slices.ContainsFunc(s.Samples, func(sm Sample) bool { return percent(sm.MemHuge) != percent(s.Samples[0].MemHuge) })
	var parts []string
	for i, sm := range s.Samples {
		mark := ""
		switch {
		case !slices.Contains(v.Off, i):
		case sm.MemNotResident != "" && len(v.MemDeviation) > 0:
			mark = " (off: the memory reference's pages: " + sm.MemNotResident + ")"
		case sm.Share > 0 && sm.Share < busyShare:
			mark = fmt.Sprintf(" (off: the core reference got %s of its CPU, other work the rest)", percent(sm.Share))
		default:
			mark = " (off)"
		}
		mem := ""
		if len(v.MemDeviation) > 0 {
			mem = fmt.Sprintf(", memory %.0f ns %+.0f%%", PerLoad(sm.Mem), 100*v.MemDeviation[i])
		}
		if mixed {
			mem += " (" + percent(sm.MemHuge) + " in 2 MiB pages)"
		}
		if sm.MemPagedIn > 0 {
			mem += fmt.Sprintf(" (%d pages read back in first)", sm.MemPagedIn)
		}
		parts = append(parts,
			fmt.Sprintf("%s %.1f ms %+.0f%%%s%s", sm.Label, float64(sm.Took)/1e6, 100*v.Deviation[i], mem, mark))
	}
	return v.Line() + " (" + strings.Join(parts, "; ") + ")"
}
