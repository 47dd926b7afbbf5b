package memlat

import (
	"fmt"
	"io"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/sysfs"
)

// warmPasses is how often Warm reads the chain's pages before it gives up
// on having them all in memory.
const warmPasses = 3

// Warm makes the chain's pages resident before a timing, so that the
// timing walks memory, not page faults: between two walks the kernel may
// page the chain out (DAMON's reclaim of cold memory) or the hypervisor
// may drop what backs it. Warm asks mincore(2) which pages are out, reads
// a byte of every page, and asks again; it reads them again, up to three
// passes in all, while any is out. It returns how many pages were out
// before (read back in) and how many still are.
func (d *DRAMChase) Warm() (in, out int, err error) {
	mem := d.buf.mem
	vec := make([]byte, len(mem)/smallBytes)
	if in, err = notResident(mem, vec); err != nil {
		return 0, 0, err
	}
	for pass := 0; pass < warmPasses; pass++ {
		var sum byte
		for i := 0; i < len(mem); i += smallBytes {
			sum += mem[i]
		}
		runtime.KeepAlive(sum)
		if out, err = notResident(mem, vec); err != nil || out == 0 {
			return in, out, err
		}
	}
	return in, out, nil
}

// notResident counts the 4 KiB pages of mem (page-aligned) that
// mincore(2) finds out of memory; vec has a byte for each.
func notResident(mem, vec []byte) (int, error) {
	_, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(mem))), uintptr(len(mem)),
		uintptr(unsafe.Pointer(unsafe.SliceData(vec))))
	if e != 0 {
		return 0, fmt.Errorf("asking mincore which pages of the chain are in memory: %w", e)
	}
	n := 0
	for _, v := range vec {
		if v&1 == 0 {
			n++
		}
	}
	return n, nil
}

// Huge reads again what share of the chain is in 2 MiB pages
// (AnonHugePages in procRoot/proc/self/smaps over its length):
// HugeFraction is the share when it was mapped, and the kernel may split
// its huge pages since (reclaim, DAMON's page-out) or collapse its small
// ones (khugepaged).
func (d *DRAMChase) Huge(procRoot string) (float64, error) {
	mem := d.buf.mem
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	m, err := sysfs.Parse(sysfs.New(procRoot), "proc/self/smaps",
		func(r io.Reader) (sysfs.Mapping, error) { return sysfs.ParseSmaps(r, addr) })
	if err != nil {
		return 0, fmt.Errorf("reading the chain's page size: %w", err)
	}
	return min(float64(m.AnonHugePages)/float64(len(mem)), 1), nil
}
