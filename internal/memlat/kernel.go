package memlat

import (
	"fmt"
	"math"
	"unsafe"
)

// Bandwidth operations, as STREAM names them.
const (
	OpRead  = "read"  // loads of one array
	OpWrite = "write" // stores to one array
	OpCopy  = "copy"  // a[i] = b[i]
	OpTriad = "triad" // a[i] = b[i] + s·c[i], float64
)

// bwOps are the operations the probe measures, in order.
var bwOps = []string{OpRead, OpWrite, OpCopy, OpTriad}

// kernel is one register width's bandwidth loops (stream_amd64.s, or
// plain Go elsewhere). Pointers are 64-byte aligned, lengths positive
// multiples of 256 bytes.
type kernel struct {
	Name string // "AVX-512", "AVX2", "SSE2", "Go scalar"
	Bits int    // register width
	// NonTemporal stores bypass the caches: a store does not first read
	// its line (no write-allocate), so the bytes STREAM counts are the
	// bytes the memory moves.
	NonTemporal bool
	read        func(p unsafe.Pointer, n int)
	write       func(p unsafe.Pointer, n int, v uint64)
	copy        func(dst, src unsafe.Pointer, n int)
	triad       func(a, b, c unsafe.Pointer, s float64, n int)
}

// widest is the kernel the probe uses: the widest this CPU runs.
func widest() kernel { return hostKernels()[0] }

// Label says what the kernel loads and stores with, for stored runs and
// tables: "AVX2 (256-bit loads, non-temporal stores)".
func (k kernel) Label() string {
	stores := "cached stores"
	if k.NonTemporal {
		stores = "non-temporal stores"
	}
	return fmt.Sprintf("%s (%d-bit loads, %s)", k.Name, k.Bits, stores)
}

// arrays is how many arrays op streams through. A pass moves every byte
// of each once; STREAM counts them all (copy 2, triad 3 per element) and
// so does the probe.
func arrays(op string) int {
	switch op {
	case OpCopy:
		return 2
	case OpTriad:
		return 3
	}
	return 1
}

// triadScalar is the s of the triad.
const triadScalar = 3.0

// fillBits is what write stores and the arrays hold before an operation
// runs: float64 1.0, so that copy and triad never store zeros, which the
// memory behind this guest writes faster than other data (NT stores of
// zeros 31 GB/s, of other values 19-21, one thread, in C).
var fillBits = math.Float64bits(1)

// run does op over n bytes at off in each of a (arrays(op) of them;
// the first is the one written).
func (k kernel) run(op string, a []unsafe.Pointer, off, n int) {
	switch op {
	case OpRead:
		k.read(unsafe.Add(a[0], off), n)
	case OpWrite:
		k.write(unsafe.Add(a[0], off), n, fillBits)
	case OpCopy:
		k.copy(unsafe.Add(a[0], off), unsafe.Add(a[1], off), n)
	case OpTriad:
		k.triad(unsafe.Add(a[0], off), unsafe.Add(a[1], off), unsafe.Add(a[2], off), triadScalar, n)
	default:
		panic("memlat: no bandwidth operation " + op)
	}
}
