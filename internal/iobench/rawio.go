package iobench

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// pread and pwrite issue one system call without telling the Go runtime,
// which keeps the worker's P through a blocking call. unix.Pread would
// let the runtime hand the P away after 20 µs and have the thread take
// one back on return: 6-20 µs a call on these guests, where 8 KiB random
// reads at QD1 read 0.88-0.91 of fio's IOPS and 64 KiB sequential reads
// 0.76-0.98 (go test ./internal/iobench -run TestFio -fio -fio.only QD1);
// with raw calls, 1.01-1.02 and 0.96-1.08. Measure gives every worker its
// own P, so nothing waits for the held ones; the buffers are mmap'd,
// outside the Go heap.
func pread(fd int, buf []byte, off int64) (int, error) {
	return rawIO(unix.SYS_PREAD64, fd, buf, off)
}

func pwrite(fd int, buf []byte, off int64) (int, error) {
	return rawIO(unix.SYS_PWRITE64, fd, buf, off)
}

func rawIO(trap uintptr, fd int, buf []byte, off int64) (int, error) {
	n, _, e := unix.RawSyscall6(trap, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(buf))),
		uintptr(len(buf)), uintptr(off), 0, 0)
	if e != 0 {
		return int(n), e
	}
	return int(n), nil
}
