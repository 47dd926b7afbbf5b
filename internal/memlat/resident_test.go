package memlat

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestNotResident: mincore counts the pages of a fresh mapping as out of
// memory until they are read, and Warm finds none of a chain's out, its
// pages having been written when it was mapped.
func TestNotResident(t *testing.T) {
	mem, err := unix.Mmap(-1, 0, 16*smallBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	vec := make([]byte, 16)
	if n, err := notResident(mem, vec); err != nil || n != 16 {
		t.Fatalf("a fresh mapping of 16 pages: %d out, %v; want 16", n, err)
	}
	for i := 0; i < 8*smallBytes; i += smallBytes {
		mem[i] = 1
	}
	if n, err := notResident(mem, vec); err != nil || n != 8 {
		t.Fatalf("8 of 16 pages written: %d out, %v; want 8", n, err)
	}
	c, err := NewDRAMChase(4 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free()
	if in, out, err := c.Warm(); err != nil || in != 0 || out != 0 {
		t.Errorf("a chain just mapped: %d pages read back in, %d out, %v; want none", in, out, err)
	}
}

// TestHugeReadsAgain: a chain in 4 KiB pages has no huge share, and one
// in 2 MiB pages reads the share it has now, not the one it was mapped
// with: freeing a 4 KiB page inside its first huge page (which the kernel
// must split to do) lowers it by that huge page.
func TestHugeReadsAgain(t *testing.T) {
	small, err := NewChase(4<<20, Pages4K)
	if err != nil {
		t.Fatal(err)
	}
	defer small.Free()
	if h, err := small.Huge("/"); err != nil || h != 0 {
		t.Errorf("a chain in 4 KiB pages: huge share %v, %v; want 0", h, err)
	}
	const size = 8 << 20
	big, err := NewChase(size, Pages2M)
	if err != nil {
		t.Fatal(err)
	}
	defer big.Free()
	h0, err := big.Huge("/")
	if err != nil || h0 != big.HugeFraction {
		t.Fatalf("a chain just mapped in 2 MiB pages: huge share %v, %v; want the %v it was mapped with",
			h0, err, big.HugeFraction)
	}
	if h0 == 0 {
		t.Skipf("the kernel gave the 2 MiB chain no huge pages (transparent huge pages off or none free): nothing to split")
	}
	// The chain is not walked after this: its first page now reads zeros.
	if err := unix.Madvise(big.buf.mem[:smallBytes], unix.MADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	if h, err := big.Huge("/"); err != nil || h != h0-float64(hugeBytes)/size {
		t.Errorf("one huge page split: huge share %v, %v; want %v", h, err, h0-float64(hugeBytes)/size)
	}
}
