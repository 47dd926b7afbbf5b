package place

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// PageNodes reports on which NUMA node each page of [addr, addr+length) of
// this process's memory lies, one entry per page from the page containing
// addr to the page containing addr+length-1. A negative entry is a negated
// errno: -ENOENT for a page not yet faulted in (-EFAULT on kernels before
// 6.x), -EFAULT for the zero page or an unmapped address. It uses
// move_pages(2) in query mode and moves nothing.
func PageNodes(addr uintptr, length int) ([]int, error) {
	if length <= 0 {
		return nil, fmt.Errorf("locating pages of %#x+%d: expected a positive length", addr, length)
	}
	return movePages(addr, length, -1)
}

// movePages is move_pages(2) on this process's pages of [addr,
// addr+length): in query mode when node < 0, else moving every page to
// node (MPOL_MF_MOVE: pages mapped by other processes stay). The answer is
// each page's node afterwards, or a negated errno.
func movePages(addr uintptr, length int, node int) ([]int, error) {
	ps := uintptr(unix.Getpagesize())
	first := addr &^ (ps - 1)
	last := (addr + uintptr(length) - 1) &^ (ps - 1)
	n := int((last-first)/ps) + 1
	pages := make([]uintptr, n)
	for i := range pages {
		pages[i] = first + uintptr(i)*ps
	}
	status := make([]int32, n)
	var nodes []int32
	var nodesPtr, flags uintptr
	doing := "locating"
	if node >= 0 {
		nodes = make([]int32, n)
		for i := range nodes {
			nodes[i] = int32(node)
		}
		nodesPtr, flags, doing = uintptr(unsafe.Pointer(&nodes[0])), unix.MPOL_MF_MOVE, fmt.Sprintf("moving to node %d", node)
	}
	_, _, errno := unix.Syscall6(unix.SYS_MOVE_PAGES, 0, uintptr(n),
		uintptr(unsafe.Pointer(&pages[0])), nodesPtr, uintptr(unsafe.Pointer(&status[0])), flags)
	runtime.KeepAlive(nodes)
	if errno != 0 {
		return nil, fmt.Errorf("%s %d pages at %#x with move_pages: %w%s", doing, n, first, errno, sysHint(errno))
	}
	out := make([]int, n)
	for i, s := range status {
		out[i] = int(s)
	}
	return out, nil
}

// FilePageNodes reports on which NUMA node the page-cache pages of a file
// lie. It maps the file read-only and reads one byte of each page, which
// maps cached pages without moving them; a page that was not cached is read
// in by this thread (and so placed by its policy): call it after the file
// was prewarmed.
func FilePageNodes(path string) (PageSummary, error) {
	return filePages(path, -1)
}

// MoveFilePages moves the page-cache pages of a file to node and reports
// where they lie afterwards. It is how a file's data is placed on a node
// whatever its filesystem: dropping the cache and reading the file back
// from the node (fadvise DONTNEED) does nothing on tmpfs, whose pages are
// the file itself, and leaves pages that another process maps. Pages
// mapped more than once stay where they are (moving them needs
// MPOL_MF_MOVE_ALL and CAP_SYS_NICE): a few of the file's first pages that
// an open SQLite connection of this process maps are the usual ones. It
// fails when fewer than [MinOnNode] of the pages end up on node, saying how
// many did not move and, on tmpfs, that the filesystem is tmpfs; the
// summary says exactly where every page is.
func MoveFilePages(path string, node int) (PageSummary, error) {
	if node < 0 {
		return PageSummary{}, fmt.Errorf("moving the pages of %s: expected a node ≥ 0, got %d", path, node)
	}
	s, err := filePages(path, node)
	if err != nil {
		return s, err
	}
	if on := s.PerNode[node]; float64(on) < MinOnNode*float64(s.Pages) {
		why := "pages mapped more than once (by another process, or twice by this one) cannot move: stop other users " +
			"of the file and retry"
		if isTmpfs(path) {
			why = "the file is on tmpfs, where pages cannot be dropped and re-read, and " + why
		}
		return s, fmt.Errorf("placing %s on node %d: only %d of %d pages are there after moving them (%s), below %.0f%%; %s",
			path, node, on, s.Pages, s, 100*MinOnNode, why)
	}
	return s, nil
}

// isTmpfs says whether path lies on tmpfs (or another shmem filesystem).
func isTmpfs(path string) bool {
	var st unix.Statfs_t
	return unix.Statfs(path, &st) == nil && st.Type == unix.TMPFS_MAGIC
}

// filePages maps path in chunks, touches every page and asks move_pages
// where each lies, moving it to node first when node ≥ 0.
func filePages(path string, node int) (PageSummary, error) {
	doing := "locating"
	if node >= 0 {
		doing = fmt.Sprintf("moving to node %d", node)
	}
	f, err := os.Open(path)
	if err != nil {
		return PageSummary{}, fmt.Errorf("%s the pages of %s: %w", doing, path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return PageSummary{}, fmt.Errorf("%s the pages of %s: %w", doing, path, err)
	}
	total := SummarizePages(nil)
	const chunk = 64 << 20
	for off := int64(0); off < st.Size(); off += chunk {
		n := int(min(chunk, st.Size()-off))
		m, err := unix.Mmap(int(f.Fd()), off, n, unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			return total, fmt.Errorf("%s the pages of %s: mapping %d bytes at %d: %w", doing, path, n, off, err)
		}
		var sink byte
		for i := 0; i < n; i += unix.Getpagesize() {
			sink += m[i]
		}
		status, err := movePages(uintptr(unsafe.Pointer(&m[0])), n, node)
		unix.Munmap(m)
		if err != nil {
			return total, fmt.Errorf("%s the pages of %s: %w", doing, path, err)
		}
		total.add(SummarizePages(status))
		runtime.KeepAlive(sink)
	}
	return total, nil
}
