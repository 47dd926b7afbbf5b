package memlat

import (
	"errors"
	"fmt"
	"io"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/sysfs"
	"github.com/numalab/numalab/internal/units"
)

// Page sizes as --pages spells them.
const (
	Pages4K = "4k"
	Pages2M = "2m"
)

const (
	hugeBytes  = 2 << 20
	smallBytes = 4 << 10
)

// ErrCannotBind is returned when memory cannot be bound to a node.
var ErrCannotBind = errors.New("memory cannot be bound to the node")

// buffer is anonymous memory mapped outside the Go heap, 2 MiB aligned,
// with the page size asked for and what was actually obtained.
type buffer struct {
	raw []byte // the whole mapping, for munmap
	mem []byte // the 2 MiB-aligned part in use
	// PageBytes is the page size obtained: 2 MiB when at least 90% of the
	// range is in huge pages, 4 KiB when none is; HugeFraction says how much.
	PageBytes    int64
	HugeFraction float64
}

// mapBuffer maps size bytes with 4 KiB or 2 MiB (transparent huge) pages,
// bound to node when node >= 0, faults every page in, and checks in
// procRoot/proc/self/smaps what page size it got. Huge pages are asked
// for, not guaranteed: where the kernel has none free (memory fragmented
// or in use) the buffer keeps what came, down to 4 KiB pages only, and
// PageBytes and HugeFraction say so; the caller labels its figures by
// them. (Config.Validate refuses 2m where THP is "never".) The caller
// must free it.
func mapBuffer(procRoot string, size int64, pages string, node int) (*buffer, error) {
	size = (size + hugeBytes - 1) &^ (hugeBytes - 1)
	raw, err := unix.Mmap(-1, 0, int(size+hugeBytes), unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("mapping %s: %w", units.Bytes(size), err)
	}
	b := &buffer{raw: raw}
	ok := false
	defer func() {
		if !ok {
			b.free()
		}
	}()
	start := uintptr(unsafe.Pointer(unsafe.SliceData(raw)))
	off := int((hugeBytes - start%hugeBytes) % hugeBytes)
	b.mem = raw[off : off+int(size)]
	advice := unix.MADV_NOHUGEPAGE
	if pages == Pages2M {
		advice = unix.MADV_HUGEPAGE
	}
	if err := unix.Madvise(b.mem, advice); err != nil {
		return nil, fmt.Errorf("asking for %s pages with madvise: %w", pages, err)
	}
	if node >= 0 {
		if err := mbind(b.mem, node); err != nil {
			return nil, err
		}
	}
	for i := 0; i < len(b.mem); i += smallBytes {
		b.mem[i] = 0
	}
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(b.mem)))
	m, err := sysfs.Parse(sysfs.New(procRoot), "proc/self/smaps",
		func(r io.Reader) (sysfs.Mapping, error) { return sysfs.ParseSmaps(r, addr) })
	if err != nil {
		return nil, fmt.Errorf("checking page size: %w", err)
	}
	b.HugeFraction = min(float64(m.AnonHugePages)/float64(len(b.mem)), 1)
	b.PageBytes = smallBytes
	if b.HugeFraction >= 0.9 {
		b.PageBytes = hugeBytes
	}
	ok = true
	return b, nil
}

// free unmaps the buffer; safe to call twice.
func (b *buffer) free() {
	if b.raw != nil {
		unix.Munmap(b.raw)
		b.raw, b.mem = nil, nil
	}
}

// PageLabel names the page size obtained, with the huge fraction when mixed.
func PageLabel(pageBytes int64, hugeFraction float64) string {
	switch {
	case pageBytes == hugeBytes && hugeFraction >= 0.999:
		return "2MiB"
	case pageBytes == hugeBytes:
		return fmt.Sprintf("2MiB (%.0f%% huge)", 100*hugeFraction)
	case hugeFraction > 0:
		return fmt.Sprintf("4KiB (%.0f%% huge)", 100*hugeFraction)
	}
	return "4KiB"
}

// mbind binds mem to node (MPOL_BIND) before it is faulted in.
func mbind(mem []byte, node int) error {
	err := place.Mbind(uintptr(unsafe.Pointer(unsafe.SliceData(mem))), len(mem),
		place.Policy{Mode: place.Bind, Nodes: []int{node}}, false)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCannotBind, err)
	}
	return nil
}

// onNode returns the fraction of mem's pages that lie on node.
func onNode(mem []byte, node int) (float64, error) {
	st, err := place.PageNodes(uintptr(unsafe.Pointer(unsafe.SliceData(mem))), len(mem))
	if err != nil {
		return 0, err
	}
	s := place.SummarizePages(st)
	return float64(s.PerNode[node]) / float64(max(s.Pages, 1)), nil
}

// pinThread pins the calling OS thread to cpu; the caller has called
// runtime.LockOSThread and never unlocks, so the thread dies with its
// goroutine and the affinity does not leak to other goroutines.
func pinThread(cpu int) error {
	return place.Pin([]int{cpu})
}

// involuntarySwitches is the calling thread's count of involuntary context
// switches (preemptions) so far.
func involuntarySwitches() int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return -1
	}
	return ru.Nivcsw
}
