package calib

import (
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/model"
)

// TestFitAndPredict: predictions only with a machine, read only once the
// fit succeeded.
func TestFitAndPredict(t *testing.T) {
	pts := []model.Point{{LatencyNS: 67, TPSPerCore: 27.27, GHz: 3}, {LatencyNS: 96, TPSPerCore: 19.54, GHz: 3}}
	g := model.Grid{GHz: []float64{3}, SMT: []int{1}, Sockets: []int{1, 2}}
	out, err := FitAndPredict(pts, nil, g, "1,2")
	if err != nil || out.Predictions != nil || !(out.Fit.Workload.Instructions > 0) {
		t.Errorf("no machine: %+v, %v", out, err)
	}
	read := 0
	machine := func() (MachineSpec, error) { read++; return MachineSpec{LocalNS: 67, RemoteNS: 125, Locality: -1}, nil }
	out, err = FitAndPredict(pts, machine, g, "1,2")
	if err != nil || out.Predictions == nil || len(out.Predictions.Rows) != 2 ||
		out.Predictions.Workload != out.Fit.Workload {
		t.Errorf("on a machine: %+v, %v", out.Predictions, err)
	}
	if _, err := FitAndPredict(pts[:1], machine, g, "1,2"); err == nil ||
		!strings.HasPrefix(err.Error(), "fitting --points: ") || read != 1 {
		t.Errorf("one point: %v, machine read %d times; want a fit error, the machine read once (before)", err, read)
	}
}
