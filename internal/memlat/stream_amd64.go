package memlat

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The kernels of stream_amd64.s, 256 bytes (SSE2: 128) an iteration.
//
//go:noescape
func readAVX512(p unsafe.Pointer, n int)

//go:noescape
func writeAVX512(p unsafe.Pointer, n int, v uint64)

//go:noescape
func copyAVX512(dst, src unsafe.Pointer, n int)

//go:noescape
func triadAVX512(a, b, c unsafe.Pointer, s float64, n int)

//go:noescape
func readAVX2(p unsafe.Pointer, n int)

//go:noescape
func writeAVX2(p unsafe.Pointer, n int, v uint64)

//go:noescape
func copyAVX2(dst, src unsafe.Pointer, n int)

//go:noescape
func triadAVX2(a, b, c unsafe.Pointer, s float64, n int)

//go:noescape
func readSSE2(p unsafe.Pointer, n int)

//go:noescape
func writeSSE2(p unsafe.Pointer, n int, v uint64)

//go:noescape
func copySSE2(dst, src unsafe.Pointer, n int)

//go:noescape
func triadSSE2(a, b, c unsafe.Pointer, s float64, n int)

// hostKernels are the kernels this CPU runs, widest first: AVX-512 where
// CPUID and the OS (XCR0) say its registers are usable, then AVX2, then
// SSE2, which every amd64 CPU has.
func hostKernels() []kernel {
	var ks []kernel
	if cpu.X86.HasAVX512F {
		ks = append(ks, kernel{Name: "AVX-512", Bits: 512, NonTemporal: true,
			read: readAVX512, write: writeAVX512, copy: copyAVX512, triad: triadAVX512})
	}
	if cpu.X86.HasAVX2 {
		ks = append(ks, kernel{Name: "AVX2", Bits: 256, NonTemporal: true,
			read: readAVX2, write: writeAVX2, copy: copyAVX2, triad: triadAVX2})
	}
	return append(ks, kernel{Name: "SSE2", Bits: 128, NonTemporal: true,
		read: readSSE2, write: writeSSE2, copy: copySSE2, triad: triadSSE2})
}
