package place

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// checkAllowed names the first node of p that this process may not
// allocate on, so that errors say which node and not just EINVAL.
func (p Policy) checkAllowed(doing string) error {
	allowed, err := MemsAllowed()
	if err != nil {
		return nil // let the system call report what is wrong
	}
	ok := map[int]bool{}
	for _, n := range allowed {
		ok[n] = true
	}
	for _, n := range p.Nodes {
		if !ok[n] {
			return fmt.Errorf("%s: node %d does not exist or has no memory this process may use (allowed memory nodes: %s)",
				doing, n, FormatCPUs(allowed))
		}
	}
	return nil
}

// SetMemPolicy sets the memory policy of the calling OS thread: where its
// future page allocations go. The caller must have called
// runtime.LockOSThread. Policy{Mode: Default} restores the default.
func SetMemPolicy(p Policy) error {
	doing := fmt.Sprintf("setting the calling thread's memory policy to %s", p)
	m, err := p.mask(doing)
	if err != nil {
		return err
	}
	if err := p.checkAllowed(doing); err != nil {
		return err
	}
	_, _, errno := unix.Syscall(unix.SYS_SET_MEMPOLICY, uintptr(p.Mode), uintptr(unsafe.Pointer(m)), maxNode+1)
	if errno != 0 {
		return fmt.Errorf("%s: %w%s", doing, errno, sysHint(errno))
	}
	return nil
}

// MemPolicy returns the memory policy of the calling OS thread.
func MemPolicy() (Policy, error) {
	p, err := getMempolicy(0, 0)
	if err != nil {
		return Policy{}, fmt.Errorf("reading the calling thread's memory policy: %w", err)
	}
	return p, nil
}

// PolicyAt returns the memory policy that governs the page at addr (set by
// [Mbind], or else the thread's policy).
func PolicyAt(addr uintptr) (Policy, error) {
	p, err := getMempolicy(addr, unix.MPOL_F_ADDR)
	if err != nil {
		return Policy{}, fmt.Errorf("reading the memory policy at %#x: %w", addr, err)
	}
	return p, nil
}

// MemsAllowed returns the NUMA nodes this thread may allocate memory on
// (its cpuset's memory nodes).
func MemsAllowed() ([]int, error) {
	var m nodemask
	_, _, errno := unix.Syscall6(unix.SYS_GET_MEMPOLICY, 0, uintptr(unsafe.Pointer(&m)), maxNode+1, 0,
		unix.MPOL_F_MEMS_ALLOWED, 0)
	if errno != 0 {
		return nil, fmt.Errorf("reading the memory nodes this process may use: %w%s", errno, sysHint(errno))
	}
	return m.ids(), nil
}

func getMempolicy(addr uintptr, flags uintptr) (Policy, error) {
	var mode int32
	var m nodemask
	_, _, errno := unix.Syscall6(unix.SYS_GET_MEMPOLICY, uintptr(unsafe.Pointer(&mode)), uintptr(unsafe.Pointer(&m)),
		maxNode+1, addr, flags, 0)
	if errno != 0 {
		return Policy{}, fmt.Errorf("%w%s", errno, sysHint(errno))
	}
	p := Policy{Mode: Mode(mode &^ unix.MPOL_MODE_FLAGS)}
	if p.Mode != Default && p.Mode != Local {
		p.Nodes = m.ids()
	}
	return p, nil
}

// Mbind sets the memory policy of the page-aligned range [addr, addr+length)
// of this process's memory. With move, pages already allocated elsewhere
// are moved to obey it (MPOL_MF_MOVE), and pages that cannot be moved make
// it fail (MPOL_MF_STRICT); without move, only future allocations obey it.
func Mbind(addr uintptr, length int, p Policy, move bool) error {
	doing := fmt.Sprintf("binding memory %#x+%d to policy %s", addr, length, p)
	if ps := uintptr(unix.Getpagesize()); addr%ps != 0 {
		return fmt.Errorf("%s: address is not aligned to the %d-byte page size", doing, ps)
	}
	if length <= 0 {
		return fmt.Errorf("%s: expected a positive length", doing)
	}
	m, err := p.mask(doing)
	if err != nil {
		return err
	}
	if err := p.checkAllowed(doing); err != nil {
		return err
	}
	var flags uintptr
	if move {
		flags = unix.MPOL_MF_MOVE | unix.MPOL_MF_STRICT
	}
	_, _, errno := unix.Syscall6(unix.SYS_MBIND, addr, uintptr(length), uintptr(p.Mode),
		uintptr(unsafe.Pointer(m)), maxNode+1, flags)
	if errno != 0 {
		return fmt.Errorf("%s: %w%s", doing, errno, sysHint(errno))
	}
	return nil
}

// sysHint explains the errnos the NUMA system calls give in containers and
// on kernels without NUMA support.
func sysHint(errno unix.Errno) string {
	switch {
	case errors.Is(errno, unix.ENOSYS):
		return " (the kernel was built without NUMA support)"
	case errors.Is(errno, unix.EPERM):
		return " (not permitted: a container may need CAP_SYS_NICE or a seccomp profile that allows NUMA calls)"
	}
	return ""
}
