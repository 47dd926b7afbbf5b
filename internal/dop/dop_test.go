package dop

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/model"
)

func TestDOP(t *testing.T) {
	one := Rule{Threshold: 5, CoresPerSocket: 8}
	span := Rule{Threshold: 5, CoresPerSocket: 8, SpanThreshold: 1000, Sockets: 2}
	tests := []struct {
		r     Rule
		cost  float64
		dop   int
		spans bool
	}{
		{one, 4.99, 1, false}, // below T = 5: serial
		{one, 5, 2, false},    // at T: 2
		{one, 19.99, 2, false},
		{one, 20, 4, false},    // 4T: 4
		{one, 80, 8, false},    // 16T: 8
		{one, 320, 8, false},   // 64T: 16, capped at 8 cores of one socket
		{one, 1e9, 8, false},   // still one socket: no span threshold
		{span, 320, 8, false},  // 16 > 8 cores but below the span threshold 1000: rather 8
		{span, 1280, 16, true}, // 256T: 32 → above 1000: spans, capped at 2·8 = 16
		{span, 80, 8, false},   // fits one socket: no need to span
		{Rule{Threshold: 5, CoresPerSocket: 8, SpanThreshold: 300, Sockets: 4}, 320, 16, true}, // 64T: 16 over 2 of 4 sockets
		{Rule{Threshold: 5, CoresPerSocket: 1}, 500, 1, false},                                 // one core: never parallel
	}
	for _, tt := range tests {
		if err := tt.r.Validate(); err != nil {
			t.Fatal(err)
		}
		a := tt.r.DOP(tt.cost)
		if a.DOP != tt.dop || a.Spans != tt.spans {
			t.Errorf("%+v DOP(%v) = %+v, want %d spans=%v", tt.r, tt.cost, a, tt.dop, tt.spans)
		}
	}
	for _, bad := range []Rule{
		{Threshold: 0, CoresPerSocket: 8},
		{Threshold: 5, CoresPerSocket: 0},
		{Threshold: 5, CoresPerSocket: 8, SpanThreshold: 4, Sockets: 2},
		{Threshold: 5, CoresPerSocket: 8, SpanThreshold: 50, Sockets: 1},
		{Threshold: 5, CoresPerSocket: 8, SpanThreshold: -1, Sockets: 2},
	} {
		if err := bad.Validate(); !errors.Is(err, model.ErrInput) {
			t.Errorf("Validate(%+v) = %v, want ErrInput", bad, err)
		}
		if _, err := bad.Ladder(nil); !errors.Is(err, model.ErrInput) {
			t.Errorf("Ladder of %+v: %v, want ErrInput", bad, err)
		}
	}
}

// TestDOPThresholdInSeconds turns Chang's proposal into a rule: half a
// second at his measured 57.135 cost units per second (Σ cost 200,839.65
// over Σ 3,515.15 s, TPC-H SF 100) is cost 28.57, which he rounds to 30;
// his ladder "DOP 2 at 30, 4 at 120, 8 at 480" is the rule's at 28.57,
// 114.3 and 457.1.
func TestDOPThresholdInSeconds(t *testing.T) {
	th, err := ParseThreshold("0.5s")
	if err != nil || th != (Threshold{Seconds: 0.5}) || th.String() != "500ms" {
		t.Fatalf("ParseThreshold(0.5s) = %+v (%s), %v", th, th, err)
	}
	r, err := th.Rule(3515.15/200839.65, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !near(r.Threshold, 0.5*200839.65/3515.15) || r.ThresholdSeconds != 0.5 {
		t.Errorf("threshold %v (%v s), want %v", r.Threshold, r.ThresholdSeconds, 0.5*200839.65/3515.15)
	}
	for _, c := range []struct {
		published float64
		dop       int
	}{{30, 2}, {120, 4}, {480, 8}} {
		// The published costs are rounded up: 5% above each rung.
		if a := r.DOP(c.published); a.DOP != c.dop {
			t.Errorf("cost %v: DOP %d, want %d", c.published, a.DOP, c.dop)
		}
		if a := r.DOP(c.published * 0.9); a.DOP != c.dop/2 && c.dop > 2 {
			t.Errorf("cost %v: DOP %d, want %d below the rung", c.published*0.9, a.DOP, c.dop/2)
		}
	}
	var b strings.Builder
	l, _ := r.Ladder([]float64{30})
	if err := Write(&b, l); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Threshold 0.5 s at 0.0175 s per cost unit (57.14 units/s): cost 28.57",
		"cost  seconds  cost/T", "30    0.5251   1.05    2"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
	if c, err := ParseThreshold("1000"); err != nil || c != (Threshold{Cost: 1000}) || c.String() != "1000" {
		t.Errorf("ParseThreshold(1000) = %+v, %v", c, err)
	}
	if r, err := (Threshold{Cost: 1000}).Rule(0, 4, 1); err != nil || r.Threshold != 1000 || r.SecondsPerUnit != 0 {
		t.Errorf("a cost needs no fit: %+v, %v", r, err)
	}
	if _, err := th.Rule(0, 4, 1); !errors.Is(err, model.ErrInput) {
		t.Errorf("a time without seconds per unit: %v, want ErrInput", err)
	}
	for _, bad := range []string{"", "0", "-3", "0s", "-1s", "fast", "1x"} {
		if _, err := ParseThreshold(bad); !errors.Is(err, model.ErrInput) {
			t.Errorf("ParseThreshold(%q) = %v, want ErrInput", bad, err)
		}
	}
}

// near reports whether got is within a relative 1e-9 of want.
func near(got, want float64) bool {
	if want == 0 {
		return math.Abs(got) < 1e-12
	}
	return math.Abs(got-want) <= 1e-9*math.Abs(want)
}
