package sentinel

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/memlat"
)

// BenchmarkMemoryReferenceSpread times the memory reference in 4 KiB
// pages (as it was) and in 2 MiB pages (as NewMemory maps it), interleaved,
// each quiet (after 20 ms asleep, the CPU left idle as between an eval's
// steps) and right after a stream that reads and writes every line of
// 512 MiB (evicting the caches, the TLB and the page walks' entries, as
// the steps between an eval's samples do), and reports for each page size
// the median over all its samples and the share of quiet and of trashed
// samples more than 15% off it, the sentinel's tolerance. Run it with
// -benchtime=40x (40 samples of each kind); it asserts nothing.
func BenchmarkMemoryReferenceSpread(b *testing.B) {
	kinds := []string{memlat.Pages4K, memlat.Pages2M}
	var refs []*Memory
	for _, p := range kinds {
		m, err := newMemory(MemoryBytes(0), p)
		if err != nil {
			b.Fatal(err)
		}
		defer m.Free()
		refs = append(refs, m)
	}
	trash := make([]byte, 512<<20)
	quiet, trashed := make([][]float64, len(kinds)), make([][]float64, len(kinds))
	huge := make([]float64, len(kinds))
	b.ResetTimer()
	for i := range b.N {
		for k := range kinds {
			k = (k + i) % len(kinds) // each page size first in turn
			time.Sleep(20 * time.Millisecond)
			r := refs[k].Run()
			quiet[k] = append(quiet[k], PerLoad(r.Took))
			for j := 0; j < len(trash); j += 64 {
				trash[j]++
			}
			r = refs[k].Run()
			trashed[k] = append(trashed[k], PerLoad(r.Took))
			huge[k] = r.Huge
		}
	}
	b.StopTimer()
	for k, p := range kinds {
		all := slices.Concat(quiet[k], trashed[k])
		slices.Sort(all)
		med := all[len(all)/2]
		if len(all)%2 == 0 {
			med = (all[len(all)/2-1] + all[len(all)/2]) / 2
		}
		off := func(xs []float64) float64 {
			n := 0
			for _, x := range xs {
				if math.Abs(x-med) > 0.15*med {
					n++
				}
			}
			return 100 * float64(n) / float64(len(xs))
		}
		b.ReportMetric(med, p+"-median-ns/load")
		b.ReportMetric(100*(all[0]-med)/med, p+"-min-%")
		b.ReportMetric(100*(all[len(all)-1]-med)/med, p+"-max-%")
		b.ReportMetric(off(quiet[k]), p+"-quiet-off-%")
		b.ReportMetric(off(trashed[k]), p+"-trashed-off-%")
		b.ReportMetric(100*huge[k], p+"-huge-%")
	}
	b.ReportMetric(0, "ns/op")
}
