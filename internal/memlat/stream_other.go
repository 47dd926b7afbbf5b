//go:build !amd64

package memlat

import (
	"runtime"
	"unsafe"
)

// hostKernels off amd64 is one kernel in plain Go: 8-byte loads and
// ordinary (write-allocating) stores, so its figures are what a scalar
// loop draws, below what vector loads and non-temporal stores would.
func hostKernels() []kernel {
	return []kernel{{Name: "Go scalar", Bits: 64, read: goRead, write: goWrite, copy: goCopy, triad: goTriad}}
}

func goRead(p unsafe.Pointer, n int) { runtime.KeepAlive(readSum(p, n/8)) }

func goWrite(p unsafe.Pointer, n int, v uint64) {
	for i, w := 0, unsafe.Slice((*uint64)(p), n/8); i < len(w); i++ {
		w[i] = v
	}
}

func goCopy(dst, src unsafe.Pointer, n int) {
	copy(unsafe.Slice((*byte)(dst), n), unsafe.Slice((*byte)(src), n))
}

func goTriad(a, b, c unsafe.Pointer, s float64, n int) {
	x, y, z := unsafe.Slice((*float64)(a), n/8), unsafe.Slice((*float64)(b), n/8), unsafe.Slice((*float64)(c), n/8)
	for i := range x {
		x[i] = y[i] + s*z[i]
	}
}
