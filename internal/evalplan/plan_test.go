package evalplan

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/topo/topotest"
)

// TestNewPlanMultiNode: on a multi-node machine the remote node is the
// farthest from the local one, and no placement gets more than 2 streams
// per logical CPU (issue: 8 streams ran on 2 CPUs).
func TestNewPlanMultiNode(t *testing.T) {
	for _, c := range []struct {
		fixture    string
		placements []string
		maxStreams int
	}{
		// 4 sockets x 2 nodes, 8 CPUs a node; node 0's distances are
		// 10 16 16 22 16 22 16 22: node 1 is a near neighbour, node 3 the
		// first of the farthest.
		{"64amd64-4s2n4ca2co.tar.bz2", []string{"node=0,data=node0", "node=3,data=node0"}, 16},
		// 16 nodes of 2 cores x 2 threads, all at distance 20.
		{"fakecpuid1f-64intel64-2p4d2n2c2t.tar.bz2", []string{"node=0,data=node0,smt=on", "node=0,data=node0,smt=off",
			"node=1,data=node0,smt=on", "node=1,data=node0,smt=off"}, 8},
		// one node with SMT: no data placement, streams up to 2x all CPUs.
		{"16em64t-4s2c2t.tar.bz2", []string{"smt=on", "smt=off"}, 32},
	} {
		m := topotest.Fixture(t, c.fixture)
		p, err := NewPlan(time.Hour, m)
		if err != nil {
			t.Fatalf("%s: %v", c.fixture, err)
		}
		if !slices.Equal(p.Placements, c.placements) {
			t.Errorf("%s: placements %q; want %q", c.fixture, p.Placements, c.placements)
		}
		if got := slices.Max(p.Streams); got != c.maxStreams {
			t.Errorf("%s: streams %v; want up to %d", c.fixture, p.Streams, c.maxStreams)
		}
		cells, _, err := sweep.Resolve(m, p.OLTPSpec(), true)
		if err != nil {
			t.Fatalf("%s: %v", c.fixture, err)
		}
		for _, cell := range cells {
			if cell.Streams > 2*len(cell.Place.CPUs) {
				t.Errorf("%s: cell %d runs %d streams on %s (%d CPUs)",
					c.fixture, cell.Index, cell.Streams, cell.Placement, len(cell.Place.CPUs))
			}
		}
	}
}

func TestNewPlanBudget(t *testing.T) {
	m := topotest.Fixture(t, "16em64t-4s2c2t.tar.bz2")
	for _, b := range []time.Duration{time.Minute, 2 * time.Minute} {
		if _, err := NewPlan(b, m); err == nil || !strings.Contains(err.Error(), "-budget") {
			t.Errorf("NewPlan(%v) = %v; want a budget error", b, err)
		}
	}
	// A budget whose nanoseconds overflow when scaled must be refused,
	// not planned as negative cells.
	if _, err := NewPlan(99999*time.Hour, m); err == nil ||
		!strings.Contains(err.Error(), "-budget: \"99999h0m0s\" is more than eval can plan") {
		t.Errorf("NewPlan(99999h) = %v; want a budget error", err)
	}
	if p, err := NewPlan(MaxBudget, m); err != nil || p.OLTPCell <= 0 || p.QueryCell <= 0 ||
		p.OLTPWarmup <= 0 || p.QueryWarm <= 0 {
		t.Errorf("NewPlan(%v) = %+v, %v; want positive cells", MaxBudget, p, err)
	}
	// 16 CPUs: 11 OLTP cells and a pair of neighbour cells a repeat, 10 transtats
	// cells (P1, P2 at 5 DOPs) a repeat; after the fixed costs and the
	// null and TPC-H steps (16 and 15 cells of 2 s) 151 s are left: 4+4
	// repeats need 48×3.5+24+40×5.5 s, too many, so OLTP's, transtats'
	// and the null cells' fourth go (159 s left), then one of OLTP and
	// transtats each in turn until 12×3.5+6+20×5.5 = 158 s would fit; the
	// page-size step's 5.4 s among the fixed costs leave less, so the
	// second transtats repeat goes too: one OLTP repeat and one transtats.
	p, err := NewPlan(5*time.Minute, m)
	if err != nil {
		t.Fatal(err)
	}
	if !p.ProbeQuick || p.Repeat != 1 || p.QueryRepeat != 1 || p.NullRepeat != 3 ||
		p.OLTPWarmup+p.OLTPCell < 3*time.Second || p.QueryWarm+p.QueryCell < 5*time.Second {
		t.Errorf("5m plan %+v: want a quick probe, one OLTP repeat, one transtats one and cells of at least 3 and 5 s", p)
	}
}

// plannedTime adds up what p plans on t: the fixed costs and every
// cell of every step with its setup.
func plannedTime(t *testing.T, p Plan, m *result.Topology) time.Duration {
	t.Helper()
	cells, _, err := sweep.Resolve(m, p.OLTPSpec(), true)
	if err != nil {
		t.Fatal(err)
	}
	d := p.ProbeTime() + time.Duration(p.Warehouses)*loadWH + time.Duration(p.Rows/1_000_000)*loadMRows + pgStart
	if len(p.TPCHQueries) > 0 {
		d += time.Duration(p.TPCHSF * 10 * float64(loadSF01))
	}
	d += time.Duration(len(cells)) * (p.OLTPWarmup + p.OLTPCell + CellSetup)
	d += time.Duration(2*p.Pairs()) * neighbourSetup
	d += time.Duration(2*len(p.DOPs)*p.QueryRepeat+2*len(p.SMTDOP)*p.QueryRepeat) * (p.QueryWarm + p.QueryCell + CellSetup)
	d += time.Duration(len(p.TPCHQueries)*len(p.DOPs)*p.TPCHRepeat) * (p.TPCHWarm + p.TPCHCell + CellSetup)
	pairs := len(null4(m))
	d += time.Duration(p.NullRepeat*(1+pairs*len(p.NullTransports))) * (p.NullWarm + p.NullCell + CellSetup)
	return d
}

// null4 are the client/backend pairings m offers besides none: the same
// CPU always, an SMT sibling, another core, another node.
func null4(m *result.Topology) []string {
	out := []string{"same-cpu"}
	if m.ThreadsPerCore() > 1 {
		out = append(out, "smt-sibling")
	}
	if len(m.Cores) > 1 {
		out = append(out, "other-core")
	}
	if len(m.Nodes) > 1 {
		out = append(out, "other-node")
	}
	return out
}

// TestNewPlanFits: on every captured machine the 5m, 15m and 1h plans
// exist, keep every step within the budget less 15% for what runs long,
// and give OLTP cells of at least 3 s and transtats cells of at least 5. The one under 15
// minutes takes TPC-H's three longest queries at SF 0.05 over the unix
// socket only; from 15 minutes, five at SF 0.1 and TCP too.
func TestNewPlanFits(t *testing.T) {
	for _, fx := range []string{"kvm-2vcpu-zen.tar.gz", "16em64t-4s2c2t.tar.bz2", "32intel64-2p8co2t+8ve.tar.bz2",
		"64amd64-4s2n4ca2co.tar.bz2",
		"fakecpuid1f-64intel64-2p4d2n2c2t.tar.bz2", "offline-cpu0-node0.tar.bz2"} {
		m := topotest.Fixture(t, fx)
		for _, b := range []time.Duration{5 * time.Minute, 15 * time.Minute, time.Hour} {
			p, err := NewPlan(b, m)
			if err != nil {
				t.Errorf("%s %v: %v", fx, b, err)
				continue
			}
			if got := plannedTime(t, p, m); got > b/100*85 {
				t.Errorf("%s %v: plan %+v takes %v; want at most 85%% of the budget", fx, b, p, got)
			}
			if p.OLTPWarmup+p.OLTPCell < minCell || p.QueryWarm+p.QueryCell < minQueryCell || p.Repeat < 1 || p.QueryRepeat < 1 {
				t.Errorf("%s %v: plan %+v: OLTP cells under %v or transtats cells under %v", fx, b, p, minCell, minQueryCell)
			}
			quick := b < 15*time.Minute
			if quick != (len(p.TPCHQueries) == 3 && p.TPCHSF == 0.05 && slices.Equal(p.NullTransports, []string{"unix"})) {
				t.Errorf("%s %v: TPC-H %v at SF %g, null over %v", fx, b, p.TPCHQueries, p.TPCHSF, p.NullTransports)
			}
		}
	}
}

// TestNewPlanMinBudget: the least budget eval accepts plans on the
// smallest machines, one node of 2 vCPUs and internal/vmtest's guest of
// two 1-CPU nodes and a memory-only one (refused at 2m once eval had its
// null and TPC-H steps), within 85% of it: where the machine has too many
// cells for every step, fewer repeats and then no TPC-H step.
func TestNewPlanMinBudget(t *testing.T) {
	one := topotest.Fixture(t, "kvm-2vcpu-zen.tar.gz")
	// The same CPUs on two nodes of one CPU each and a memory-only third.
	two := *topotest.Fixture(t, "kvm-2vcpu-zen.tar.gz")
	two.CPUs = slices.Clone(two.CPUs)
	for i := range two.CPUs {
		two.CPUs[i].Node = i
	}
	two.Nodes = []result.Node{{ID: 0, CPUs: []int{two.CPUs[0].ID}, MemBytes: 1 << 30},
		{ID: 1, CPUs: []int{two.CPUs[1].ID}, MemBytes: 1 << 30}, {ID: 2, MemBytes: 768 << 20}}
	two.Distances = [][]int{{10, 20, 20}, {20, 10, 20}, {20, 20, 10}}
	for _, c := range []struct {
		name string
		m    *result.Topology
	}{{"one node", one}, {"two 1-CPU nodes and a memory-only one", &two}} {
		p, err := NewPlan(MinBudget, c.m)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := plannedTime(t, p, c.m); got > MinBudget/100*85 {
			t.Errorf("%s: plan %+v takes %v; want at most 85%% of %v", c.name, p, got, MinBudget)
		}
		t.Logf("%s: repeats OLTP %d, transtats %d, null %d; TPC-H %v",
			c.name, p.Repeat, p.QueryRepeat, p.NullRepeat, p.TPCHQueries)
	}
}

// TestShrinkOrder: repeats go in the documented order, the TPC-H step
// last, and then nothing is left to give.
func TestShrinkOrder(t *testing.T) {
	p := Plan{Repeat: 4, QueryRepeat: 4, NullRepeat: 4, TPCHQueries: []int{21}}
	var got []string
	for p.shrink() {
		got = append(got, fmt.Sprintf("%d%d%d%d", p.Repeat, p.QueryRepeat, p.NullRepeat, len(p.TPCHQueries)))
	}
	want := []string{"3441", "3341", "3331", "2331", "2231", "1231", "1131", "1121", "1111", "1110"}
	if !slices.Equal(got, want) {
		t.Errorf("shrink steps (OLTP, transtats, null repeats, TPC-H queries) %v; want %v", got, want)
	}
}

// TestNewPlanRepeatsAndNeighbour: on a 2-vCPU guest of one node the 5m
// and 6m plans repeat every OLTP and transtats cell 4 times (so that a U
// test of 2 streams against 1, or DOP 2 against DOP 1, can reach
// p ≤ 0.05); the 5m plan, whose OLTP cells were already the shortest with
// one neighbour cell a repeat, keeps the neighbour pairs to the first two
// repeats (as many cells and setups as that one cell a repeat), the 6m
// plan has a pair in every repeat;
// and each repeat has a pair of neighbour cells, one with a bandwidth
// neighbour and one with a control, adjacent and alternating in order:
// one stream on cpu 0, the neighbour on cpu 1.
func TestNewPlanRepeatsAndNeighbour(t *testing.T) {
	m := topotest.Fixture(t, "kvm-2vcpu-zen.tar.gz")
	if p, err := NewPlan(5*time.Minute, m); err != nil || p.Repeat != Repeats || p.QueryRepeat != Repeats ||
		!p.Neighbour || p.Pairs() != 2 {
		t.Errorf("5m plan %+v, %v: want %d OLTP and transtats repeats, neighbour pairs in the first 2", p, err, Repeats)
	}
	p, err := NewPlan(6*time.Minute, m)
	if err != nil {
		t.Fatal(err)
	}
	if p.Repeat != Repeats || p.QueryRepeat != Repeats || p.NullRepeat != Repeats || !p.Neighbour ||
		p.OLTPWarmup+p.OLTPCell < 3*time.Second || p.QueryWarm+p.QueryCell < 5*time.Second {
		t.Fatalf(
			"6m plan %+v: want %d OLTP and transtats repeats, neighbour cells and cells of at least 3 and 5 s", p, Repeats)
	}
	cells, _, err := sweep.Resolve(m, p.OLTPSpec(), true)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, c := range cells {
		if len(c.Neighbour) > 0 {
			got = append(got, fmt.Sprintf("repeat %d: %s", c.Repeat, c))
			if c.Streams != 1 || c.Place.Streams[0] != 0 || !slices.Equal(c.Neighbour, []int{1}) || c.Cores != 1 {
				t.Errorf("neighbour cell %+v: want 1 stream on cpu 0 (1 core), the neighbour on cpu 1", c)
			}
			if i > 0 && len(cells[i-1].Neighbour) > 0 && (cells[i-1].Control == c.Control || cells[i-1].Repeat != c.Repeat) {
				t.Errorf("cells %d and %d: want a bandwidth neighbour and a control side by side in one repeat", i-1, i)
			}
		}
		if c.Index != i {
			t.Errorf("cell %d at position %d", c.Index, i)
		}
	}
	want := []string{"repeat 0: 1 stream on cpus 0-1 (2 cores), a bandwidth neighbour on cpus 1",
		"repeat 0: 1 stream on cpus 0-1 (2 cores), a control neighbour on cpus 1",
		"repeat 1: 1 stream on cpus 0-1 (2 cores), a control neighbour on cpus 1",
		"repeat 1: 1 stream on cpus 0-1 (2 cores), a bandwidth neighbour on cpus 1"}
	if len(got) != 2*Repeats || !slices.Equal(got[:4], want) || len(cells) != Repeats*(len(p.Streams)+2) {
		t.Errorf("%d cells, neighbour cells %q; want %d of %d, starting %q",
			len(cells), got, 2*Repeats, Repeats*(len(p.Streams)+2), want)
	}
	multi, err := NewPlan(5*time.Minute, topotest.Fixture(t, "64amd64-4s2n4ca2co.tar.bz2"))
	if err != nil || multi.Neighbour {
		t.Errorf("multi-node plan %+v, %v: want no neighbour cells (remote data is the held-out point there)", multi, err)
	}
}

// TestLeastBudget: a budget too small for the machine is refused naming
// the least that has room, and that one plans.
func TestLeastBudget(t *testing.T) {
	m := topotest.Fixture(t, "32intel64-2p8co2t+8ve.tar.bz2")
	least := LeastBudget(m)
	if least <= MinBudget {
		t.Fatalf("least budget on 32 CPUs %v, want more than %v", least, MinBudget)
	}
	_, err := NewPlan(MinBudget, m)
	if err == nil || !strings.Contains(err.Error(),
		fmt.Sprintf("give a larger budget (--budget %v is the least that has room on this machine)", least)) {
		t.Errorf("NewPlan(%v) on 32 CPUs = %v, want the least budget named", MinBudget, err)
	}
	if _, err := NewPlan(least, m); err != nil {
		t.Errorf("NewPlan(%v), the least budget: %v", least, err)
	}
	if _, err := NewPlan(least-10*time.Second, m); err == nil {
		t.Errorf("NewPlan(%v), under the least budget, planned", least-10*time.Second)
	}
}

// TestPageTime: the page-size step as planned is its pairs of cells and
// their setups (pages.RunConfig.Time), its repeats left out.
func TestPageTime(t *testing.T) {
	if got, want := (Plan{PagePairs: 4, PageCell: 650 * time.Millisecond}).PageTime(),
		8*750*time.Millisecond+600*time.Millisecond+325*time.Millisecond+2*time.Second; got != want {
		t.Errorf("planned %v, want %v", got, want)
	}
}
