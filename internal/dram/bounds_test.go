package dram

import (
	"strings"
	"testing"
)

// TestBounds: a rate or timings no DDR generation has are refused, naming
// the flag, the value and the bound with its reason; any generation's pass.
func TestBounds(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string // "": no error
	}{
		{"rate 2666", CheckRate("mts", 2666), ""},
		{"rate 1e300", CheckRate("mts", 1e300),
			`-mts: "1e+300" is not a DDR transfer rate: want 200 to 8800 MT/s, DDR-200 (the slowest DDR) to DDR5-8800`},
		{"rate 100", CheckRate("mts", 100), `-mts: "100" is not a DDR transfer rate`},
		{"timings 19 at 2666", CheckTimings("timings", "19-19-19", Timings{19, 19, 19}, 2666), ""},
		{"timings 3 at 400", CheckTimings("timings", "3-3-3", Timings{3, 3, 3}, 400), ""},
		{"timings 40 at 4800", CheckTimings("timings", "40-39-39", Timings{40, 39, 39}, 4800), ""},
		{"CL 999", CheckTimings("timings", "999-19-19", Timings{999, 19, 19}, 2666),
			`-timings: "999-19-19" gives CL 999 clocks, 749.44 ns at 2666 MT/s: want 5 to 30 ns`},
		{"tRP 1", CheckTimings("timings", "19-19-1", Timings{19, 19, 1}, 2666),
			`-timings: "19-19-1" gives tRP 1 clocks, 0.75 ns`},
	} {
		got := ""
		if c.err != nil {
			got = c.err.Error()
		}
		if (c.want == "") != (got == "") || !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
