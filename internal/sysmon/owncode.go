package sysmon

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/sysfs"
)

// A process's read_bytes counts every page read in for it, its own
// program's included: on a loaded machine the kernel drops pages of the
// numalab binary that are not in use, and a code path taken again reads
// them back in. That is not the data coming from disk. ownCodeResident
// counts the binary's pages that are in memory now (mincore over its
// mappings); the growth over a window is what the window read of it, to be
// told apart from the data's reads.

// mapping is one address range of the binary, from proc/self/maps.
type mapping struct{ start, end uintptr }

// parseExeMaps lists the mappings of file exe in a proc/PID/maps text.
func parseExeMaps(r io.Reader, exe string) ([]mapping, error) {
	var out []mapping
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || strings.Join(f[5:], " ") != exe {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || b <= a {
			continue
		}
		out = append(out, mapping{uintptr(a), uintptr(b)})
	}
	return out, sc.Err()
}

// ownCodeResident is how many bytes of this process's own binary are in
// memory now; 0 when f is not the running machine or the maps cannot be
// read (the window's reads are then all taken as the data's).
func ownCodeResident(f sysfs.FS) int64 {
	exe, err := os.Executable()
	if err != nil {
		return 0
	}
	b, err := f.Bytes("proc/self/maps")
	if err != nil {
		return 0
	}
	maps, err := parseExeMaps(bytes.NewReader(b), exe)
	if err != nil {
		return 0
	}
	page := uintptr(os.Getpagesize())
	var resident int64
	for _, m := range maps {
		n := (m.end - m.start) / page
		vec := make([]byte, n)
		// The range is this process's own mapping of its binary: mincore
		// reads its page tables, it touches no page.
		if _, _, errno := unix.Syscall(unix.SYS_MINCORE, m.start, m.end-m.start,
			uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
			continue
		}
		for _, v := range vec {
			if v&1 != 0 {
				resident += int64(page)
			}
		}
	}
	return resident
}
