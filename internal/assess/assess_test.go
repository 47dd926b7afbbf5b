package assess

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/decide"
	"github.com/numalab/numalab/internal/result"
)

// TestRuns: the conclusions are calib's and decide's own, drawn once; a
// report without a memory probe, or with a nil run (which report.Build
// refuses), gets none.
func TestRuns(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "report", "testdata", "kvm-2vcpu-runs.json"))
	var runs []*result.Run
	if err == nil {
		err = json.Unmarshal(b, &runs)
	}
	if err != nil {
		t.Fatal(err)
	}
	in, err := Runs("", runs)
	if err != nil {
		t.Fatal(err)
	}
	c, err := calib.CalibrateFor("", runs...)
	if err != nil {
		t.Fatal(err)
	}
	if in.Model == nil || !reflect.DeepEqual(*in.Model, c.Model) {
		t.Errorf("model %+v, want calib's %+v", in.Model, c.Model)
	}
	own, cat := decide.Choose(c, cpuModel(runs))
	if own == nil || !reflect.DeepEqual(in.Purchase, own.Conclusion()) ||
		!reflect.DeepEqual(in.Catalogue, cat.Conclusion()) {
		t.Errorf("decisions %+v, %+v: want decide's", in.Purchase, in.Catalogue)
	}
	if costs, _ := calib.EngineCosts(runs...); !reflect.DeepEqual(in.Engines, costs) {
		t.Errorf("engine costs %+v, want calib's %+v", in.Engines, costs)
	}
	noProbe := slices.DeleteFunc(slices.Clone(runs), func(r *result.Run) bool { return r.Kind == result.RunProbeMem })
	for _, rs := range [][]*result.Run{noProbe, append(slices.Clone(runs), nil), nil} {
		if in, err := Runs("", rs); err != nil || in.Model != nil || in.Purchase != nil {
			t.Errorf("%d runs: %+v, %v; want no conclusion", len(rs), in, err)
		}
	}
}
