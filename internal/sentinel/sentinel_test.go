package sentinel

import (
	"strings"
	"testing"
	"time"
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
	if txt := v.String(s); !strings.Contains(txt, "1 sample(s) off") || !strings.Contains(txt, "d 16.0 ms +60% (off)") {
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
// though its core reference held, and the verdict's text shows both; a
// series without the memory reference in every sample is judged by the
// core one alone.
func TestCheckMemoryDrift(t *testing.T) {
	s := &Series{}
	for i, ms := range []int{5, 5, 5, 8, 5, 4} {
		s.Samples = append(s.Samples, Sample{Label: string(rune('a' + i)), Took: 10 * time.Millisecond, Mem: time.Duration(ms) * time.Millisecond})
	}
	v := s.Check(0.15)
	if v.MemMedian != 5*time.Millisecond || len(v.Off) != 2 || v.Off[0] != 3 || v.Off[1] != 5 {
		t.Fatalf("verdict %+v, want memory median 5 ms and samples 3 (+60%%) and 5 (-20%%) off", v)
	}
	if txt := v.String(s); !strings.Contains(txt, "d 10.0 ms +0%, memory 8.0 ms +60% (off)") || !strings.Contains(txt, "5.0 ms (memory") {
		t.Errorf("text %q", txt)
	}
	s.Samples[0].Mem = 0
	if v := s.Check(0.15); len(v.Off) != 0 || v.MemDeviation != nil {
		t.Errorf("a sample without the memory reference: verdict %+v, want the core reference alone, none off", v)
	}
}

// TestMemoryReference: a series given the memory reference times it in
// every sample beside the core one. What a sample costs is logged, not
// asserted (this machine is shared).
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
		t.Logf("sample %s: core %v, memory %v (%.0f ns a load); the sample took %v", l, sm.Took, sm.Mem, float64(sm.Mem)/MemLoads, time.Since(start))
		if sm.Took <= 0 || sm.Mem <= 0 {
			t.Errorf("sample %s: core %v, memory %v: want both timed", l, sm.Took, sm.Mem)
		}
	}
	if v := s.Check(0.15); len(v.MemDeviation) != 2 || v.MemMedian <= 0 {
		t.Errorf("verdict %+v: want the memory reference judged in both samples", v)
	}
	if MemoryBytes(32<<20) != 128<<20 || MemoryBytes(1<<20) != 64<<20 {
		t.Errorf("memory reference of %d and %d bytes, want 4 × 32 MiB and at least 64 MiB", MemoryBytes(32<<20), MemoryBytes(1<<20))
	}
}
