package sysmon

import (
	"errors"
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/sysfs"
)

func TestPhysicalDisks(t *testing.T) {
	disks, err := sysfs.Parse(sysfs.New("testdata/kvm2"), "proc/diskstats", sysfs.ParseDiskstats)
	if err != nil {
		t.Fatal(err)
	}
	got := physicalDisks(sysfs.New("testdata/kvm2"), disks)
	if len(got) != 1 || !got["vda"] {
		t.Errorf("from sys/block: %v, want only vda", got)
	}
	// Without sys/block: names decide.
	got = physicalDisks(sysfs.New(t.TempDir()),
		map[string]sysfs.DiskStat{"vda": {}, "loop3": {}, "zram0": {}, "dm-0": {}, "nvme0n1": {}})
	if len(got) != 2 || !got["vda"] || !got["nvme0n1"] {
		t.Errorf("from names: %v, want vda and nvme0n1", got)
	}
}

func TestTakeFixture(t *testing.T) {
	s, err := take(sysfs.New("testdata/kvm2"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.stat.CPUs) != 2 || s.disks["vda"].Reads == 0 {
		t.Errorf("fixture read: %d CPUs, vda %+v", len(s.stat.CPUs), s.disks["vda"])
	}
	if _, err := take(sysfs.New(t.TempDir())); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("empty root: err = %v, want a not-exist error", err)
	}
}

func TestUsage(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := snapshot{at: t0,
		stat: sysfs.Stat{CPUs: map[int]sysfs.CPUTimes{
			0: {User: 100, Idle: 900},
			1: {User: 100, System: 50, Idle: 800, Steal: 10},
		}, Ctxt: 1000},
		readBytes: 4096,
		disks:     map[string]sysfs.DiskStat{"vda": {Reads: 10, SectorsRead: 80}, "loop0": {Reads: 1, SectorsRead: 8}},
	}
	a.ru.Nvcsw, a.ru.Nivcsw = 5, 1
	b := snapshot{at: t0.Add(2 * time.Second),
		stat: sysfs.Stat{CPUs: map[int]sysfs.CPUTimes{
			0: {User: 150, Nice: 10, System: 20, IRQ: 5, SoftIRQ: 5, Idle: 1010}, // +200: 60 user, 30 sys
			1: {User: 100, System: 50, Idle: 980, Steal: 30},                     // +200: 20 steal
			2: {User: 1, Idle: 1},                                                // came online: skipped
		}, Ctxt: 5000},
		readBytes: 4096 + 8192,
		disks:     map[string]sysfs.DiskStat{"vda": {Reads: 12, SectorsRead: 96}, "loop0": {Reads: 5, SectorsRead: 800}},
	}
	b.ru.Nvcsw, b.ru.Nivcsw = 25, 4
	b.ru.Utime = unix.Timeval{Sec: 1, Usec: 500}
	u := usage(a, b, map[string]bool{"vda": true})
	if u.Elapsed != 2*time.Second || len(u.CPUs) != 2 {
		t.Fatalf("elapsed %v, %d CPUs; want 2s, 2", u.Elapsed, len(u.CPUs))
	}
	c0, c1 := u.CPUs[0], u.CPUs[1]
	if !near(c0.UserPct, 30) || !near(c0.SystemPct, 15) || !near(c0.BusyPct, 45) || c0.StealPct != 0 {
		t.Errorf("cpu0 = %+v, want user 30%%, system 15%%, busy 45%%", c0)
	}
	if c1.BusyPct != 0 || !near(c1.StealPct, 10) {
		t.Errorf("cpu1 = %+v, want busy 0%%, steal 10%%", c1)
	}
	if !near(u.CtxSwitchesPerSec, 2000) {
		t.Errorf("ctx switches/s = %v, want 2000", u.CtxSwitchesPerSec)
	}
	if u.ProcVoluntarySwitches != 20 || u.ProcInvoluntarySwitches != 3 ||
		u.ProcUserCPU != time.Second+500*time.Microsecond {
		t.Errorf("process: %d voluntary, %d involuntary, user %v",
			u.ProcVoluntarySwitches, u.ProcInvoluntarySwitches, u.ProcUserCPU)
	}
	if u.ProcReadBytes != 8192 || !u.ReadFromDisk {
		t.Errorf("process read %d bytes, read from disk %v; want 8192, true", u.ProcReadBytes, u.ReadFromDisk)
	}
	if u.DeviceReadBytes != 16*512 || len(u.Devices) != 1 || u.Devices[0].Reads != 2 {
		t.Errorf("devices: %d bytes, %+v; want 8192 bytes from vda only (loop0 is virtual)", u.DeviceReadBytes, u.Devices)
	}
	if got := u.BusyPct([]int{0}); !near(got, 45) {
		t.Errorf("BusyPct(cpu0) = %v, want 45", got)
	}
	if got := u.BusyPct(nil); !near(got, 22.5) {
		t.Errorf("BusyPct(all) = %v, want 22.5", got)
	}
	// Nothing read: not flagged.
	b.readBytes = a.readBytes
	if u := usage(a, b, nil); u.ReadFromDisk || u.DeviceReadBytes != 0 {
		t.Errorf("no reads: flagged %v, device bytes %d", u.ReadFromDisk, u.DeviceReadBytes)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// burn spins on a new, locked OS thread until that thread has had d of
// CPU time (not wall time: the machine may be shared), so that per-thread
// counting must follow threads created after the counters opened.
func burn(d time.Duration) {
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread() // exits locked: the thread ends with it
		x := uint64(1)
		for threadCPU() < d {
			for range 10000 {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
			}
		}
		sink = x
		close(done)
	}()
	<-done
}

// threadCPU is the calling thread's CPU time.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic(err)
	}
	return time.Duration(ts.Nano())
}

var sink uint64

func TestSamplerOnHost(t *testing.T) {
	s, err := Start("/")
	if err != nil {
		t.Fatal(err)
	}
	burn(150 * time.Millisecond)
	u, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stop(); err == nil {
		t.Error("second Stop did not fail")
	}
	if len(u.CPUs) == 0 {
		t.Errorf("no CPUs sampled")
	}
	if u.ProcUserCPU+u.ProcSystemCPU < 50*time.Millisecond {
		t.Errorf("process CPU time %v after a 150ms spin", u.ProcUserCPU+u.ProcSystemCPU)
	}
	if u.Elapsed < u.ProcUserCPU+u.ProcSystemCPU-50*time.Millisecond {
		t.Errorf("elapsed %v, less than the process's CPU time on one thread", u.Elapsed)
	}
	switch {
	case u.Perf.Available:
		if u.Perf.Cycles == 0 || u.Perf.Instructions == 0 {
			t.Errorf("perf available but counted %d cycles, %d instructions", u.Perf.Cycles, u.Perf.Instructions)
		}
		t.Logf("perf: %d cycles, %d instructions, %d LLC misses (user only %v)",
			u.Perf.Cycles, u.Perf.Instructions, u.Perf.LLCMisses, u.Perf.UserOnly)
	default:
		if !strings.HasPrefix(u.Perf.Reason, "not available: ") || u.Perf.Cycles != 0 {
			t.Errorf("perf not available but reason %q, cycles %d", u.Perf.Reason, u.Perf.Cycles)
		}
		t.Logf("perf: %s", u.Perf.Reason)
	}
	t.Logf("busy %.1f%%, %.0f ctx switches/s, process %d vol %d invol switches, read %d B",
		u.BusyPct(nil), u.CtxSwitchesPerSec, u.ProcVoluntarySwitches, u.ProcInvoluntarySwitches, u.ProcReadBytes)
}
