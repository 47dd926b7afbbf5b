package place

import (
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"
)

// maxCPU is the number of CPUs a unix.CPUSet can name.
const maxCPU = len(unix.CPUSet{}) * 64

// Pin sets the CPU affinity of the calling OS thread to cpus. The caller
// must have called runtime.LockOSThread. If some of the CPUs are offline or
// outside this process's cpuset, Pin restores the thread's previous affinity
// and returns an error naming them.
func Pin(cpus []int) error {
	return pin(0, "the calling thread", cpus)
}

// PinPID sets the CPU affinity of the thread whose ID is pid (for a
// single-threaded process such as a PostgreSQL backend, the process).
func PinPID(pid int, cpus []int) error {
	if pid <= 0 {
		return fmt.Errorf("pinning pid %d: expected a positive process ID", pid)
	}
	return pin(pid, fmt.Sprintf("pid %d", pid), cpus)
}

func pin(pid int, who string, cpus []int) error {
	if len(cpus) == 0 {
		return fmt.Errorf("pinning %s: no CPUs given (expected at least one, e.g. from place.Select)", who)
	}
	var set unix.CPUSet
	for _, c := range cpus {
		if c < 0 || c >= maxCPU {
			return fmt.Errorf("pinning %s to CPUs %s: CPU %d is outside 0-%d", who, FormatCPUs(cpus), c, maxCPU-1)
		}
		set.Set(c)
	}
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &old); err != nil {
		return fmt.Errorf("pinning %s: reading its affinity: %w", who, err)
	}
	if err := unix.SchedSetaffinity(pid, &set); err != nil {
		if errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("pinning %s to CPUs %s: none of them is online and allowed for it (its affinity is %s): %w",
				who, FormatCPUs(cpus), FormatCPUs(setIDs(&old)), err)
		}
		return fmt.Errorf("pinning %s to CPUs %s: %w", who, FormatCPUs(cpus), err)
	}
	var got unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &got); err != nil {
		return fmt.Errorf("pinning %s: reading its affinity back: %w", who, err)
	}
	var missing []int
	for _, c := range cpus {
		if !got.IsSet(c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		_ = unix.SchedSetaffinity(pid, &old)
		what := "CPUs " + FormatCPUs(missing) + " are"
		if len(missing) == 1 {
			what = fmt.Sprintf("CPU %d is", missing[0])
		}
		return fmt.Errorf("pinning %s to CPUs %s: %s offline or outside this process's cpuset (left its affinity at %s)",
			who, FormatCPUs(cpus), what, FormatCPUs(setIDs(&old)))
	}
	return nil
}

// Affinity returns the CPUs the calling OS thread may run on.
func Affinity() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("reading the calling thread's CPU affinity: %w", err)
	}
	return setIDs(&set), nil
}

// startCPUs and startErr are the process's CPUs when it started, read
// before anything could pin a thread (package initialisation runs on the
// main thread, in the main goroutine).
var startCPUs, startErr = Affinity()

// ProcessCPUs returns the CPUs this process may run on, as they were when
// it started: what a sweep puts the process's threads back on. The main
// thread's affinity (AffinityPID(os.Getpid())) is not that: a goroutine
// that pins its thread and exits locked ends the thread with its pinning,
// except on the main thread, which Go keeps, pinned, for good.
func ProcessCPUs() ([]int, error) {
	return slices.Clone(startCPUs), startErr
}

// AffinityPID returns the CPUs the thread whose ID is pid may run on.
func AffinityPID(pid int) ([]int, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("reading the CPU affinity of pid %d: expected a positive process ID", pid)
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		return nil, fmt.Errorf("reading the CPU affinity of pid %d: %w", pid, err)
	}
	return setIDs(&set), nil
}

func setIDs(s *unix.CPUSet) []int {
	var ids []int
	for c := range maxCPU {
		if s.IsSet(c) {
			ids = append(ids, c)
		}
	}
	return slices.Clip(ids)
}
