package memlat

import (
	"math"
	"strings"
	"testing"
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
		{"one row inverted", []int{0, 1}, []int{0, 1, 2}, [][]float64{{4.5, 6.2, 7.9}, {4.88, 6.47, 7.79}}, (6.2 + 7.9 + 4.88 + 7.79) / 4 / ((4.5 + 6.47) / 2), true},
	} {
		m := &Matrix{CPUNodes: tc.cpuNodes, MemNodes: tc.memNodes, Chain: Random, Pages: Pages2M, PageBytes: hugeBytes, HugeFraction: 1, Bytes: 1 << 30}
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
			t.Errorf("%s: remote ratio %.3f, no NUMA effect %v; want %.3f, %v", tc.name, m.RemoteRatio, m.NoNUMAEffect, tc.ratio, tc.flagged)
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
