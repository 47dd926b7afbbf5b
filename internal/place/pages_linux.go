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
// errno: -ENOENT for a page not yet faulted in, -EFAULT for the zero page
// or an unmapped address. It uses move_pages(2) in query mode and moves
// nothing.
func PageNodes(addr uintptr, length int) ([]int, error) {
	if length <= 0 {
		return nil, fmt.Errorf("locating pages of %#x+%d: expected a positive length", addr, length)
	}
	ps := uintptr(unix.Getpagesize())
	first := addr &^ (ps - 1)
	last := (addr + uintptr(length) - 1) &^ (ps - 1)
	n := int((last-first)/ps) + 1
	pages := make([]uintptr, n)
	for i := range pages {
		pages[i] = first + uintptr(i)*ps
	}
	status := make([]int32, n)
	_, _, errno := unix.Syscall6(unix.SYS_MOVE_PAGES, 0, uintptr(n),
		uintptr(unsafe.Pointer(&pages[0])), 0, uintptr(unsafe.Pointer(&status[0])), 0)
	if errno != 0 {
		return nil, fmt.Errorf("locating %d pages at %#x with move_pages: %w%s", n, first, errno, sysHint(errno))
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
	f, err := os.Open(path)
	if err != nil {
		return PageSummary{}, fmt.Errorf("locating the pages of %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return PageSummary{}, fmt.Errorf("locating the pages of %s: %w", path, err)
	}
	total := SummarizePages(nil)
	const chunk = 64 << 20
	for off := int64(0); off < st.Size(); off += chunk {
		n := int(min(chunk, st.Size()-off))
		m, err := unix.Mmap(int(f.Fd()), off, n, unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			return total, fmt.Errorf("locating the pages of %s: mapping %d bytes at %d: %w", path, n, off, err)
		}
		var sink byte
		for i := 0; i < n; i += unix.Getpagesize() {
			sink += m[i]
		}
		status, err := PageNodes(uintptr(unsafe.Pointer(&m[0])), n)
		unix.Munmap(m)
		if err != nil {
			return total, fmt.Errorf("locating the pages of %s: %w", path, err)
		}
		total.add(SummarizePages(status))
		runtime.KeepAlive(sink)
	}
	return total, nil
}
