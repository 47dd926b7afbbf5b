package memlat

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func TestSattoloIsOneCycle(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 64, 1000, 4099} {
		for seed := range uint64(5) {
			next := sattolo(n, rand.New(rand.NewPCG(seed, 1)))
			seen := make([]bool, n)
			i := 0
			for step := range n {
				if seen[i] {
					t.Fatalf("n=%d seed=%d: slot %d revisited after %d steps", n, seed, i, step)
				}
				seen[i] = true
				i = int(next[i])
			}
			if i != 0 {
				t.Fatalf("n=%d seed=%d: after n steps at %d, not back at 0", n, seed, i)
			}
		}
	}
}

func TestChainOrderCoversEverySlotWithinWindows(t *testing.T) {
	for _, tc := range []struct{ n, w int }{{10, 10}, {10, 3}, {1024, 64}, {1000, 64}, {4096, 1 << 20}, {5, 0}} {
		order := chainOrder(tc.n, tc.w, rand.New(rand.NewPCG(7, 7)))
		if len(order) != tc.n {
			t.Fatalf("n=%d w=%d: order has %d slots", tc.n, tc.w, len(order))
		}
		seen := make([]bool, tc.n)
		w := tc.w
		if w <= 0 || w > tc.n {
			w = tc.n
		}
		// The chain stays inside a window until it has visited all of it,
		// and never comes back to a window.
		done := map[int]bool{}
		inWin, cur := 0, int(order[0])/w
		for k, s := range order {
			if seen[s] {
				t.Fatalf("n=%d w=%d: slot %d twice", tc.n, tc.w, s)
			}
			seen[s] = true
			if win := int(s) / w; win != cur {
				if want := min(w, tc.n-cur*w); inWin != want {
					t.Fatalf("n=%d w=%d: position %d left window %d after %d of its %d slots", tc.n, tc.w, k, cur, inWin, want)
				}
				if done[win] {
					t.Fatalf("n=%d w=%d: position %d came back to window %d", tc.n, tc.w, k, win)
				}
				done[cur] = true
				cur, inWin = win, 0
			}
			inWin++
		}
	}
}

func TestChainOrderIsRandom(t *testing.T) {
	a := chainOrder(1000, 1000, rand.New(rand.NewPCG(1, 1)))
	b := chainOrder(1000, 1000, rand.New(rand.NewPCG(2, 2)))
	same, seq := 0, 0
	for i := range a {
		if a[i] == b[i] {
			same++
		}
		if i > 0 && a[i] == a[i-1]+1 {
			seq++
		}
	}
	if same > 20 || seq > 20 {
		t.Fatalf("orders look predictable: %d positions equal across seeds, %d sequential steps", same, seq)
	}
}

// TestBuildChainIsOneCycle writes chains into mmap'd memory and follows
// the pointers: one cycle through every slot, each pointer on a line
// boundary inside its own slot.
func TestBuildChainIsOneCycle(t *testing.T) {
	mem, err := unix.Mmap(-1, 0, 1<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	base := uintptr(unsafe.Pointer(&mem[0]))
	for _, tc := range []struct {
		size         int64
		slot, window int
	}{{1 << 20, 256, 256 << 10}, {1 << 20, 256, 1 << 20}, {100 << 10, 64, 4 << 10}, {3 << 10, 128, 1 << 30}} {
		c, err := buildChain(mem, tc.size, tc.slot, tc.window, 42)
		if err != nil {
			t.Fatal(err)
		}
		n := int(tc.size) / tc.slot
		if c.slots != n {
			t.Fatalf("%+v: %d slots, want %d", tc, c.slots, n)
		}
		seen := make([]bool, n)
		p := uintptr(c.starts[0])
		for step := range n {
			off := p - base
			slot := int(off) / tc.slot
			if off%lineBytes != 0 || slot >= n {
				t.Fatalf("%+v: step %d: pointer %#x at offset %d outside the chain or off a line", tc, step, p, off)
			}
			if seen[slot] {
				t.Fatalf("%+v: slot %d revisited at step %d", tc, slot, step)
			}
			seen[slot] = true
			p = *(*uintptr)(unsafe.Pointer(&mem[off]))
		}
		if p != uintptr(c.starts[0]) {
			t.Fatalf("%+v: after %d steps not back at the start", tc, n)
		}
		// chase1 agrees with the walk: n loads bring it back.
		if got := chase1(c.starts[0], n/16*16); n%16 == 0 && got != c.starts[0] {
			t.Fatalf("%+v: chase1 did not return to the start after a lap", tc)
		}
		// Start points are spread along the cycle: all distinct.
		m := map[unsafe.Pointer]bool{}
		for _, s := range c.starts {
			m[s] = true
		}
		if n >= 16 && len(m) != 16 {
			t.Fatalf("%+v: %d distinct start points, want 16", tc, len(m))
		}
	}
}

func TestBuildChainErrors(t *testing.T) {
	mem := make([]byte, 4096)
	for _, tc := range []struct {
		size int64
		slot int
	}{{8192, 64}, {4096, 12}, {4096, 0}, {64, 64}} {
		if _, err := buildChain(mem, tc.size, tc.slot, 4096, 1); err == nil {
			t.Errorf("buildChain(size %d, slot %d): no error", tc.size, tc.slot)
		}
	}
}

func TestChaseKVisitsDistinctLines(t *testing.T) {
	mem, err := unix.Mmap(-1, 0, 64<<10, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	c, err := buildChain(mem, 64<<10, 64, 64<<10, 3) // 1024 slots, 64 apart
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 2, 4, 8, 16} {
		ps := c.starts
		var cur [16]unsafe.Pointer
		for j := range k {
			cur[j] = ps[j*16/k]
		}
		// 1024/k loads per chain: together one lap, each chain ends where
		// the next one started.
		chaseK(&cur, k, 1024/k)
		for j := range k {
			if want := ps[((j+1)%k)*16/k]; cur[j] != want {
				t.Fatalf("k=%d: chain %d did not end at the next chain's start", k, j)
			}
		}
	}
}
