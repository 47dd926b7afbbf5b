package hugepages

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/owner"
	"github.com/numalab/numalab/internal/sysfs"
)

// fakeRoot is a root whose pool holds pool pages.
func fakeRoot(t *testing.T, pool int) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "proc/sys/vm"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, root, pool)
	if err := os.WriteFile(filepath.Join(root, "proc/meminfo"),
		[]byte("MemTotal: 100 kB\nMemFree:  2048000 kB\n"), 0o644); err != nil {
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
	if !errors.Is(err, ErrCannot) ||
		!strings.Contains(err.Error(), "the kernel made 0 of the 5 2 MiB pages asked for free (2000 MiB of memory free") {
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
	m, err := parseMeminfo(strings.NewReader("MemFree: 2048 kB\nHugePages_Total:     128\n" +
		"HugePages_Free:       56\nHugePages_Rsvd:       50\nHugePages_Surp:      128\n"))
	if err != nil || m.total != 128 || m.available() != 6 || m.freeKB != 2048 {
		t.Errorf("meminfo %+v (%v); want 128 pages, 6 available, 2048 kB free", m, err)
	}
}

// TestReserveRefusals: a pool that cannot be read, and a count that is not
// positive, are refused saying why.
func TestReserveRefusals(t *testing.T) {
	if _, err := Reserve(t.TempDir(), 5); !errors.Is(err, ErrCannot) ||
		!strings.Contains(err.Error(), "reading /proc/sys/vm/nr_hugepages") {
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

// TestReclaim: the pages of a reservation whose process is gone are given
// back and its marker removed; a live process's reservation is kept.
func TestReclaim(t *testing.T) {
	root := fakeRoot(t, 20)
	child := exec.Command("true")
	if err := child.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	self, err := owner.Self(sysfs.New("/"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, markerDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]marker{
		"reservation-gone.json": {Owner: owner.Process{Host: host, PID: child.Process.Pid, Start: 1}, Pages: 6},
		"reservation-live.json": {Owner: self, Pages: 4},
	} {
		b, _ := json.Marshal(m)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := lockPool(root, func(dir string) error { return reclaim(root, dir) }); err != nil {
		t.Fatal(err)
	}
	if n, _ := readPool(root); n != 14 {
		t.Errorf("pool %d after reclaiming, want 14: the gone process's 6 given back", n)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(left) != 1 ||
		filepath.Base(left[0]) != "reservation-live.json" {
		t.Errorf("markers left %q, want the live process's alone", left)
	}
}

// TestKilledReservationHost: a process that reserves a page of this
// machine's pool and is killed (SIGKILL) before it releases leaves the
// page reserved, and the next reservation gives it back; it needs root.
func TestKilledReservationHost(t *testing.T) {
	if os.Getenv("NUMALAB_HUGEPAGES_CHILD") == "1" {
		if _, err := Reserve("/", 1); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("reserved")
		time.Sleep(time.Minute)
		os.Exit(1)
	}
	if os.Geteuid() != 0 {
		t.Skip("reserving 2 MiB pages needs root")
	}
	before, err := readPool("/")
	if err != nil {
		t.Skip(err)
	}
	child := exec.Command(os.Args[0], "-test.run", "^TestKilledReservationHost$")
	child.Env = append(os.Environ(), "NUMALAB_HUGEPAGES_CHILD=1")
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	child.Process.Kill()
	child.Wait()
	if line != "reserved\n" {
		t.Fatalf("the child did not reserve: %q", line)
	}
	if now, _ := readPool("/"); now < before+1 {
		t.Fatalf("pool %d after the child was killed, %d before: its page is not reserved", now, before)
	}
	marked := func() bool {
		names, _ := filepath.Glob(filepath.Join("/", markerDir, "reservation-*.json"))
		for _, name := range names {
			var m marker
			b, _ := os.ReadFile(name)
			if json.Unmarshal(b, &m) == nil && m.Owner.PID == child.Process.Pid {
				return true
			}
		}
		return false
	}
	if !marked() {
		t.Fatalf("no marker names the killed child %d", child.Process.Pid)
	}
	r, err := Reserve("/", 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Release(); err != nil {
		t.Fatal(err)
	}
	if after, _ := readPool("/"); after != before || marked() {
		t.Errorf("pool %d after the next reservation and release, %d before the killed one; its marker left: %v",
			after, before, marked())
	}
}

// TestHeldBy: a reservation's pages are held by the process its marker
// names until it is released.
func TestHeldBy(t *testing.T) {
	root := fakeRoot(t, 10)
	write(t, root, 15)
	r := &Reservation{root: root, Before: 10, Pages: 5}
	if err := lockPool(root, r.writeMarker); err != nil {
		t.Fatal(err)
	}
	if n, err := HeldBy(root, os.Getpid()); err != nil || n != 5 {
		t.Errorf("held by this process: %d (%v), want 5", n, err)
	}
	if n, err := HeldBy(root, os.Getpid()+1); err != nil || n != 0 {
		t.Errorf("held by another process: %d (%v), want 0", n, err)
	}
	if err := r.Release(); err != nil {
		t.Fatal(err)
	}
	if n, err := HeldBy(root, os.Getpid()); err != nil || n != 0 {
		t.Errorf("held after release: %d (%v), want 0", n, err)
	}
}
