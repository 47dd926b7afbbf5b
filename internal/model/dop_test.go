package model

import (
	"errors"
	"testing"
)

func TestDOP(t *testing.T) {
	one := DOPRule{Threshold: 5, CoresPerSocket: 8}
	span := DOPRule{Threshold: 5, CoresPerSocket: 8, SpanThreshold: 1000, Sockets: 2}
	tests := []struct {
		r     DOPRule
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
		{DOPRule{Threshold: 5, CoresPerSocket: 8, SpanThreshold: 300, Sockets: 4}, 320, 16, true}, // 64T: 16 over 2 of 4 sockets
		{DOPRule{Threshold: 5, CoresPerSocket: 1}, 500, 1, false},                                 // one core: never parallel
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
	for _, bad := range []DOPRule{
		{Threshold: 0, CoresPerSocket: 8},
		{Threshold: 5, CoresPerSocket: 0},
		{Threshold: 5, CoresPerSocket: 8, SpanThreshold: 4, Sockets: 2},
		{Threshold: 5, CoresPerSocket: 8, SpanThreshold: 50, Sockets: 1},
		{Threshold: 5, CoresPerSocket: 8, SpanThreshold: -1, Sockets: 2},
	} {
		if err := bad.Validate(); !errors.Is(err, ErrInput) {
			t.Errorf("Validate(%+v) = %v, want ErrInput", bad, err)
		}
		if _, err := bad.Ladder(nil); !errors.Is(err, ErrInput) {
			t.Errorf("Ladder of %+v: %v, want ErrInput", bad, err)
		}
	}
}
