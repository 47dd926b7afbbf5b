package memlat

import (
	"fmt"
	"math/rand/v2"
	"unsafe"
)

// Chain variants.
const (
	// TLBLocal keeps the chain inside windows of WindowBytes (256 KiB, as
	// multichase's default TLB locality): it visits every slot of one window
	// in random order before moving to the next, so few accesses miss the
	// TLB. It measures the caches and DRAM without most of the page walks.
	TLBLocal = "tlb-local"
	// Random is one random cycle over the whole working set: every access
	// may miss the TLB too, as a B-tree far larger than the TLB's reach does.
	Random = "random"
)

// Chain shape defaults.
const (
	// DefaultSlotBytes is the distance between chain elements. Each slot
	// holds one pointer, at a random cache line within the slot, so the
	// adjacent-line and next-line prefetchers fetch lines the chain never
	// uses (multichase's default stride is 256 B for the same reason).
	DefaultSlotBytes = 256
	// DefaultWindowBytes is the TLB-local window: 64 pages of 4 KiB.
	DefaultWindowBytes = 256 << 10
	lineBytes          = 64
)

// sattolo returns a uniformly random cyclic permutation of 0..n-1 (one
// cycle through every element): next[i] is the element after i.
func sattolo(n int, rng *rand.Rand) []uint32 {
	next := make([]uint32, n)
	for i := range next {
		next[i] = uint32(i)
	}
	for i := n - 1; i > 0; i-- {
		j := rng.IntN(i) // j < i: what makes it one cycle (Sattolo 1986)
		next[i], next[j] = next[j], next[i]
	}
	return next
}

// chainOrder returns the order in which a chain of n slots visits them:
// windows of w slots (the last may be shorter) are visited in a random
// cyclic order, and inside each window the slots follow a random cycle
// (Sattolo), entered at a random slot. With w >= n it is one random cycle
// over all slots. Every slot appears exactly once.
func chainOrder(n, w int, rng *rand.Rand) []uint32 {
	if w <= 0 || w > n {
		w = n
	}
	nw := (n + w - 1) / w
	order := make([]uint32, 0, n)
	wnext := sattolo(nw, rng)
	win := 0
	for range nw {
		lo := win * w
		m := min(w, n-lo)
		next := sattolo(m, rng)
		s := rng.IntN(m)
		for range m {
			order = append(order, uint32(lo+s))
			s = int(next[s])
		}
		win = int(wnext[win])
	}
	return order
}

// slotOffset is the byte offset of slot i's pointer inside its slot: a
// random whole cache line, fixed by the seed.
func slotOffset(i uint32, slot int, seed uint64) int {
	lines := slot / lineBytes
	if lines <= 1 {
		return 0
	}
	return int(mix64(seed^uint64(i)*0x9e3779b97f4a7c15) % uint64(lines) * lineBytes)
}

// mix64 is SplitMix64's finaliser.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// chain is a pointer-chasing cycle written into mmap'd memory.
type chain struct {
	slots int
	// starts are 16 pointers spaced evenly along the cycle (slots/16 steps
	// apart), for interleaving independent chases on the same cycle.
	starts [16]unsafe.Pointer
}

// buildChain writes a cycle over the first size bytes of mem: slot i's
// pointer holds the address of the next slot's pointer. mem must stay
// mapped while the chain is chased.
func buildChain(mem []byte, size int64, slot, window int, seed uint64) (*chain, error) {
	if slot < 8 || slot%8 != 0 {
		return nil, fmt.Errorf("building chain: slot of %d bytes is not a positive multiple of 8", slot)
	}
	if size > int64(len(mem)) {
		return nil, fmt.Errorf("building chain: %d bytes wanted, only %d mapped", size, len(mem))
	}
	n := int(size / int64(slot))
	if n < 2 {
		return nil, fmt.Errorf("building chain: %d bytes hold fewer than 2 slots of %d bytes", size, slot)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	order := chainOrder(n, window/slot, rng)
	base := unsafe.Pointer(unsafe.SliceData(mem))
	addr := func(i uint32) unsafe.Pointer {
		return unsafe.Add(base, int(i)*slot+slotOffset(i, slot, seed))
	}
	for k, i := range order {
		j := order[(k+1)%n]
		// Stored as an integer: no write barrier, and the GC never scans
		// this memory anyway (it is outside the Go heap).
		*(*uintptr)(addr(i)) = uintptr(addr(j))
	}
	c := &chain{slots: n}
	for k := range c.starts {
		c.starts[k] = addr(order[k*n/len(c.starts)])
	}
	return c, nil
}
