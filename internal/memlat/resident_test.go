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
