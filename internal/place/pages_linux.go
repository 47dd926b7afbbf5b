package place

import (
	"fmt"
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
