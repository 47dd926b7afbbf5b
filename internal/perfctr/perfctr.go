// Package perfctr counts events of the calling thread (Open), or of
// every thread of this process (OpenProcess), with perf_event_open: hardware counters (instructions, last-level cache
// misses, cycles) where the CPU and the kernel let this process read them,
// and software counters, which every Linux kernel with perf events has.
//
// A virtual machine usually exposes no hardware counters, and
// kernel.perf_event_paranoid may forbid them; Open and OpenProcess then fail with an
// error whose Reason says which, for output such as "hardware counters:
// not readable here: ...".
package perfctr

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/sysfs"
)

// Event is one counter: its name in words and perf_event_open's type and
// config.
type Event struct {
	Name   string
	Type   uint32
	Config uint64
}

// The events numalab counts.
var (
	Instructions = Event{"instructions", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_INSTRUCTIONS}
	Cycles       = Event{"cycles", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CPU_CYCLES}
	// LLCMisses are last-level cache misses (PERF_COUNT_HW_CACHE_MISSES).
	LLCMisses = Event{"last-level cache misses", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CACHE_MISSES}
	// TaskClock is the thread's CPU time in ns: a software counter,
	// readable wherever perf events are.
	TaskClock = Event{"task-clock", unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_TASK_CLOCK}
)

// Counters are open counters of one thread, or of every thread of this
// process (OpenProcess).
type Counters struct {
	events []Event
	fds    [][]int // [event][thread]
	// UserOnly is set when the kernel refused to count kernel time
	// (perf_event_paranoid ≥ 2 without privilege): counts are user space.
	UserOnly bool
}

// Error is why a counter could not be opened.
type Error struct {
	Event Event
	Err   error // the errno perf_event_open returned
	// Paranoid is kernel.perf_event_paranoid as read when it failed; ""
	// when it could not be read.
	Paranoid string
}

func (e *Error) Error() string {
	return fmt.Sprintf("opening the %s counter (perf_event_open): %v", e.Event.Name, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Reason says in words why the counter cannot be read here, naming the
// errno and kernel.perf_event_paranoid.
func (e *Error) Reason() string {
	p := "kernel.perf_event_paranoid " + e.Paranoid
	if e.Paranoid == "" {
		p = "kernel.perf_event_paranoid unreadable"
	}
	hint := ""
	switch {
	case errors.Is(e.Err, unix.ENOENT), errors.Is(e.Err, unix.EOPNOTSUPP), errors.Is(e.Err, unix.ENODEV):
		hint = ": the CPU or hypervisor exposes no such counter, as in most virtual machines"
	case errors.Is(e.Err, unix.EACCES), errors.Is(e.Err, unix.EPERM):
		hint = ": not permitted (run as root or with CAP_PERFMON, or lower kernel.perf_event_paranoid)"
	case errors.Is(e.Err, unix.ENOSYS):
		hint = ": the kernel has no perf events"
	}
	return fmt.Sprintf("%s: %s (%s, %s)%s", e.Event.Name, unix.ErrnoName(errnoOf(e.Err)), e.Err, p, hint)
}

func errnoOf(err error) unix.Errno {
	var en unix.Errno
	if errors.As(err, &en) {
		return en
	}
	return 0
}

// Open opens events on the calling OS thread, counting from now on. The
// caller must keep the goroutine on its thread (runtime.LockOSThread)
// until Close. It counts kernel time too where the kernel allows, else
// user space only (UserOnly). A counter that cannot be opened is an
// *Error.
func Open(events ...Event) (*Counters, error) {
	return open(events, []int{0}, false)
}

// OpenProcess opens events for every thread of this process: one counter
// per event per thread that exists now, each inherited by the threads
// that thread creates later, so that every thread of the Go runtime is
// covered. Counts of threads that end are folded into their parent's
// counter by the kernel. A thread created between the listing of threads
// and the opening of its creator's counters would be missed; the Go
// runtime rarely creates threads then.
func OpenProcess(events ...Event) (*Counters, error) {
	tids, err := threads(sysfs.New("/"))
	if err != nil {
		return nil, err
	}
	return open(events, tids, true)
}

func open(events []Event, tids []int, inherit bool) (*Counters, error) {
	var err error
	for _, userOnly := range []bool{false, true} {
		c := &Counters{events: events, UserOnly: userOnly}
		if err = c.open(tids, inherit); err == nil {
			return c, nil
		}
		c.Close()
		if !errors.Is(err, unix.EACCES) && !errors.Is(err, unix.EPERM) {
			break
		}
	}
	return nil, err
}

func (c *Counters) open(tids []int, inherit bool) error {
	for _, ev := range c.events {
		attr := unix.PerfEventAttr{
			Type:        ev.Type,
			Config:      ev.Config,
			Size:        uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
			Read_format: unix.PERF_FORMAT_TOTAL_TIME_ENABLED | unix.PERF_FORMAT_TOTAL_TIME_RUNNING,
		}
		if inherit {
			attr.Bits |= unix.PerfBitInherit
		}
		if c.UserOnly {
			attr.Bits |= unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv
		}
		var fds []int
		for _, tid := range tids {
			fd, err := unix.PerfEventOpen(&attr, tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
			if errors.Is(err, unix.ESRCH) && tid != 0 {
				continue // the thread ended meanwhile
			}
			if err != nil {
				c.fds = append(c.fds, fds)
				return &Error{Event: ev, Err: err, Paranoid: paranoid(sysfs.New("/"))}
			}
			fds = append(fds, fd)
		}
		c.fds = append(c.fds, fds)
		if len(fds) == 0 {
			return &Error{Event: ev, Err: unix.ESRCH, Paranoid: paranoid(sysfs.New("/"))}
		}
	}
	return nil
}

// threads lists this process's thread IDs, from /proc under proc's root.
func threads(proc sysfs.FS) ([]int, error) {
	tids, err := proc.Threads(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("listing this process's threads: %w", err)
	}
	return tids, nil
}

// paranoid is kernel.perf_event_paranoid, from /proc under proc's root;
// "" when it cannot be read.
func paranoid(proc sysfs.FS) string {
	s, _ := proc.String("proc/sys/kernel/perf_event_paranoid")
	return s
}

// Read returns each event's count since Open, in Open's order, summed
// over threads and scaled up when the kernel multiplexed a counter (ran it
// part of the time).
func (c *Counters) Read() ([]uint64, error) {
	out := make([]uint64, len(c.fds))
	buf := make([]byte, 24)
	for i, fds := range c.fds {
		var sum float64
		for _, fd := range fds {
			n, err := unix.Read(fd, buf)
			if err != nil {
				return nil, fmt.Errorf("reading the %s counter: %w", c.events[i].Name, err)
			}
			if n != len(buf) {
				return nil, fmt.Errorf("reading the %s counter: got %d bytes, want %d", c.events[i].Name, n, len(buf))
			}
			v := binary.NativeEndian.Uint64(buf[0:])
			enabled := binary.NativeEndian.Uint64(buf[8:])
			running := binary.NativeEndian.Uint64(buf[16:])
			sum += scaleCount(v, enabled, running)
		}
		out[i] = uint64(sum + 0.5)
	}
	return out, nil
}

// scaleCount estimates a multiplexed counter's full count: it ran for
// running ns of the enabled ns.
func scaleCount(v, enabled, running uint64) float64 {
	if running == 0 || running >= enabled {
		return float64(v)
	}
	return float64(v) * float64(enabled) / float64(running)
}

// Close closes the counters; safe to call twice.
func (c *Counters) Close() {
	for _, fds := range c.fds {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}
	c.fds = nil
}
