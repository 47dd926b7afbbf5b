package vmtest

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
)

// TestReportPlacement runs a DuckDB 'run report --dop 4' cell in the
// matrix's two-node SMT guest placed on node 1 and placed with smt=off,
// and checks that DuckDB's worker threads were sampled, and every sample
// was inside the placement's CPUs. Before numalab placed the workers they
// ran on every CPU of the guest. It also runs 'run report --data-node 0 --placement node=1' with the file
// on tmpfs and on ext4 (the guest's RAM disk), and checks the placement
// stored: the file's pages and DuckDB's buffer memory on node 0.
//
// Its commands run in the matrix's guest (matrixRun), after the matrix's
// own, rather than in a guest of its own. The smt=off cell is the DOP 4 cell of TestEvalSMTDOPStep's smt=off run
// (P1 at DOP 1, 2 and 4, its database on tmpfs), which that test checks
// for its DOPs as this one does for DOP 4: one run, read by both, instead
// of two runs of the same cell.
func TestReportPlacement(t *testing.T) {
	host(t)
	for _, tc := range []struct {
		name, sel, guest string
		dataFS           []string // the filesystems of the --data-node runs
		selSec, runSec   string   // the sections of the placement and of the run
	}{
		{"node1", "node=1", "2nodes-smt", []string{"tmpfs", "ext4"}, "report-select", "report"},
		{"smt-off", "smt=off", "2nodes-smt", nil, "smtdop-select-smt=off", "smtdop-run-smt=off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			secs := matrixRun(t, tc.guest)
			for _, fs := range tc.dataFS {
				checkReportDataNode(t, fs, secs["report-data-node-"+fs])
			}
			var p place.Placement
			decode(t, tc.selSec, secs[tc.selSec], &p)
			var r storedRun
			decode(t, tc.runSec, secs[tc.runSec], &r)
			t.Logf("run report:\n%s", secs[tc.runSec].Err)
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
			t.Logf("%s (CPUs %v): %s, %d workers, %d samples, per CPU %+v, %.1f ms outside; %s",
				tc.sel, p.CPUs, w.Kind, w.Workers, w.Samples, w.PerCPU, w.OutsideMS, w.How)
			if !slices.Equal(w.Placement, p.CPUs) || w.Oversubscribed != (4 > len(p.CPUs)) {
				t.Errorf("workers placed on %v (oversubscribed %v), want the placement's CPUs %v",
					w.Placement, w.Oversubscribed, p.CPUs)
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

// addReportPlacement adds TestReportPlacement's sections to a guest's
// script: its DuckDB database in /tmp/w (tmpfs), a DOP 4 cell placed with
// sel, and with disk (the RAM disk's filesystem) the --data-node 0 runs on
// tmpfs and on it. It leaves nothing behind.
func addReportPlacement(s *script, sel, disk string) {
	s.raw("mkdir -p /tmp/w && cp /opt/bin/" + transtatsDB + " /tmp/w/")
	s.add("report-select", "numalab topo --select '"+sel+"' --json")
	s.add("report", fmt.Sprintf(
		"numalab run report --engine duckdb --db /tmp/w/%s --rows 1000000 --streams 1 --dop 4 --query P1 "+
			"--placement '%s' --duration 3s --warmup 500ms --store /tmp/w/s.db >&2 && "+
			"numalab runs show --json --store /tmp/w/s.db 1",
		transtatsDB, sel))
	s.raw("rm -rf /tmp/w")
	if disk != "" {
		for _, fs := range []string{"tmpfs", disk} {
			d := map[string]string{"tmpfs": "/tmp/dn", disk: "/data/dn"}[fs]
			s.raw(fmt.Sprintf("mkdir -p %s && cp /opt/bin/%s %s/", d, transtatsDB, d))
			s.add("report-data-node-"+fs, fmt.Sprintf(
				"numalab run report --engine duckdb --db %s/%s --rows 1000000 --streams 1 --dop 1 --query P1 "+
					"--placement node=1 --data-node 0 --duration 1s --warmup 0s --store %s/s.db >&2 && "+
					"numalab runs show --json --store %s/s.db 1",
				d, transtatsDB, d, d))
			s.raw("rm -rf " + d)
		}
	}
}

// checkReportDataNode: the run stored one data placement on node 0, with
// at least 99% of the file's pages there, and figures of DuckDB's buffer
// memory that show it there by engine.PoolOnNode's rule (checked again
// here from what was stored: the new memory per node). A stricter "99% of
// the pool new on node 0" failed in 1 of 14 guest runs under a loaded
// host (18,128,896 bytes new for an 18,350,080-byte pool, 262,144 on
// node 1): the allocator reused memory the process had.
func checkReportDataNode(t *testing.T, fs string, sec section) {
	t.Helper()
	pd := onePlacedData(t, "report-data-node-"+fs, sec)
	t.Logf("%s: --data-node 0, placement node=1: %s", fs, engine.PlacedText(pd))
	if pd.Node != 0 || pd.File == nil || pd.File.Pages == 0 || float64(pd.File.PerNode[0]) < 0.99*float64(pd.File.Pages) {
		t.Errorf("%s: file pages %v, want at least 99%% on node 0", fs, pd.File)
	}
	if pd.BufferBytes <= 0 {
		t.Errorf("%s: DuckDB's buffer memory %d bytes stored, want some", fs, pd.BufferBytes)
	} else if err := engine.PoolOnNode(0, pd.BufferBytes, pd.GainedBytes); err != nil {
		t.Errorf("%s: the stored figures do not show the pool on node 0: %v", fs, err)
	}
}

// onePlacedData is the one data placement the run shown in section name
// stored; it fails the test unless there is exactly one.
func onePlacedData(t *testing.T, name string, sec section) engine.PlacedData {
	t.Helper()
	var r storedRun
	decode(t, name, sec, &r)
	var placed []engine.PlacedData
	for _, it := range r.Results {
		if it.Kind == string(engine.KindPlacedData) {
			var pd engine.PlacedData
			if err := json.Unmarshal(it.Body, &pd); err != nil {
				t.Fatal(err)
			}
			placed = append(placed, pd)
		}
	}
	if len(placed) != 1 {
		t.Fatalf("%s: %d data placements stored, want 1\nstderr:\n%s", name, len(placed), sec.Err)
	}
	return placed[0]
}
