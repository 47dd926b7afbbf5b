package vmtest

import (
	"slices"
	"testing"

	"github.com/numalab/numalab/internal/memlat"
)

// probeFlags is the guest's probe mem: --quick with a 64 MiB largest
// working set (4x the guest's 16 MiB L3, as --max asks), 5 ms timed
// windows, one clean window per point and one size per doubling. Under
// TCG a probe's time goes into its timed windows (measured in thread
// time, so a vCPU that gets a fifth of a host core takes five times as
// long) and into touching its buffers: on the 4-node machine the default
// --quick took 97 s, --max 64m alone 76 s; in the 2-node guest --max 64m
// --window 10 took 68 s. None of the cuts changes a code path: the same
// ladders, MLP, bandwidth, loaded latency and N×N matrix with its
// page-location check. QEMU models no latency, so longer windows, more
// points or a larger set would prove nothing more.
const probeFlags = "--quick --max 64m --window 5 --samples 1 --per-doubling 1"

// checkProbe checks `numalab probe mem --json` run in the guest: its
// matrix against the guest's nodes, and the truth of every label it puts
// on what it measured (page sizes, SMT, the no-NUMA-effect flag).
func checkProbe(t *testing.T, m Machine, sec section, g guestSys) {
	var rep memlat.Report
	decode(t, "probe mem", sec, &rep)
	checkMatrix(t, rep.Matrix, g)
	if len(rep.Ladders) == 0 {
		t.Error("probe: no ladders")
	}
	for _, l := range rep.Ladders {
		checkPages(t, "ladder "+l.Chain+" "+l.Pages, l.Pages, l.PageBytes, l.HugeFraction)
		if _, ok := g.cpus[l.CPU]; !ok {
			t.Errorf("ladder %s %s ran on CPU %d, not one of the guest's", l.Chain, l.Pages, l.CPU)
		}
	}
	if mx := rep.Matrix; mx != nil {
		checkPages(t, "matrix", mx.Pages, mx.PageBytes, mx.HugeFraction)
		if rep.Summary.NoNUMAEffect != mx.NoNUMAEffect {
			t.Errorf("summary says no NUMA effect %v, the matrix %v", rep.Summary.NoNUMAEffect, mx.NoNUMAEffect)
		}
		if len(rep.Summary.MatrixNS) != len(mx.NS) {
			t.Errorf("summary matrix has %d rows, the matrix %d", len(rep.Summary.MatrixNS), len(mx.NS))
		}
	}
	if p := rep.MLP; p == nil {
		t.Error("probe: no MLP")
	} else {
		checkPages(t, "MLP", p.Pages, p.PageBytes, p.HugeFraction)
		if p.SMT != (m.threads() > 1) {
			t.Errorf("MLP says SMT %v on a guest with %d threads per core", p.SMT, m.threads())
		}
		for _, pt := range p.Points {
			if pt.Threads == 2 && !p.SMT {
				t.Errorf("MLP point split across siblings on a guest without SMT: %+v", pt)
			}
		}
	}
}

// checkPages checks a mapping's page labels: asked for 4k or 2m, and got
// 2 MiB pages only when asked and at least 90% huge, 4 KiB otherwise.
func checkPages(t *testing.T, what, asked string, got int64, huge float64) {
	t.Helper()
	switch {
	case asked != memlat.Pages4K && asked != memlat.Pages2M:
		t.Errorf("%s: asked for pages %q", what, asked)
	case got == 2<<20 && (asked != memlat.Pages2M || huge < 0.9):
		t.Errorf("%s: labelled 2 MiB pages, asked %s, %.0f%% huge", what, asked, 100*huge)
	case got == 4<<10 && huge >= 0.9:
		t.Errorf("%s: labelled 4 KiB pages, %.0f%% huge", what, 100*huge)
	case got != 2<<20 && got != 4<<10:
		t.Errorf("%s: page size %d", what, got)
	case asked == memlat.Pages4K && got != 4<<10:
		t.Errorf("%s: asked for 4 KiB pages, labelled %d", what, got)
	}
}

// checkMatrix checks a NUMA matrix against the guest's nodes (rows the
// nodes with CPUs, columns the nodes with memory, each column's buffer on
// its node), and the truth of its no-NUMA-effect flag: QEMU does not model
// distance, so a matrix is either flagged, for a reason it really has, or
// every remote cell read slower than its row's local one.
func checkMatrix(t *testing.T, mx *memlat.Matrix, g guestSys) {
	if mx == nil {
		t.Fatal("probe: no NUMA matrix")
	}
	var cpuNodes, memNodes []int
	for id, n := range g.nodes {
		if len(n.cpus) > 0 {
			cpuNodes = append(cpuNodes, id)
		}
		if n.memKB > 0 {
			memNodes = append(memNodes, id)
		}
	}
	slices.Sort(cpuNodes)
	slices.Sort(memNodes)
	if !slices.Equal(mx.CPUNodes, cpuNodes) || !slices.Equal(mx.MemNodes, memNodes) {
		t.Errorf("matrix rows %v, columns %v; sysfs nodes with CPUs %v, with memory %v",
			mx.CPUNodes, mx.MemNodes, cpuNodes, memNodes)
	}
	if len(mx.NS) != len(mx.CPUNodes) || len(mx.CPUs) != len(mx.CPUNodes) || len(mx.Relative) != len(mx.CPUNodes) {
		t.Fatalf("matrix has %d rows, %d relative rows and %d row CPUs for %d CPU nodes",
			len(mx.NS), len(mx.Relative), len(mx.CPUs), len(mx.CPUNodes))
	}
	for i, row := range mx.NS {
		if len(row) != len(mx.MemNodes) || len(mx.Relative[i]) != len(mx.MemNodes) {
			t.Fatalf("matrix row %d has %d cells (%d relative) for %d memory nodes",
				i, len(row), len(mx.Relative[i]), len(mx.MemNodes))
		}
		if n := mx.CPUNodes[i]; !slices.Contains(g.nodes[n].cpus, mx.CPUs[i]) {
			t.Errorf("matrix row for node %d ran on CPU %d, not one of the node's %v", n, mx.CPUs[i], g.nodes[n].cpus)
		}
	}
	if len(mx.OnNode) != len(mx.MemNodes) {
		t.Errorf("matrix has page locations for %d of %d memory nodes", len(mx.OnNode), len(mx.MemNodes))
	}
	for j, f := range mx.OnNode {
		if f < 0.99 {
			t.Errorf("matrix column node %d: only %.1f%% of its buffer was on that node", mx.MemNodes[j], 100*f)
		}
	}
	t.Logf("matrix %v, remote/local %.2f, flagged %v %s", mx.Relative, mx.RemoteRatio, mx.NoNUMAEffect, mx.Inverted)
	inverted := false
	for i, row := range mx.Relative {
		local := slices.Index(mx.MemNodes, mx.CPUNodes[i])
		for j, v := range row {
			if local < 0 || j == local {
				continue
			}
			inverted = inverted || v < row[local]
			if !mx.NoNUMAEffect && v <= row[local] {
				t.Errorf("matrix not flagged, but node %d's CPUs read node %d's memory no slower than local: %v",
					mx.CPUNodes[i], mx.MemNodes[j], mx.Relative)
			}
		}
	}
	if mx.NoNUMAEffect && mx.Inverted == "" && mx.RemoteRatio >= memlat.NUMAEffectRatio {
		t.Errorf("matrix flagged no NUMA effect with remote/local %.2f and no inverted cell", mx.RemoteRatio)
	}
	if (mx.Inverted != "") != inverted {
		t.Errorf("matrix says inverted %q; a remote cell faster than local: %v (%v)", mx.Inverted, inverted, mx.Relative)
	}
	if mx.Inverted != "" && !mx.NoNUMAEffect {
		t.Errorf("matrix inverted (%s) but not flagged", mx.Inverted)
	}
}
