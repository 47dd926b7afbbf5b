package estimate

import (
	"slices"
	"strings"
	"testing"
)

func TestFlags(t *testing.T) {
	for _, c := range []struct {
		r    Row
		want []string
	}{
		{Row{Estimated: 2, Measured: 1.9}, nil},
		{Row{Estimated: 2, Measured: 5, Departs: true}, []string{"measured over 2x the estimate"}},
		{Row{Estimated: 4, Measured: 1, Departs: true, PlanChanged: true},
			[]string{"measured under half the estimate", "plan changed"}},
	} {
		if got := c.r.Flags(); !slices.Equal(got, c.want) {
			t.Errorf("%+v: Flags() = %q; want %q", c.r, got, c.want)
		}
	}
}

// The table has a streams column only when a row has streams (run report's
// cells, not tpch's power test), and is left out when there are no rows.
func TestWriteTable(t *testing.T) {
	var b strings.Builder
	WriteTable(&b, nil)
	if b.Len() != 0 {
		t.Errorf("no rows: wrote %q; want nothing", b.String())
	}
	rows := []Row{{Query: "Q1", DOP: 2, BaseCost: 1000, Cost: 500, Estimated: 2, Measured: 1.5}}
	WriteTable(&b, rows)
	if s := b.String(); strings.Contains(s, "streams") || !strings.Contains(s, "Q1       2") {
		t.Errorf("power-test rows: wrote\n%s\nwant no streams column and Q1 at DOP 2", s)
	}
	b.Reset()
	rows[0].Streams = 4
	WriteTable(&b, rows)
	if s := b.String(); !strings.Contains(s, "query streams") || !strings.Contains(s, "Q1          4    2") {
		t.Errorf("rows with streams: wrote\n%s\nwant a streams column", s)
	}
}
