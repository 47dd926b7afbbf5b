package drive

import (
	"testing"
	"time"
)

const (
	ms = time.Millisecond
	s  = time.Second
)

func TestPhaseAt(t *testing.T) {
	tests := []struct {
		e, warmup, dur time.Duration
		want           phase
	}{
		{0, 5 * s, 30 * s, warmingUp},
		{5*s - 1, 5 * s, 30 * s, warmingUp},
		{5 * s, 5 * s, 30 * s, measuring}, // the window opens at warm-up's end
		{35*s - 1, 5 * s, 30 * s, measuring},
		{35 * s, 5 * s, 30 * s, finished}, // and is half-open
		{time.Hour, 5 * s, 30 * s, finished},
		{0, 0, 30 * s, measuring}, // no warm-up
		{-ms, 0, 30 * s, warmingUp},
	}
	for _, tt := range tests {
		if got := phaseAt(tt.e, tt.warmup, tt.dur); got != tt.want {
			t.Errorf("phaseAt(%v, warm-up %v, duration %v) = %v, want %v", tt.e, tt.warmup, tt.dur, got, tt.want)
		}
	}
}

func TestSlotCount(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want int
	}{
		{30 * s, 30}, {30*s + 1, 31}, {500 * ms, 1}, {1, 1}, {0, 1}, {s, 1}, {2*s - 1, 2},
	}
	for _, tt := range tests {
		if got := slotCount(tt.d); got != tt.want {
			t.Errorf("slotCount(%v) = %d, want %d", tt.d, got, tt.want)
		}
	}
}

func TestSecondOf(t *testing.T) {
	tests := []struct {
		e, warmup time.Duration
		n, want   int
	}{
		{5 * s, 5 * s, 30, 0},
		{6*s - 1, 5 * s, 30, 0},
		{6 * s, 5 * s, 30, 1},
		{35*s - 1, 5 * s, 30, 29},
		{35 * s, 5 * s, 30, 29}, // kept within the slots
		{4 * s, 5 * s, 30, 0},   // never negative
		{2500 * ms, 0, 3, 2},
	}
	for _, tt := range tests {
		if got := secondOf(tt.e, tt.warmup, tt.n); got != tt.want {
			t.Errorf("secondOf(%v, warm-up %v, %d slots) = %d, want %d", tt.e, tt.warmup, tt.n, got, tt.want)
		}
	}
}

func TestMeasuredAt(t *testing.T) {
	tests := []struct {
		cut, warmup, dur, want time.Duration
	}{
		{35 * s, 5 * s, 30 * s, 30 * s}, // ran to the end
		{40 * s, 5 * s, 30 * s, 30 * s}, // stopped late: still the planned window
		{12 * s, 5 * s, 30 * s, 7 * s},  // Ctrl-C during the window
		{3 * s, 5 * s, 30 * s, 0},       // Ctrl-C during warm-up
		{0, 0, 30 * s, 0},
	}
	for _, tt := range tests {
		if got := measuredAt(tt.cut, tt.warmup, tt.dur); got != tt.want {
			t.Errorf("measuredAt(cut %v, warm-up %v, duration %v) = %v, want %v", tt.cut, tt.warmup, tt.dur, got, tt.want)
		}
	}
}
