package vmtest

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
)

// TestWorkersInPlacement runs a DuckDB 'run report --dop 4' cell in the
// two-node guest placed on node 1 and in the SMT guest placed with
// smt=off, and checks that DuckDB's worker threads were sampled, and every
// sample was inside the placement's CPUs. Before numalab placed the
// workers they ran on every CPU of the guest.
func TestWorkersInPlacement(t *testing.T) {
	h := host(t)
	files := guestFiles(t)
	for _, tc := range []struct {
		name, sel string
		m         Machine
	}{
		{"2nodes-node1", "node=1", Machine{Nodes: 2, CPUsPerNode: 2}},
		{"smt-off", "smt=off", Machine{Nodes: 2, CPUsPerNode: 2, ThreadsPerCore: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScript()
			s.raw("mkdir -p /tmp/w && cp /opt/bin/" + transtatsDB + " /tmp/w/")
			s.add("select", "numalab topo --select '"+tc.sel+"' --json")
			s.add("report", fmt.Sprintf("numalab run report --engine duckdb --db /tmp/w/%s --rows 1000000 --streams 1 --dop 4 --query P1 --placement '%s' --duration 3s --warmup 500ms --store /tmp/w/s.db >&2 && numalab runs show --json --store /tmp/w/s.db 1",
				transtatsDB, tc.sel))
			secs := runScript(t, h, tc.m, files, s, 10*time.Minute)
			var p place.Placement
			decode(t, "select", secs["select"], &p)
			var r storedRun
			decode(t, "report", secs["report"], &r)
			t.Logf("run report:\n%s", secs["report"].Err)
			var cells []result.QueryCell
			for _, it := range r.Results {
				var qc result.QueryCell
				if json.Unmarshal(it.Body, &qc) == nil && qc.Cell != nil && qc.Cell.DOP == 4 {
					cells = append(cells, qc)
				}
			}
			if len(cells) != 1 {
				t.Fatalf("%d DOP 4 cells stored, want 1", len(cells))
			}
			w := cells[0].Workers
			if w == nil {
				t.Fatalf("the DOP 4 cell stored no record of where its workers ran")
			}
			t.Logf("%s (CPUs %v): %s, %d workers, %d samples, per CPU %+v, %.1f ms outside; %s", tc.sel, p.CPUs, w.Kind, w.Workers, w.Samples, w.PerCPU, w.OutsideMS, w.How)
			if !slices.Equal(w.Placement, p.CPUs) || w.Oversubscribed != (4 > len(p.CPUs)) {
				t.Errorf("workers placed on %v (oversubscribed %v), want the placement's CPUs %v", w.Placement, w.Oversubscribed, p.CPUs)
			}
			if w.Workers != 3 || w.TotalMS() <= 0 {
				t.Errorf("%d worker threads with %.1f ms of CPU time sampled, want 3 with some", w.Workers, w.TotalMS())
			}
			for _, c := range w.PerCPU {
				if c.MS > 0 && !slices.Contains(p.CPUs, c.CPU) {
					t.Errorf("workers ran %.1f ms on CPU %d, outside the placement's CPUs %v", c.MS, c.CPU, p.CPUs)
				}
			}
			if w.OutsideMS != 0 {
				t.Errorf("%.1f ms outside the placement recorded", w.OutsideMS)
			}
		})
	}
}
