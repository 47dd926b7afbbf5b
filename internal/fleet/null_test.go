package fleet

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/workload/null"
)

// TestNullFigures: a null run gives one round-trip figure per cell point,
// its repeats the point's repeats; a cut-short cell is left out.
func TestNullFigures(t *testing.T) {
	cell := func(tps float64, pairing string, repeat int, cut bool) result.Item {
		c := null.Cell{Cell: result.Cell{Engine: "postgres", Streams: 1, TPS: tps, Repeat: repeat, Interrupted: cut},
			Transport: null.Unix, Protocol: null.Prepared, Pairing: null.Pairing{Name: pairing}}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		return result.Item{Kind: string(null.KindCell), Body: b}
	}
	r := &result.Run{Kind: null.RunKind, Host: "db01", Results: []result.Item{
		cell(16000, "same-cpu", 0, false), cell(1500, "other-core", 0, false),
		cell(16400, "same-cpu", 1, false), cell(9, "other-core", 1, true),
	}}
	got := map[string][]float64{}
	err := nullFigures(r, func(f Figure, host string, reps []float64) {
		if host != "db01" || f.Unit != "calls/s" || f.Kind != null.RunKind {
			t.Errorf("figure %+v of host %s", f, host)
		}
		got[f.Name] = reps
	})
	if err != nil {
		t.Fatal(err)
	}
	same := got["null round trips/s (postgres, unix, prepared, same-cpu, 1 stream)"]
	other := got["null round trips/s (postgres, unix, prepared, other-core, 1 stream)"]
	if len(got) != 2 || !slices.Equal(same, []float64{16000, 16400}) || !slices.Equal(other, []float64{1500}) {
		t.Errorf("figures %v: want same-cpu's two repeats and other-core's one (the cut-short cell left out)", got)
	}
}
