package vmtest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/eval"
	"github.com/numalab/numalab/internal/evalplan"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/workload/transtats"
)

// TestEvalSMTDOPStep: in the matrix's SMT guest (two nodes, each one core
// of 2 threads), eval plans its SMT × DOP step from the guest's own
// topology: P1 at DOP 1, 2 (the cores) and 4 (the logical CPUs), placed
// smt=on and smt=off. The guest runs those two runs as 'run report' with
// the plan's settings, but 1 s windows and one repeat (the suite must stay
// short), and every DOP > 1 cell must have had its DuckDB workers sampled
// on its placement's CPUs only, DOP 4 on smt=off marked oversubscribed.
//
// Its commands run in the matrix's SMT guest (matrixRun, addSMTDOP),
// after the matrix's own, rather than in a guest of its own: the runs are
// planned before the boot from a stand-in of the machine's topology
// (standInTopology), and the test then plans again from the topology the
// guest printed (the matrix's topo section) and fails unless the guest's
// plan gives the very commands the guest ran. Its database is on tmpfs
// (/tmp/w), as it was in a guest of its own without the RAM disk.
func TestEvalSMTDOPStep(t *testing.T) {
	host(t)
	m := matrixMachine(t, "2nodes-smt")
	planned := plannedSMTDOP(t, m)
	secs := matrixRun(t, "2nodes-smt")

	var tp result.Topology
	decode(t, "topo", secs["topo"], &tp)
	plan, err := evalplan.NewPlan(5*time.Minute, &tp)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plan.SMTDOP, []int{1, 2, 4}) {
		t.Fatalf("eval's SMT x DOP DOPs in the guest: %v (no room: %v); want 1, 2 cores, 4 logical CPUs",
			plan.SMTDOP, plan.SMTNoRoom)
	}
	runs := eval.NewConfigs(plan, "/tmp/w").SMTDOP
	if len(runs) != 2 {
		t.Fatalf("%d SMT x DOP runs planned, want smt=on and smt=off", len(runs))
	}
	for i, c := range runs {
		checkSMTDOPRun(t, c)
		if i >= len(planned) || smtDOPRunLine(c, i) != smtDOPRunLine(planned[i], i) {
			t.Fatalf("the guest's topology plans run %d as\n%s\nbut the guest ran what the stand-in topology planned "+
				"(%d runs):\n%s\nstandInTopology no longer matches the guest %s: make it match",
				i+1, smtDOPRunLine(c, i), len(planned), smtDOPRunLine(planned[min(i, len(planned)-1)], i), m)
		}
	}
	if len(planned) != len(runs) {
		t.Fatalf("the stand-in topology planned %d runs, the guest's %d: make standInTopology match the guest %s",
			len(planned), len(runs), m)
	}
	for _, c := range runs {
		var p place.Placement
		decode(t, "smtdop-select-"+c.Placement, secs["smtdop-select-"+c.Placement], &p)
		var r storedRun
		decode(t, "smtdop-run-"+c.Placement, secs["smtdop-run-"+c.Placement], &r)
		t.Logf("%s:\n%s", c.Placement, secs["smtdop-run-"+c.Placement].Err)
		var dops []int
		for _, it := range r.Results {
			var qc result.QueryCell
			if it.Kind != string(result.KindQueryCell) {
				continue
			}
			if err := json.Unmarshal(it.Body, &qc); err != nil || qc.Cell == nil {
				t.Fatalf("%s: a query cell that does not decode (%v): %s", c.Placement, err, it.Body)
			}
			d := qc.Cell.DOP
			dops = append(dops, d)
			w := qc.Workers
			if d == 1 {
				continue
			}
			if w == nil {
				t.Errorf("%s DOP %d: no record of where the workers ran", c.Placement, d)
				continue
			}
			t.Logf("%s (CPUs %v) DOP %d: %d workers, %d samples, per CPU %+v, %.1f ms outside, oversubscribed %v",
				c.Placement, p.CPUs, d, w.Workers, w.Samples, w.PerCPU, w.OutsideMS, w.Oversubscribed)
			if !slices.Equal(w.Placement, p.CPUs) || w.Oversubscribed != (d > len(p.CPUs)) {
				t.Errorf("%s DOP %d: workers placed on %v (oversubscribed %v); want the placement's CPUs %v",
					c.Placement, d, w.Placement, w.Oversubscribed, p.CPUs)
			}
			if w.Workers != d-1 || w.TotalMS() <= 0 {
				t.Errorf("%s DOP %d: %d worker threads with %.1f ms sampled; want %d with some",
					c.Placement, d, w.Workers, w.TotalMS(), d-1)
			}
			for _, pc := range w.PerCPU {
				if pc.MS > 0 && !slices.Contains(p.CPUs, pc.CPU) {
					t.Errorf("%s DOP %d: workers ran %.1f ms on CPU %d, outside %v", c.Placement, d, pc.MS, pc.CPU, p.CPUs)
				}
			}
			if w.OutsideMS != 0 {
				t.Errorf("%s DOP %d: %.1f ms outside the placement recorded", c.Placement, d, w.OutsideMS)
			}
		}
		if !slices.Equal(dops, c.DOP) {
			t.Errorf("%s: cells at DOP %v, want %v", c.Placement, dops, c.DOP)
		}
	}
}

// plannedSMTDOP is the SMT × DOP runs eval plans from the stand-in
// topology of m, which the guest runs (addSMTDOP).
func plannedSMTDOP(t *testing.T, m Machine) []transtats.RunConfig {
	t.Helper()
	standIn, err := evalplan.NewPlan(5*time.Minute, standInTopology(m))
	if err != nil {
		t.Fatalf("planning from the stand-in topology of %s: %v", m, err)
	}
	planned := eval.NewConfigs(standIn, "/tmp/w").SMTDOP
	if len(planned) == 0 {
		t.Fatalf("no SMT x DOP runs planned from the stand-in topology of %s (DOPs %v, no room %v)",
			m, standIn.SMTDOP, standIn.SMTNoRoom)
	}
	for _, c := range planned {
		checkSMTDOPRun(t, c)
	}
	return planned
}

// addSMTDOP adds TestEvalSMTDOPStep's sections to the guest of m: each
// planned run's placement and the run itself, in /tmp/w (tmpfs). It
// leaves nothing behind.
func addSMTDOP(t *testing.T, s *script, m Machine) {
	t.Helper()
	s.raw("mkdir -p /tmp/w && cp /opt/bin/" + transtatsDB + " /tmp/w/")
	for i, c := range plannedSMTDOP(t, m) {
		s.add("smtdop-select-"+c.Placement, "numalab topo --select '"+c.Placement+"' --json")
		s.add("smtdop-run-"+c.Placement, smtDOPRunLine(c, i))
	}
	s.raw("rm -rf /tmp/w")
}

// checkSMTDOPRun: a planned run is one the guest can run as planned.
func checkSMTDOPRun(t *testing.T, c transtats.RunConfig) {
	t.Helper()
	if c.Engine != "duckdb" || c.Rows != 1_000_000 || !strings.HasSuffix(c.DB, "/"+transtatsDB) || len(c.Streams) != 1 ||
		len(c.Queries) != 1 {
		t.Fatalf("planned run %+v: want one stream of one query on DuckDB's 1,000,000-row transtats, as the guest carries", c)
	}
}

// smtDOPRunLine is the guest's command for the i-th SMT x DOP run c: the
// plan's engine, database, rows, stream, DOPs, query and placement, with
// 1 s windows and one repeat.
func smtDOPRunLine(c transtats.RunConfig, i int) string {
	return fmt.Sprintf(
		"numalab run report --engine %s --db %s --rows %d --streams %d --dop %s --query %s --placement '%s' "+
			"--duration 1s --warmup 300ms --repeat 1 --store /tmp/w/s.db >&2 && "+
			"numalab runs show --json --store /tmp/w/s.db %d",
		c.Engine, c.DB, c.Rows, c.Streams[0], cliflag.FormatInts(c.DOP), c.Queries[0], c.Placement, i+1)
}

// standInTopology is what the guest's sysfs shows for m: node i has CPUs
// i·CPUsPerNode on, CPUs of a core are consecutive, the sockets split the
// CPUs in order, every node has its memory, and a memory-only node comes
// last. It only plans the guest's commands and eval's budget before the
// boot; TestEvalSMTDOPStep checks the plan against the guest's own
// topology.
func standInTopology(m Machine) *result.Topology {
	tp := &result.Topology{Source: "stand-in for " + m.String()}
	for p := range m.sockets() {
		tp.Packages = append(tp.Packages, result.Package{ID: p})
	}
	perSocket := m.CPUs() / m.sockets()
	for n := range m.AllNodes() {
		node := result.Node{ID: n, MemBytes: int64(m.memPerNode()) << 20}
		if n >= m.Nodes {
			node.MemBytes = int64(m.MemOnlyMiB) << 20
		}
		for c := n * m.CPUsPerNode; n < m.Nodes && c < (n+1)*m.CPUsPerNode; c++ {
			core, pkg := c/m.threads(), c/perSocket
			if core == len(tp.Cores) {
				tp.Cores = append(tp.Cores, result.Core{ID: core, Package: pkg})
			}
			tp.Cores[core].CPUs = append(tp.Cores[core].CPUs, c)
			tp.CPUs = append(tp.CPUs, result.CPU{ID: c, Package: pkg, Core: core, Node: n})
			tp.Packages[pkg].CPUs = append(tp.Packages[pkg].CPUs, c)
			node.CPUs = append(node.CPUs, c)
		}
		tp.Nodes = append(tp.Nodes, node)
	}
	for i := range m.AllNodes() {
		row := make([]int, m.AllNodes())
		for j := range row {
			row[j] = m.Distance(i, j)
		}
		tp.Distances = append(tp.Distances, row)
	}
	return tp
}
