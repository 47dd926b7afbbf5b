package result

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestKindRoundTrip stores entries as the store does and reads them back by
// kind: each kind sees its own items, in order, and no other.
func TestKindRoundTrip(t *testing.T) {
	entries := []Entry{
		KindCell.Of(Cell{Index: 0, TPS: 10}),
		KindPlanFinding.Of(PlanFinding{Query: "P1"}),
		KindCell.Of(Cell{Index: 1, TPS: 20}),
	}
	r := &Run{ID: 4}
	for i, e := range entries {
		b, err := json.Marshal(e.Body())
		if err != nil {
			t.Fatal(err)
		}
		r.Results = append(r.Results, Item{Seq: i + 1, Kind: e.Kind(), Body: b})
	}
	cells, err := KindCell.All(r)
	if err != nil || len(cells) != 2 || cells[0].TPS != 10 || cells[1].TPS != 20 {
		t.Errorf("KindCell.All = %+v, %v; want the two cells in order", cells, err)
	}
	last, err := KindCell.Last(r)
	if err != nil || last == nil || last.Index != 1 {
		t.Errorf("KindCell.Last = %+v, %v; want cell 1", last, err)
	}
	if p, err := KindIOProbe.Last(r); p != nil || err != nil {
		t.Errorf("KindIOProbe.Last of a run without one = %+v, %v; want nil, nil", p, err)
	}
	if again := r.Results[1].Entry(); again.Kind() != string(KindPlanFinding) {
		t.Errorf("Item.Entry kind %q, want %q", again.Kind(), KindPlanFinding)
	}
	r.Results[2].Body = json.RawMessage(`{"tps": "fast"}`)
	if _, err := KindCell.All(r); err == nil || !strings.Contains(err.Error(), "reading item 3 (drive.Cell) of run 4") {
		t.Errorf("a body that is not its kind's type: %v", err)
	}
}

func TestMachineRun(t *testing.T) {
	m := &Topology{Source: "x"}
	oltp := &Run{ID: 2, Kind: RunOLTP, Machine: m}
	io := &Run{ID: 3, Kind: RunProbeIO, Machine: m}
	probe := &Run{ID: 5, Kind: RunProbeMem, Machine: m}
	bare := &Run{ID: 1, Kind: RunQueries}
	for _, c := range []struct {
		runs []*Run
		want *Run
	}{
		{[]*Run{io, oltp, probe, bare}, probe},
		{[]*Run{io, oltp, bare}, oltp},
		{[]*Run{bare, {ID: 6, Kind: RunProbeMem}}, nil},
	} {
		if got := MachineRun(c.runs); got != c.want {
			t.Errorf("MachineRun(%v) = %v, want %v", c.runs, got, c.want)
		}
	}
}
