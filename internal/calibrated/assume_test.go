package calibrated

import (
	"strings"
	"testing"
)

// TestCheckInstructions: A must lie between the instruction count over
// the core's width and the measured cycles per transaction. With the
// guest's figures, 571,000 instructions on a 4-wide core need at least
// 142,750 cycles.
func TestCheckInstructions(t *testing.T) {
	for _, c := range []struct {
		a, measured float64
		ok          bool
		want        string
	}{
		{200_000, 450_000, true, "at least 142,750 (4-wide core) holds, at most the measured C = 450,000 holds; IPC at that C 1.27"},
		{100_000, 450_000, false, "at least 142,750 (4-wide core) fails"},
		{500_000, 450_000, false, "at most the measured C = 450,000 fails"},
	} {
		got, ok := CheckInstructions(c.a, c.measured, 571_000, 4)
		if ok != c.ok || !strings.Contains(got, c.want) {
			t.Errorf("A = %v, C = %v: %q, %v; want %v and %q", c.a, c.measured, got, ok, c.ok, c.want)
		}
	}
}
