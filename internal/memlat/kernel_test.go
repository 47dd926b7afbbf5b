package memlat

import (
	"context"
	"math"
	"testing"
	"unsafe"
)

// TestKernelsHost runs every bandwidth kernel this CPU has over a small
// buffer and checks what each wrote: write stores 1.0, copy
// duplicates, triad computes b + 3c; read must not write. AVX-512 is
// skipped, saying so, where the CPU lacks it.
func TestKernelsHost(t *testing.T) {
	b, err := mapBuffer("/", 3<<20, Pages4K, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer b.free()
	const n = 64 << 10 // bytes per array
	f := unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(b.mem))), 3*n/8)
	a, x, y := f[:n/8], f[n/8:2*n/8], f[2*n/8:]
	ptrs := []unsafe.Pointer{unsafe.Pointer(&a[0]), unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0])}
	fill := func() {
		for i := range a {
			a[i], x[i], y[i] = -1, float64(i), float64(2*i+1)
		}
	}
	names := map[string]bool{}
	for _, k := range hostKernels() {
		names[k.Name] = true
		t.Run(k.Name, func(t *testing.T) {
			for _, op := range bwOps {
				fill()
				k.run(op, ptrs, 0, n)
				for i := range a {
					want := map[string]float64{OpRead: -1, OpWrite: 1, OpCopy: x[i], OpTriad: x[i] + triadScalar*y[i]}[op]
					if a[i] != want || math.IsNaN(a[i]) {
						t.Fatalf("%s: element %d is %v, want %v", op, i, a[i], want)
					}
				}
			}
		})
	}
	if !names["AVX-512"] {
		t.Run("AVX-512", func(t *testing.T) { t.Skip("this CPU (or its OS) has no AVX-512: its kernels cannot run here") })
	}
}

// TestBWNodesHost measures read bandwidth per node pair on this machine,
// in short windows: on one node nothing and a note saying so; on more,
// one positive figure per pair of a node with CPUs and one with memory.
// Here (one node) it checks the note; run in a guest with nodes
// (/work/shared/tools/numavm) it runs the remote path.
func TestBWNodesHost(t *testing.T) {
	m := hostTopology(t)
	cfg := DefaultConfig(true)
	cfg.BWWindowMS = 20
	bw, rep := &Bandwidth{}, &Report{}
	if err := probeBWNodes(context.Background(), &cfg, m, widest(), bw, rep, func(string) {}); err != nil {
		t.Fatal(err)
	}
	if len(m.Nodes) < 2 {
		if len(bw.Nodes) != 0 || len(rep.Notes) != 1 {
			t.Errorf("one node: %d node pairs measured, notes %q; want none and a note", len(bw.Nodes), rep.Notes)
		}
		return
	}
	want := 0
	for _, cn := range m.Nodes {
		for _, mn := range m.Nodes {
			if len(cn.CPUs) > 0 && mn.MemBytes > 0 {
				want++
			}
		}
	}
	for _, p := range bw.Nodes {
		t.Logf("node %d's CPUs %v, memory on node %d: %.1f GB/s (%d windows, %d preempted)",
			p.CPUNode, p.Point.CPUs, p.MemNode, p.Point.GBps, p.Point.Windows, p.Point.Preempted)
		if p.Point.GBps <= 0 {
			t.Errorf("node %d to node %d: %.1f GB/s", p.CPUNode, p.MemNode, p.Point.GBps)
		}
	}
	if len(bw.Nodes)+len(rep.Notes) != want {
		t.Errorf("%d node pairs measured and %d left out (%q), want %d", len(bw.Nodes), len(rep.Notes), rep.Notes, want)
	}
}
