package tpch

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/result"
)

// The HTML's paced table is the text's columns, fewer: due and
// completed, late and never started, and the percentiles share a cell,
// each value the one the text prints.
func TestPacedHTMLRow(t *testing.T) {
	c := PacedCell{Cell: 3, Query: "P2", Streams: 2, DOP: 1, Done: 19, Achieved: 19.5, P50US: 1500,
		P95US: 2500, P99US: 4000,
		Pace: result.Pace{Mode: "rate", Rate: 20, Arrivals: "uniform", Offered: 20, Late: 2, Backlog: 1,
			LateAfter: time.Millisecond, Service: result.TxStats{P99US: 3000}}}
	text := pacedRow(c)
	got := pacedHTMLRow(text)
	if len(text) != len(pacedHead) || len(got) != len(pacedHTMLHead) || len(pacedHTMLHead) >= len(pacedHead) {
		t.Fatalf("%d text columns (%d headed), %d HTML columns (%d headed): want fewer in HTML",
			len(text), len(pacedHead), len(got), len(pacedHTMLHead))
	}
	want := []string{"3", "P2", "2", "1", "20/s (uniform)", "20 / 19", "19.50", "2 / 1", "1.50 / 2.50 / 4.00", "3.00", "0"}
	if !slices.Equal(got, want) {
		t.Errorf("HTML row %q, want %q", got, want)
	}
	for _, v := range text {
		if !strings.Contains(strings.Join(got, " | "), v) {
			t.Errorf("the HTML row %q lacks the text's %q", got, v)
		}
	}
}
