package sqlscript

import (
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/sentinel"
)

// TestSpeed judges cells by the readings injected after them: one slow
// reading marks the cell before it and the cell after it; steady readings
// mark none; fewer than three say nothing.
func TestSpeed(t *testing.T) {
	cells := func(ms ...int) []*Cell {
		var out []*Cell
		for i, m := range ms {
			c := &Cell{}
			c.Cell.Index = i
			c.Sentinel = &sentinel.Sample{Label: "after", Took: time.Duration(m) * time.Millisecond}
			out = append(out, c)
		}
		return out
	}
	if got := Speed(cells(10, 10, 20, 10, 10)); !strings.Contains(got, "1 of 5 samples off") ||
		!strings.Contains(got, "cells 2, 3 ran next to an off reading") {
		t.Errorf("one slow reading after cell 2: %q", got)
	}
	if got := Speed(cells(10, 11, 10, 9)); !strings.Contains(got, "the machine held its speed") ||
		strings.Contains(got, "cells") {
		t.Errorf("steady readings: %q", got)
	}
	if got := Speed(cells(10, 30)); got != "" {
		t.Errorf("two readings: %q, want nothing", got)
	}
}
