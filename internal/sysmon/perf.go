package sysmon

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/sysfs"
)

// perfEvent is one counter to open for every thread.
type perfEvent struct {
	name   string
	typ    uint32
	config uint64
}

// hardwareEvents are the counters a Usage reports, in its order.
var hardwareEvents = []perfEvent{
	{"cycles", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CPU_CYCLES},
	{"instructions", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_INSTRUCTIONS},
	{"LLC misses", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CACHE_MISSES},
}

// perfCounters count events for the whole process: one counter per event
// per thread that exists when they open, each inherited by the threads that
// thread creates later, so that every thread of the Go runtime is covered.
// Counts of threads that end are folded into their parent's counter by the
// kernel. A thread created between the listing of threads and the opening
// of its creator's counters would be missed; the Go runtime rarely creates
// threads then.
type perfCounters struct {
	events   []perfEvent
	fds      [][]int // [event][thread]
	userOnly bool
}

// openPerf opens events for every thread of this process. It tries to
// count kernel time too and falls back to user space only when the kernel
// refuses (perf_event_paranoid ≥ 2 without privilege).
func openPerf(events []perfEvent) (*perfCounters, error) {
	tids, err := threads()
	if err != nil {
		return nil, err
	}
	p := &perfCounters{events: events, fds: make([][]int, len(events))}
	for _, userOnly := range []bool{false, true} {
		p.userOnly = userOnly
		err = p.open(tids)
		if err == nil {
			return p, nil
		}
		p.close()
		if !errors.Is(err, unix.EACCES) && !errors.Is(err, unix.EPERM) {
			break
		}
	}
	return nil, err
}

func (p *perfCounters) open(tids []int) error {
	for i, ev := range p.events {
		attr := unix.PerfEventAttr{
			Type:        ev.typ,
			Config:      ev.config,
			Size:        uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
			Read_format: unix.PERF_FORMAT_TOTAL_TIME_ENABLED | unix.PERF_FORMAT_TOTAL_TIME_RUNNING,
			Bits:        unix.PerfBitInherit,
		}
		if p.userOnly {
			attr.Bits |= unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv
		}
		opened := 0
		for _, tid := range tids {
			fd, err := unix.PerfEventOpen(&attr, tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
			if errors.Is(err, unix.ESRCH) {
				continue // the thread ended meanwhile
			}
			if err != nil {
				return fmt.Errorf("perf_event_open %s: %w", ev.name, err)
			}
			p.fds[i] = append(p.fds[i], fd)
			opened++
		}
		if opened == 0 {
			return fmt.Errorf("perf_event_open %s: no thread of this process could be counted", ev.name)
		}
	}
	return nil
}

// read returns each event's count summed over threads, scaled up when the
// kernel multiplexed the counter (ran it for only part of the time).
func (p *perfCounters) read() ([]uint64, error) {
	out := make([]uint64, len(p.events))
	buf := make([]byte, 24)
	for i, fds := range p.fds {
		var sum float64
		for _, fd := range fds {
			n, err := unix.Read(fd, buf)
			if err != nil {
				return nil, fmt.Errorf("reading perf counter %s: %w", p.events[i].name, err)
			}
			if n != len(buf) {
				return nil, fmt.Errorf("reading perf counter %s: got %d bytes, want %d", p.events[i].name, n, len(buf))
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

func (p *perfCounters) close() {
	for i, fds := range p.fds {
		for _, fd := range fds {
			unix.Close(fd)
		}
		p.fds[i] = nil
	}
}

// threads lists this process's thread IDs (always the live process: perf
// counters cannot be opened on a captured tree).
func threads() ([]int, error) {
	tids, err := sysfs.New("/").Numbered("proc/self/task", "")
	if err != nil {
		return nil, fmt.Errorf("listing this process's threads: %w", err)
	}
	return tids, nil
}

// perfReason explains why perf_event_open failed, for a Usage's Perf.Reason.
func perfReason(f sysfs.FS, err error) string {
	hint := ""
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENODEV):
		hint = "the CPU or hypervisor exposes no hardware counters, as in most virtual machines"
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		hint = "not permitted"
		if v, rerr := f.String("proc/sys/kernel/perf_event_paranoid"); rerr == nil {
			hint += " with kernel.perf_event_paranoid=" + v
		}
		hint += " (run with CAP_PERFMON or lower kernel.perf_event_paranoid)"
	case errors.Is(err, unix.ENOSYS):
		hint = "the kernel has no perf events"
	}
	if hint == "" {
		return "not available: " + err.Error()
	}
	return "not available: " + err.Error() + ": " + hint
}
