package tpch

import (
	"reflect"
	"slices"
	"testing"

	"github.com/numalab/numalab/internal/dop"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/runconfig"
)

// TestConclude: the rule of thumb comes from the machine (8 cores on 2
// sockets: 4 a socket) and the threshold; DuckDB gets no storage advice;
// no cells print as an empty list, not null.
func TestConclude(t *testing.T) {
	s := NewSweep(RunConfig{Common: runconfig.Common{Engine: "duckdb"}}, "", -1)
	machine := &result.Topology{Cores: make([]result.Core, 8), Packages: make([]result.Package, 2)}
	a, b := power(1, 1, 4, "Seq Scan", 5000), power(1, 2, 2, "Seq Scan", 5000)
	out := s.Conclude([]*Cell{&a, &b}, machine, dop.Threshold{Cost: 1000}, nil)
	want := Analyze([]Cell{a, b}, &RuleSpec{Threshold: dop.Threshold{Cost: 1000}, CoresPerSocket: 4, Sockets: 2})
	if !reflect.DeepEqual(out.Analysis, want) || out.Analysis.Queries[0].Rule == nil {
		t.Errorf("analysis %+v\nwant %+v, with a rule's DOP", out.Analysis, want)
	}
	if len(out.Cells) != 2 || out.Storage != nil {
		t.Errorf("cells %d, storage %q; want 2 and none", len(out.Cells), out.Storage)
	}
	if none := s.Conclude(nil, machine, dop.Threshold{Cost: 1000}, nil); none.Cells == nil {
		t.Error("no cells: Cells is nil, want an empty list")
	}
}

func TestParseQueries(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
	}{
		{"1-3", []int{1, 2, 3}}, {"1, 6,14", []int{1, 6, 14}}, {"22", []int{22}}, {"2-2,5", []int{2, 5}},
		{"0", nil}, {"23", nil}, {"3-1", nil}, {"1-23", nil}, {"x", nil}, {"x-3", nil}, {"1-x", nil}, {"", nil}, {"-3", nil},
	} {
		got, err := ParseQueries(c.in)
		if !slices.Equal(got, c.want) || (err != nil) != (c.want == nil) {
			t.Errorf("ParseQueries(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}
