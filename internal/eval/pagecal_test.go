package eval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/model"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

// TestPagePoints loads a one-warehouse tpcc database, and runs the
// page-size step's cells on it: the two images are backed as advised
// (checked in /proc/self/smaps where the kernel gives huge pages at all),
// every cell ran transactions, and the pairs the sentinel kept are what
// the fit saw. It asserts what numalab controls, not the machine's speed.
func TestPagePoints(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a tpcc database (seconds)")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w1.db")
	w, _, err := tpcc.Prepare(ctx, tpcc.Source{Engine: "sqlite", Where: engine.Options{Path: path}, Load: tpcc.LoadConfig{Warehouses: 1, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	w.Engine().Close()
	pp, err := measurePages(ctx, path, 0, 3, 200*time.Millisecond, 300, 200, 3)
	if err != nil {
		t.Fatal(err)
	}
	if pp.HugeShare[0] != 0 {
		t.Errorf("the 4 KiB image is %.0f%% huge pages, want none (MADV_NOHUGEPAGE)", 100*pp.HugeShare[0])
	}
	thp, _ := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if strings.Contains(string(thp), "[never]") || len(thp) == 0 {
		t.Logf("transparent huge pages are off here (%q): the 2 MiB image cannot get any", thp)
	} else if pp.HugeShare[1] < 0.5 {
		t.Errorf("the 2 MiB image is %.0f%% huge pages with THP %q, want most of it (MADV_HUGEPAGE)", 100*pp.HugeShare[1], thp)
	}
	if len(pp.TPS) != 3 || len(pp.Kept) != 3 || len(pp.Sentinel.Samples) != 7 {
		t.Fatalf("pairs %v, kept %v, %d sentinel samples; want 3, 3 and 7", pp.TPS, pp.Kept, len(pp.Sentinel.Samples))
	}
	kept := 0
	for k, p := range pp.TPS {
		if !(p[0] > 0 && p[1] > 0) {
			t.Errorf("pair %d ran no transactions: %v", k+1, p)
		}
		if pp.Kept[k] {
			kept++
		}
	}
	switch {
	case pp.Fit != nil && pp.Fit.Points != 2*kept:
		t.Errorf("fit of %d points, %d pairs kept", pp.Fit.Points, kept)
	case pp.Fit == nil && pp.FitErr == nil:
		t.Error("no fit and no reason")
	}
	if md := pp.calibrate(&model.Calibration{}); pp.Fit != nil && (md.Fit == nil || !strings.Contains(md.Method, "page-size points")) {
		t.Errorf("calibration with the page fit: %+v", md)
	}
	if l := pp.lines(); len(l) < 4 || !strings.Contains(l[0], "latencies 300.0 and 200.0 ns") {
		t.Errorf("summary lines %q", l)
	}
}
