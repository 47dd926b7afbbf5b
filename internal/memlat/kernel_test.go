package memlat

import (
	"math"
	"testing"
	"unsafe"
)

// TestKernelsHost runs every bandwidth kernel this CPU has over a small
// buffer and checks what each wrote: write zeroes its array, copy
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
					want := map[string]float64{OpRead: -1, OpWrite: 0, OpCopy: x[i], OpTriad: x[i] + triadScalar*y[i]}[op]
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
