package place

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Tests named Host touch this machine: they pin the test's own thread, set
// its memory policy and map memory. They tolerate any machine (one node or
// many, any CPU numbering). Each locks its goroutine to its OS thread and
// never unlocks it, so the Go runtime retires the thread, with whatever
// affinity and policy it had, when the test returns.

func TestModeValuesLinux(t *testing.T) {
	for m, want := range map[Mode]int{Default: unix.MPOL_DEFAULT, Preferred: unix.MPOL_PREFERRED, Bind: unix.MPOL_BIND,
		Interleave: unix.MPOL_INTERLEAVE, Local: unix.MPOL_LOCAL, PreferredMany: unix.MPOL_PREFERRED_MANY} {
		if int(m) != want {
			t.Errorf("%v = %d, want MPOL value %d", m, int(m), want)
		}
	}
}

func TestPinHost(t *testing.T) {
	runtime.LockOSThread()
	allowed, err := Affinity()
	if err != nil {
		t.Fatal(err)
	}
	if len(allowed) == 0 {
		t.Fatal("Affinity returned no CPUs")
	}
	cpu := allowed[0] // CPU 0 where this process may use it
	if err := Pin([]int{cpu}); err != nil {
		t.Fatal(err)
	}
	got, err := Affinity()
	if err != nil || !slices.Equal(got, []int{cpu}) {
		t.Fatalf("after Pin([%d]): Affinity = %v, %v", cpu, got, err)
	}
	// The thread runs where it is pinned.
	for range 100 {
		runtime.Gosched()
		if c, err := getcpu(); err == nil && c != cpu {
			t.Fatalf("pinned to CPU %d, running on CPU %d", cpu, c)
		}
	}
	if err := Pin(allowed); err != nil {
		t.Fatalf("restoring affinity %s: %v", FormatCPUs(allowed), err)
	}

	// A CPU this process may not use: refused, naming it, affinity unchanged.
	bad := 1023
	for slices.Contains(allowed, bad) {
		bad--
	}
	err = Pin([]int{allowed[0], bad})
	if err == nil || !strings.Contains(err.Error(), FormatCPUs([]int{bad})) {
		t.Errorf("Pin with CPU %d: error %v, want one naming CPU %d", bad, err, bad)
	}
	if got, _ := Affinity(); !slices.Equal(got, allowed) {
		t.Errorf("after a refused Pin, affinity = %s, want %s unchanged", FormatCPUs(got), FormatCPUs(allowed))
	}
	err = Pin([]int{bad})
	if !errors.Is(err, unix.EINVAL) || !strings.Contains(err.Error(), "none of them") {
		t.Errorf("Pin([%d]) error = %v, want EINVAL saying none is allowed", bad, err)
	}
	if err := Pin(nil); err == nil {
		t.Error("Pin(nil) succeeded")
	}
	if err := Pin([]int{4096}); err == nil || !strings.Contains(err.Error(), "4096") {
		t.Errorf("Pin([4096]) error = %v", err)
	}
}

func TestPinPIDHost(t *testing.T) {
	runtime.LockOSThread()
	tid := unix.Gettid()
	allowed, err := AffinityPID(tid)
	if err != nil {
		t.Fatal(err)
	}
	if err := PinPID(tid, allowed[:1]); err != nil {
		t.Fatal(err)
	}
	if got, err := Affinity(); err != nil || !slices.Equal(got, allowed[:1]) {
		t.Errorf("after PinPID(own tid): Affinity = %v, %v", got, err)
	}
	if err := PinPID(0, allowed); err == nil {
		t.Error("PinPID(0) succeeded; 0 would mean the caller")
	}
}

// numaOrSkip skips when this kernel or container refuses the NUMA calls,
// and returns the memory nodes this process may use.
func numaOrSkip(t *testing.T) []int {
	t.Helper()
	mems, err := MemsAllowed()
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		t.Skipf("NUMA system calls unavailable here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(mems) == 0 {
		t.Fatal("MemsAllowed returned no nodes")
	}
	return mems
}

func TestMemPolicyHost(t *testing.T) {
	runtime.LockOSThread()
	mems := numaOrSkip(t)
	node := mems[len(mems)-1] // on a multi-node machine, not the first node
	if err := SetMemPolicy(Policy{Mode: Bind, Nodes: []int{node}}); err != nil {
		t.Fatal(err)
	}
	p, err := MemPolicy()
	if err != nil || p.Mode != Bind || !slices.Equal(p.Nodes, []int{node}) {
		t.Fatalf("after binding to node %d: MemPolicy = %v, %v", node, p, err)
	}
	if err := SetMemPolicy(Policy{Mode: Interleave, Nodes: mems}); err != nil {
		t.Fatal(err)
	}
	if p, err := MemPolicy(); err != nil || p.Mode != Interleave || !slices.Equal(p.Nodes, mems) {
		t.Errorf("after interleaving over %v: MemPolicy = %v, %v", mems, p, err)
	}
	if err := SetMemPolicy(Policy{Mode: Preferred, Nodes: []int{node}}); err != nil {
		t.Fatal(err)
	}
	if p, err := MemPolicy(); err != nil || p.Mode != Preferred || !slices.Equal(p.Nodes, []int{node}) {
		t.Errorf("after preferring node %d: MemPolicy = %v, %v", node, p, err)
	}

	// A node that does not exist: a clear error, policy unchanged.
	missing := 63
	for slices.Contains(mems, missing) {
		missing--
	}
	err = SetMemPolicy(Policy{Mode: Bind, Nodes: []int{missing}})
	if err == nil || !strings.Contains(err.Error(), "bind") ||
		!strings.Contains(err.Error(), "node "+FormatCPUs([]int{missing})) {
		t.Errorf("binding to node %d: error %v, want one naming the policy and the node", missing, err)
	}
	if p, _ := MemPolicy(); p.Mode != Preferred {
		t.Errorf("after a refused bind, policy = %v, want preferred unchanged", p)
	}
	for _, bad := range []Policy{{Mode: Default, Nodes: []int{0}}, {Mode: Bind},
		{Mode: Preferred, Nodes: []int{0, 1}}, {Mode: 99}} {
		if err := SetMemPolicy(bad); err == nil {
			t.Errorf("SetMemPolicy(%v) succeeded", bad)
		}
	}

	if err := SetMemPolicy(Policy{Mode: Default}); err != nil {
		t.Fatal(err)
	}
	if p, err := MemPolicy(); err != nil || p.Mode != Default || p.Nodes != nil {
		t.Errorf("after reset: MemPolicy = %v, %v", p, err)
	}
}

// mapPages maps n anonymous pages outside the Go heap.
func mapPages(t *testing.T, n int) []byte {
	t.Helper()
	b, err := unix.Mmap(-1, 0, n*os.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(b) })
	return b
}

func touch(b []byte) {
	for i := 0; i < len(b); i += os.Getpagesize() {
		b[i] = 1
	}
}

func TestPageNodesHost(t *testing.T) {
	runtime.LockOSThread()
	mems := numaOrSkip(t)
	node := mems[len(mems)-1]
	const n = 16
	b := mapPages(t, n)
	addr := uintptr(unsafePointer(b))

	st, err := PageNodes(addr, len(b))
	if err != nil {
		t.Fatal(err)
	}
	if s := SummarizePages(st); s.Pages != n || s.Absent != n {
		t.Errorf("before touching: %v, want %d pages all absent", s, n)
	}

	if err := SetMemPolicy(Policy{Mode: Bind, Nodes: []int{node}}); err != nil {
		t.Fatal(err)
	}
	touch(b)
	if err := SetMemPolicy(Policy{Mode: Default}); err != nil {
		t.Fatal(err)
	}
	st, err = PageNodes(addr, len(b))
	if err != nil {
		t.Fatal(err)
	}
	s := SummarizePages(st)
	if s.Pages != n || s.PerNode[node] != n {
		t.Errorf("after touching under bind:%d: %v, want all %d pages on node %d", node, s, n, node)
	}
	t.Logf("16 pages touched under bind:%d: %v", node, s)

	// An unaligned range covers every page it touches.
	if st, err := PageNodes(addr+100, os.Getpagesize()); err != nil || len(st) != 2 {
		t.Errorf("PageNodes(addr+100, one page) = %v, %v; want 2 entries", st, err)
	}
	if _, err := PageNodes(addr, 0); err == nil {
		t.Error("PageNodes with length 0 succeeded")
	}
}

func TestMbindHost(t *testing.T) {
	runtime.LockOSThread()
	mems := numaOrSkip(t)
	node := mems[0]
	const n = 16
	b := mapPages(t, n)
	addr := uintptr(unsafePointer(b))
	if err := Mbind(addr, len(b), Policy{Mode: Bind, Nodes: []int{node}}, false); err != nil {
		t.Fatal(err)
	}
	p, err := PolicyAt(addr)
	if err != nil || p.Mode != Bind || !slices.Equal(p.Nodes, []int{node}) {
		t.Errorf("PolicyAt after Mbind = %v, %v; want bind:%d", p, err, node)
	}
	touch(b)
	st, err := PageNodes(addr, len(b))
	if err != nil {
		t.Fatal(err)
	}
	if s := SummarizePages(st); s.PerNode[node] != n {
		t.Errorf("after Mbind to node %d and touching: %v", node, s)
	}
	if err := Mbind(addr+1, len(b), Policy{Mode: Bind, Nodes: []int{node}}, false); err == nil ||
		!strings.Contains(err.Error(), "aligned") {
		t.Errorf("Mbind of an unaligned address: %v", err)
	}
	missing := 63
	for slices.Contains(mems, missing) {
		missing--
	}
	err = Mbind(addr, len(b), Policy{Mode: Interleave, Nodes: []int{node, missing}}, true)
	if err == nil || !strings.Contains(err.Error(), "interleave") ||
		!strings.Contains(err.Error(), "node "+FormatCPUs([]int{missing})) {
		t.Errorf("Mbind to missing node %d: %v", missing, err)
	}
}

func TestFilePageNodesHost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, make([]byte, 10*4096+1), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := FilePageNodes(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Pages != 11 || s.Absent != 0 || len(s.PerNode) == 0 {
		t.Errorf("FilePageNodes = %+v, want 11 pages all on some node", s)
	}
	if _, err := FilePageNodes(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing file gave no error")
	}
}

// TestMoveFilePagesHost moves a cached file's pages to the last memory node
// this process may use, on the test's temporary directory and on tmpfs
// (/dev/shm), where dropping and re-reading the file would move nothing.
func TestMoveFilePagesHost(t *testing.T) {
	mems := numaOrSkip(t)
	node := mems[len(mems)-1]
	dirs := []string{t.TempDir()}
	if shm, err := os.MkdirTemp("/dev/shm", "place-test-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(shm) })
		dirs = append(dirs, shm)
	} else {
		t.Logf("no tmpfs case: %v", err)
	}
	for _, dir := range dirs {
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, make([]byte, 64*4096), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := MoveFilePages(path, node)
		if err != nil {
			t.Fatalf("%s (tmpfs %v): %v", dir, isTmpfs(dir), err)
		}
		if s.Pages != 64 || s.PerNode[node] != 64 {
			t.Errorf("%s (tmpfs %v): after moving to node %d: %v, want all 64 pages there", dir, isTmpfs(dir), node, s)
		}
		t.Logf("%s (tmpfs %v): %v", dir, isTmpfs(dir), s)
	}
	// Pages this process maps a second time cannot move: a few are
	// tolerated, more are an error naming them.
	path := filepath.Join(t.TempDir(), "mapped")
	if err := os.WriteFile(path, make([]byte, 200*4096), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ mapped, want int }{{1, 199}, {10, 190}} {
		if _, err := MoveFilePages(path, mems[0]); err != nil { // every page away from node
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := unix.Mmap(int(f.Fd()), 0, c.mapped*4096, unix.PROT_READ, unix.MAP_SHARED)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var sink byte
		for i := 0; i < len(m); i += 4096 {
			sink += m[i]
		}
		runtime.KeepAlive(sink)
		s, err := MoveFilePages(path, node)
		unix.Munmap(m)
		if len(mems) == 1 {
			if err != nil || s.PerNode[node] != 200 {
				t.Errorf("one node: %v, %v; want all 200 pages there", s, err)
			}
			continue
		}
		if s.PerNode[node] != c.want || s.Errors[int(unix.EACCES)] != c.mapped {
			t.Errorf("%d pages mapped twice: %v, want %d on node %d and %d refused", c.mapped, s, c.want, node, c.mapped)
		}
		if tooFew := float64(c.want) < MinOnNode*200; (err != nil) != tooFew ||
			(tooFew && !strings.Contains(err.Error(), "mapped more than once")) {
			t.Errorf("%d pages mapped twice: error %v", c.mapped, err)
		}
	}
	if _, err := MoveFilePages(filepath.Join(t.TempDir(), "missing"), node); err == nil {
		t.Error("a missing file gave no error")
	}
	if _, err := MoveFilePages(filepath.Join(t.TempDir(), "missing"), -1); err == nil {
		t.Error("node -1 gave no error")
	}
}
