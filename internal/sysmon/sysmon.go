// Package sysmon watches the machine and this process during a measured
// window: CPU time per logical CPU (user, system, steal), context switches,
// disk reads by the process and by the block devices, and hardware
// counters (cycles, instructions, last-level cache misses) when the kernel
// allows them.
//
// It samples counters twice, at Start and at Stop, and reports the
// difference; it does not poll in between, so it costs nothing while the
// cell runs. Files are read below a root ("/" on the machine itself, a
// captured tree in tests). What belongs to the live process (getrusage,
// perf_event_open) is always the running process's.
//
// It refuses to report zeros for counters it could not read: when perf
// events are not allowed, Usage.Perf says "not available: <reason>".
package sysmon

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/perfctr"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
)

// snapshot is every counter at one moment.
type snapshot struct {
	at        time.Time
	stat      sysfs.Stat
	readBytes int64
	ownCode   int64 // bytes of the numalab binary in memory (owncode.go)
	disks     map[string]sysfs.DiskStat
	ru        unix.Rusage
}

func take(f sysfs.FS) (snapshot, error) {
	s := snapshot{at: time.Now()}
	var err error
	if s.stat, err = sysfs.Parse(f, "proc/stat", sysfs.ParseStat); err != nil {
		return s, err
	}
	if s.readBytes, err = sysfs.Parse(f, "proc/self/io", sysfs.ParseIO); err != nil {
		return s, err
	}
	s.ownCode = ownCodeResident(f)
	if s.disks, err = sysfs.Parse(f, "proc/diskstats", sysfs.ParseDiskstats); err != nil {
		return s, err
	}
	if err := unix.Getrusage(unix.RUSAGE_SELF, &s.ru); err != nil {
		return s, fmt.Errorf("reading this process's resource usage: %w", err)
	}
	return s, nil
}

// Sampler holds the first sample of a window.
type Sampler struct {
	fs         sysfs.FS
	first      snapshot
	perf       *perfctr.Counters
	perfStart  []uint64
	perfReason string
	stopped    bool
}

// Start takes the first sample below root ("/" for this machine) and opens
// hardware counters for this process if it may.
func Start(root string) (*Sampler, error) {
	s := &Sampler{fs: sysfs.New(root)}
	// The order Stop reads them in.
	p, err := perfctr.OpenProcess(perfctr.Cycles, perfctr.Instructions, perfctr.LLCMisses)
	if err != nil {
		s.perfReason = perfReason(err)
	} else {
		s.perf = p
		if s.perfStart, err = p.Read(); err != nil {
			p.Close()
			s.perf, s.perfReason = nil, "not available: "+err.Error()
		}
	}
	if s.first, err = take(s.fs); err != nil {
		s.close()
		return nil, fmt.Errorf("starting system monitor: %w", err)
	}
	return s, nil
}

func (s *Sampler) close() {
	if s.perf != nil {
		s.perf.Close()
	}
}

// Stop takes the second sample and returns what happened in between.
func (s *Sampler) Stop() (result.Usage, error) {
	if s.stopped {
		return result.Usage{}, errors.New("stopping system monitor: already stopped")
	}
	s.stopped = true
	defer s.close()
	var perfEnd []uint64
	var perfErr error
	if s.perf != nil {
		perfEnd, perfErr = s.perf.Read()
	}
	last, err := take(s.fs)
	if err != nil {
		return result.Usage{}, fmt.Errorf("stopping system monitor: %w", err)
	}
	u := usage(s.first, last, physicalDisks(s.fs, last.disks))
	switch {
	case s.perf == nil:
		u.Perf.Reason = s.perfReason
	case perfErr != nil:
		u.Perf.Reason = "not available: " + perfErr.Error()
	default:
		u.Perf = result.Perf{Available: true, UserOnly: s.perf.UserOnly,
			Cycles:       perfEnd[0] - s.perfStart[0],
			Instructions: perfEnd[1] - s.perfStart[1],
			LLCMisses:    perfEnd[2] - s.perfStart[2]}
	}
	return u, nil
}

// usage is the difference between two snapshots.
func usage(a, b snapshot, physical map[string]bool) result.Usage {
	u := result.Usage{Elapsed: b.at.Sub(a.at)}
	ids := make([]int, 0, len(b.stat.CPUs))
	for id := range b.stat.CPUs {
		if _, ok := a.stat.CPUs[id]; ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		u.CPUs = append(u.CPUs, cpuUsage(id, a.stat.CPUs[id], b.stat.CPUs[id]))
	}
	if s := u.Elapsed.Seconds(); s > 0 {
		u.CtxSwitchesPerSec = float64(delta(a.stat.Ctxt, b.stat.Ctxt)) / s
	}
	u.ProcVoluntarySwitches = b.ru.Nvcsw - a.ru.Nvcsw
	u.ProcInvoluntarySwitches = b.ru.Nivcsw - a.ru.Nivcsw
	u.ProcUserCPU = time.Duration(b.ru.Utime.Nano() - a.ru.Utime.Nano())
	u.ProcSystemCPU = time.Duration(b.ru.Stime.Nano() - a.ru.Stime.Nano())
	u.ProcReadBytes = max(b.readBytes-a.readBytes, 0)
	u.OwnCodeReadBytes = min(max(b.ownCode-a.ownCode, 0), u.ProcReadBytes)
	u.ReadFromDisk = u.ProcReadBytes > u.OwnCodeReadBytes
	names := make([]string, 0, len(b.disks))
	for n := range b.disks {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		d0, ok := a.disks[n]
		if !ok || !physical[n] {
			continue
		}
		d1 := b.disks[n]
		bytes := int64(delta(d0.SectorsRead, d1.SectorsRead)) * 512
		u.DeviceReadBytes += bytes
		if reads := int64(delta(d0.Reads, d1.Reads)); reads > 0 || bytes > 0 {
			u.Devices = append(u.Devices, result.DeviceReads{Name: n, Reads: reads, ReadBytes: bytes})
		}
	}
	return u
}

// delta is b − a for counters that only grow (0 if one was reset).
func delta(a, b uint64) uint64 {
	if b < a {
		return 0
	}
	return b - a
}

// cpuUsage is one CPU's time between two samples, in percent.
func cpuUsage(id int, a, b sysfs.CPUTimes) result.CPUUsage {
	c := result.CPUUsage{CPU: id}
	total := float64(delta(a.Total(), b.Total()))
	if total == 0 {
		return c
	}
	pct := func(x, y uint64) float64 { return 100 * float64(delta(x, y)) / total }
	c.UserPct = pct(a.User+a.Nice, b.User+b.Nice)
	c.SystemPct = pct(a.System+a.IRQ+a.SoftIRQ, b.System+b.IRQ+b.SoftIRQ)
	c.StealPct = pct(a.Steal, b.Steal)
	c.BusyPct = c.UserPct + c.SystemPct
	return c
}

// perfReason is a Usage's Perf.Reason for err from perfctr.OpenProcess.
func perfReason(err error) string {
	var pe *perfctr.Error
	if errors.As(err, &pe) {
		return "not available: " + pe.Reason()
	}
	return "not available: " + err.Error()
}
