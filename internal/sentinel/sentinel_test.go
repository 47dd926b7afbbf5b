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
