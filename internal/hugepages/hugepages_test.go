package hugepages

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeRoot is a root whose pool holds pool pages.
func fakeRoot(t *testing.T, pool int) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "proc/sys/vm"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, root, pool)
	if err := os.WriteFile(filepath.Join(root, "proc/meminfo"), []byte("MemTotal: 100 kB\nMemFree:  2048000 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func write(t *testing.T, root string, n int) {
	t.Helper()
	if err := writePool(root, n); err != nil {
		t.Fatal(err)
	}
}

// TestReserveRelease: the pool is raised above its size with surplus
// pages, and a kernel that frees no page (this fake one) has the
// reservation given back, saying so; a release lowers the pool by what was
// added, keeping what another program reserved meanwhile.
func TestReserveRelease(t *testing.T) {
	root := fakeRoot(t, 10)
	_, err := Reserve(root, 5)
	if !errors.Is(err, ErrCannot) || !strings.Contains(err.Error(), "the kernel made 0 of the 5 2 MiB pages asked for free (2000 MiB of memory free") {
		t.Fatalf("a kernel that frees none: %v", err)
	}
	if n, _ := readPool(root); n != 10 {
		t.Fatalf("pool %d after a refused reservation, want 10 again", n)
	}
	r := &Reservation{root: root, Before: 10, Pages: 5}
	write(t, root, 17) // 15, and another program's 2
	if err := r.Release(); err != nil {
		t.Fatal(err)
	}
	if err := r.Release(); err != nil {
		t.Fatal(err)
	}
	if n, _ := readPool(root); n != 12 {
		t.Fatalf("pool after release %d, want 12: the other program's 2 kept", n)
	}
	if Pages(3<<20) != 2 || Pages(4<<20) != 2 {
		t.Errorf("Pages(3 MiB) %d, Pages(4 MiB) %d; want 2 and 2", Pages(3<<20), Pages(4<<20))
	}
	m, err := parseMeminfo(strings.NewReader("MemFree: 2048 kB\nHugePages_Total:     128\nHugePages_Free:       56\nHugePages_Rsvd:       50\nHugePages_Surp:      128\n"))
	if err != nil || m.total != 128 || m.available() != 6 || m.freeKB != 2048 {
		t.Errorf("meminfo %+v (%v); want 128 pages, 6 available, 2048 kB free", m, err)
	}
}

// TestReserveRefusals: a pool that cannot be read, and a count that is not
// positive, are refused saying why.
func TestReserveRefusals(t *testing.T) {
	if _, err := Reserve(t.TempDir(), 5); !errors.Is(err, ErrCannot) || !strings.Contains(err.Error(), "reading /proc/sys/vm/nr_hugepages") {
		t.Errorf("no pool file: %v", err)
	}
	if _, err := Reserve(fakeRoot(t, 0), 0); err == nil || !strings.Contains(err.Error(), "not a positive count") {
		t.Errorf("0 pages: %v", err)
	}
}

// TestReserveHost reserves one page of this machine's pool and gives it
// back; it needs root.
func TestReserveHost(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("reserving 2 MiB pages needs root")
	}
	before, err := readPool("/")
	if err != nil {
		t.Skip(err)
	}
	r, err := Reserve("/", 1)
	if err != nil {
		t.Fatalf("reserving one page as root: %v", err)
	}
	if err := r.Release(); err != nil {
		t.Fatal(err)
	}
	if after, _ := readPool("/"); after != before {
		t.Errorf("pool %d after release, %d before", after, before)
	}
}
