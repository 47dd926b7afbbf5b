package memlat

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/result"
)

// TestMatrixNUMAEffect flags matrices whose remote reads are no slower
// than local, as QEMU's emulated nodes give, and only those.
func TestMatrixNUMAEffect(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cpuNodes []int
		memNodes []int
		ns       [][]float64
		ratio    float64
		flagged  bool
	}{
		{"emulated, remote cheaper", []int{0, 1}, []int{0, 1}, [][]float64{{100, 98}, {98, 100}}, 0.98, true},
		{"interleaved, equal", []int{0, 1}, []int{0, 1}, [][]float64{{100, 100}, {100, 100}}, 1, true},
		{"just under the threshold", []int{0, 1}, []int{0, 1}, [][]float64{{100, 104}, {104, 100}}, 1.04, true},
		{"just over the threshold", []int{0, 1}, []int{0, 1}, [][]float64{{100, 106}, {106, 100}}, 1.06, false},
		{"two sockets", []int{0, 1}, []int{0, 1}, [][]float64{{100, 150}, {150, 100}}, 1.5, false},
		{"memory-only third node", []int{0, 1}, []int{0, 1, 2}, [][]float64{{100, 150, 300}, {150, 100, 300}}, 2.25, false},
		{"one node", []int{0}, []int{0}, [][]float64{{100}}, 0, false},
		// Seen under QEMU: the mean says NUMA, but node 1's CPUs read
		// node 0's memory faster than their own.
		{"one row inverted", []int{0, 1}, []int{0, 1, 2}, [][]float64{{4.5, 6.2, 7.9}, {4.88, 6.47, 7.79}},
			(6.2 + 7.9 + 4.88 + 7.79) / 4 / ((4.5 + 6.47) / 2), true},
	} {
		m := &Matrix{CPUNodes: tc.cpuNodes, MemNodes: tc.memNodes, Chain: Random, Pages: Pages2M, PageBytes: hugeBytes,
			HugeFraction: 1, Bytes: 1 << 30}
		for i, row := range tc.ns {
			m.CPUs = append(m.CPUs, i)
			var r []Stat
			var rel []float64
			for _, v := range row {
				r = append(r, Stat{Median: v, Min: v, Max: v, Samples: 3})
				rel = append(rel, v/100)
			}
			m.NS, m.Relative = append(m.NS, r), append(m.Relative, rel)
		}
		m.assess()
		if math.Abs(m.RemoteRatio-tc.ratio) > 1e-9 || m.NoNUMAEffect != tc.flagged {
			t.Errorf("%s: remote ratio %.3f, no NUMA effect %v; want %.3f, %v",
				tc.name, m.RemoteRatio, m.NoNUMAEffect, tc.ratio, tc.flagged)
		}
		if s := summarize(&Report{Matrix: m}); s.NoNUMAEffect != tc.flagged {
			t.Errorf("%s: summary's no NUMA effect %v, want %v", tc.name, s.NoNUMAEffect, tc.flagged)
		}
		var b strings.Builder
		if err := WriteText(&b, &Report{Matrix: m}); err != nil {
			t.Fatal(err)
		}
		said := strings.Contains(b.String(), "no NUMA effect measured (emulated or interleaved memory?)") &&
			strings.Contains(b.String(), "must not be used as one")
		if said != tc.flagged {
			t.Errorf("%s: text says no NUMA effect: %v, want %v:\n%s", tc.name, said, tc.flagged, b.String())
		}
	}
}

// TestMatrixBytes sizes the matrix's chains to the memory nodes' free
// memory (node meminfo files under a fake root): --max where every node
// has room, less with a note where one has not, an error below the
// smallest chain, as a guest's memory node with RAM-disk pages on it
// needed (a 512 MiB buffer bound there got eval killed).
func TestMatrixBytes(t *testing.T) {
	const mib = 1 << 20
	tp := &result.Topology{
		Nodes: []result.Node{{ID: 0, CPUs: []int{0}, MemBytes: 1024 * mib}, {ID: 1, MemBytes: 1024 * mib}}}
	for _, tc := range []struct {
		freeMiB, fileMiB [2]int64
		want             int64
		note, err        string
	}{
		{[2]int64{900, 900}, [2]int64{0, 0}, 512 * mib, "", ""},
		{[2]int64{900, 300}, [2]int64{0, 100}, 336 * mib,
			"the NUMA matrix's chains are 336MiB, not --max 512MiB: node 1 had no more free", ""},
		{[2]int64{900, 100}, [2]int64{0, 0}, 0,
			"", "node 1: the node has 36MiB free, less than the 64MiB the matrix needs at least"},
	} {
		root := t.TempDir()
		for n := range 2 {
			dir := filepath.Join(root, "sys/devices/system/node", fmt.Sprintf("node%d", n))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			mi := fmt.Sprintf("Node %d MemTotal:  1048576 kB\nNode %d MemFree:  %d kB\nNode %d Inactive(file):  %d kB\n",
				n, n, tc.freeMiB[n]*1024, n, tc.fileMiB[n]*1024)
			if err := os.WriteFile(filepath.Join(dir, "meminfo"), []byte(mi), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cfg := DefaultConfig(true)
		cfg.ProcRoot, cfg.MaxBytes = root, 512*mib
		m := &Matrix{MemNodes: []int{0, 1}}
		note, err := matrixBytes(&cfg, tp, m)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrCannotBind) {
				t.Errorf("free %v MiB: %v; want an error with %q", tc.freeMiB, err, tc.err)
			}
			continue
		}
		if err != nil || m.Bytes != tc.want || note != tc.note {
			t.Errorf("free %v MiB, inactive files %v MiB: %d bytes, note %q, %v; want %d, %q",
				tc.freeMiB, tc.fileMiB, m.Bytes, note, err, tc.want, tc.note)
		}
	}
}
