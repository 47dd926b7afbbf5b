//go:build !linux

package place

import (
	"errors"
	"fmt"
	"runtime"
)

var errNotLinux = fmt.Errorf("placement needs Linux (this is %s): %w", runtime.GOOS, errors.ErrUnsupported)

// Pin needs Linux; elsewhere it returns an error wrapping errors.ErrUnsupported.
func Pin(cpus []int) error { return errNotLinux }

// PinPID needs Linux.
func PinPID(pid int, cpus []int) error { return errNotLinux }

// Affinity needs Linux.
func Affinity() ([]int, error) { return nil, errNotLinux }

// ProcessCPUs needs Linux.
func ProcessCPUs() ([]int, error) { return nil, errNotLinux }

// AffinityPID needs Linux.
func AffinityPID(pid int) ([]int, error) { return nil, errNotLinux }

// SetMemPolicy needs Linux.
func SetMemPolicy(p Policy) error { return errNotLinux }

// MemPolicy needs Linux.
func MemPolicy() (Policy, error) { return Policy{}, errNotLinux }

// PolicyAt needs Linux.
func PolicyAt(addr uintptr) (Policy, error) { return Policy{}, errNotLinux }

// MemsAllowed needs Linux.
func MemsAllowed() ([]int, error) { return nil, errNotLinux }

// Mbind needs Linux.
func Mbind(addr uintptr, length int, p Policy, move bool) error { return errNotLinux }

// PageNodes needs Linux.
func PageNodes(addr uintptr, length int) ([]int, error) { return nil, errNotLinux }

// FilePageNodes needs Linux.
func FilePageNodes(path string) (PageSummary, error) { return PageSummary{}, errNotLinux }

// MoveFilePages needs Linux.
func MoveFilePages(path string, node int) (PageSummary, error) { return PageSummary{}, errNotLinux }
