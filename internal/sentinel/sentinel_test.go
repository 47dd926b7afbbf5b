package sentinel

import (
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestRunDoesTheWork: the reference takes time and its result depends on
// every step (two runs agree: it is fixed work).
func TestRunDoesTheWork(t *testing.T) {
	d1, x1 := Run()
	d2, x2 := Run()
	if d1 <= 0 || d2 <= 0 || x1 != x2 || x1 == 0 {
		t.Errorf("runs took %v and %v with results %x and %x: want positive times and one fixed result", d1, d2, x1, x2)
	}
}

// TestCheck flags the samples off the median by more than the tolerance,
// and the cells between them.
func TestCheck(t *testing.T) {
	s := &Series{}
	for i, ms := range []int{10, 11, 10, 16, 9, 10} {
		s.Samples = append(s.Samples, Sample{Label: string(rune('a' + i)), Took: time.Duration(ms) * time.Millisecond})
	}
	v := s.Check(0.15)
	// Median of 9, 10, 10, 10, 11, 16 is 10 ms; 16 is +60%, 9 is −10%.
	if v.Median != 10*time.Millisecond || len(v.Off) != 1 || v.Off[0] != 3 {
		t.Fatalf("verdict %+v, want median 10 ms and only sample 3 off", v)
	}
	if !v.Between(2, 3) || v.Between(4, 5) {
		t.Errorf("between: a cell next to sample 3 must be flagged, one between 4 and 5 not")
	}
	if txt := v.String(s); !strings.Contains(txt, "1 of 6 samples off") || !strings.Contains(txt, "d 16.0 ms +60% (off)") || !strings.HasPrefix(txt, v.Line()+" (") {
		t.Errorf("text %q", txt)
	}
	if got := (&Series{}).Check(0.1).String(&Series{}); got != "speed sentinel: no samples" {
		t.Errorf("empty: %q", got)
	}
	s.Take("real")
	if n := len(s.Samples); n != 7 || s.Samples[6].Took <= 0 {
		t.Errorf("Take kept %d samples, the last %v", n, s.Samples[n-1])
	}
}

// TestCheckMemoryDrift: a sample whose memory reference drifts is off
// though its core reference held, and so is one timed over pages not all
// in memory; the verdict's text shows both references; a series without
// the memory reference in every sample is judged by the core one alone.
func TestCheckMemoryDrift(t *testing.T) {
	s := &Series{}
	for i, ns := range []int{100, 100, 100, 160, 100, 80, 100} {
		s.Samples = append(s.Samples, Sample{Label: string(rune('a' + i)), Took: 10 * time.Millisecond, Mem: time.Duration(ns * MemLoads)})
	}
	s.Samples[6].MemNotResident = "3 still out of memory after three reads"
	s.Samples[4].MemPagedIn = 12
	v := s.Check(0.15)
	if PerLoad(v.MemMedian) != 100 || !slices.Equal(v.Off, []int{3, 5, 6}) {
		t.Fatalf("verdict %+v, want memory median 100 ns a load and samples 3 (+60%%), 5 (-20%%) and 6 (pages out) off", v)
	}
	txt := v.String(s)
	for _, want := range []string{"3 of 7 samples off", "100 ns a load (memory: the lowest of 16 windows of 1024 dependent loads", "d 10.0 ms +0%, memory 160 ns +60% (off)",
		"e 10.0 ms +0%, memory 100 ns +0% (12 pages read back in first);", "g 10.0 ms +0%, memory 100 ns +0% (off: the memory reference's pages: 3 still out of memory after three reads)"} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q:\n%s", want, txt)
		}
	}
	s.Samples[0].Mem = 0
	if v := s.Check(0.15); len(v.Off) != 0 || v.MemDeviation != nil {
		t.Errorf("a sample without the memory reference: verdict %+v, want the core reference alone, none off", v)
	}
}

// TestMemoryReference: a series given the memory reference times it in
// every sample beside the core one, over pages all in memory. What a
// sample costs is logged, not asserted (this machine is shared).
func TestMemoryReference(t *testing.T) {
	m, err := NewMemory(MemoryBytes(32 << 20))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	s := &Series{}
	s.UseMemory(m)
	for _, l := range []string{"one", "two"} {
		start := time.Now()
		sm := s.Take(l)
		t.Logf("sample %s: core %v, memory %.0f ns a load (%d pages read back in); the sample took %v", l, sm.Took, PerLoad(sm.Mem), sm.MemPagedIn, time.Since(start))
		if sm.Took <= 0 || sm.Mem <= 0 || sm.MemNotResident != "" {
			t.Errorf("sample %s: core %v, memory %v, pages %q: want both timed, every page in memory", l, sm.Took, sm.Mem, sm.MemNotResident)
		}
	}
	if v := s.Check(0.15); len(v.MemDeviation) != 2 || v.MemMedian <= 0 {
		t.Errorf("verdict %+v: want the memory reference judged in both samples", v)
	}
	if MemoryBytes(32<<20) != 128<<20 || MemoryBytes(1<<20) != 64<<20 {
		t.Errorf("memory reference of %d and %d bytes, want 4 × 32 MiB and at least 64 MiB", MemoryBytes(32<<20), MemoryBytes(1<<20))
	}
}

// TestHogOnSentinelCPUFlaggedHost: samples taken while busy threads
// share the sentinel's CPU are flagged against quiet samples taken
// between them. The test pins itself and four hogs to one CPU (with a P
// for each, so that all run), so the sentinel gets at most a fifth of it
// on any machine, more than the three-fold swings a shared machine's
// neighbours gave the quiet samples here; it alternates two quiet samples
// with one beside the hogs, so a neighbour that comes and goes meets both
// alike. How many quiet samples are off follows those neighbours, so it
// is logged; what is held is what the sentinel controls: the hogs'
// samples flagged slow, and the memory reference timed over pages all in
// memory in every sample. It asserts no speed.
func TestHogOnSentinelCPUFlaggedHost(t *testing.T) {
	const hogs = 4
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(hogs + 2))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	cpu := 0
	for c := range 1024 {
		if set.IsSet(c) {
			cpu = c
		}
	}
	var one unix.CPUSet
	one.Set(cpu)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		t.Fatal(err)
	}
	defer unix.SchedSetaffinity(0, &set)
	m, err := NewMemory(MemoryBytes(0))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	s := &Series{}
	s.UseMemory(m)
	var hogged []int
	for range 4 {
		s.Take("quiet")
		s.Take("quiet")
		stop := hog(t, &one, hogs)
		hogged = append(hogged, len(s.Samples))
		s.Take("hogs")
		stop()
	}
	s.Take("quiet")
	v := s.Check(0.15)
	t.Log(v.String(s))
	coreOff, memOff := 0, 0
	for i, sm := range s.Samples {
		if sm.MemNotResident != "" {
			t.Errorf("sample %d: the memory reference's pages: %s", i, sm.MemNotResident)
		}
		if slices.Contains(hogged, i) {
			if !slices.Contains(v.Off, i) || v.Deviation[i] <= v.Tolerance {
				t.Errorf("sample %d, taken with %d hogs on CPU %d: core %+.0f%%, not flagged slow", i, hogs, cpu, 100*v.Deviation[i])
			}
			continue
		}
		if math.Abs(v.Deviation[i]) > v.Tolerance {
			coreOff++
		}
		if math.Abs(v.MemDeviation[i]) > v.Tolerance {
			memOff++
		}
	}
	t.Logf("quiet samples off: %d of 9 by the core reference, %d by the memory reference", coreOff, memOff)
}

// hog starts n threads spinning on the CPUs of set; stop ends them (and
// their threads, which keep the affinity).
func hog(t *testing.T, set *unix.CPUSet, n int) (stop func()) {
	quit, pinned := make(chan struct{}), make(chan error)
	var done sync.WaitGroup
	for range n {
		done.Add(1)
		go func() {
			defer done.Done()
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			pinned <- unix.SchedSetaffinity(0, set)
			for {
				select {
				case <-quit:
					return
				default:
				}
			}
		}()
	}
	var errs []error
	for range n {
		errs = append(errs, <-pinned)
	}
	stop = func() { close(quit); done.Wait() }
	if err := errors.Join(errs...); err != nil {
		stop()
		t.Fatalf("pinning the hogs: %v", err)
	}
	return stop
}
