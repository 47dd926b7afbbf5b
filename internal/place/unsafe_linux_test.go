package place

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

func unsafePointer(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

// getcpu returns the CPU the calling thread runs on (getcpu(2)).
func getcpu() (int, error) {
	var cpu, node uint32
	_, _, errno := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), uintptr(unsafe.Pointer(&node)), 0)
	if errno != 0 {
		return 0, errno
	}
	return int(cpu), nil
}
