package sysfs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// CPUTimes are one CPU line of /proc/stat, in clock ticks. Guest time is
// already included in user and nice.
type CPUTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

func (c CPUTimes) Total() uint64 {
	return c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal
}

// Stat is what /proc/stat says of the CPUs and context switches.
type Stat struct {
	CPUs map[int]CPUTimes // per logical CPU
	Ctxt uint64           // context switches since boot, whole machine
}

// ParseStat parses /proc/stat.
func ParseStat(r io.Reader) (Stat, error) {
	st := Stat{CPUs: map[int]CPUTimes{}}
	haveCtxt := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024) // the intr line is long
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch {
		case f[0] == "ctxt":
			if len(f) != 2 {
				return Stat{}, fmt.Errorf("parsing /proc/stat: ctxt line %q: %w", sc.Text(), ErrFormat)
			}
			v, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return Stat{}, fmt.Errorf("parsing /proc/stat: ctxt %q: %w", f[1], ErrFormat)
			}
			st.Ctxt, haveCtxt = v, true
		case strings.HasPrefix(f[0], "cpu") && f[0] != "cpu":
			id, err := strconv.Atoi(f[0][3:])
			if err != nil || id < 0 {
				return Stat{}, fmt.Errorf("parsing /proc/stat: CPU name %q: %w", f[0], ErrFormat)
			}
			if len(f) < 9 { // user..steal; guest fields came later and are optional
				return Stat{}, fmt.Errorf("parsing /proc/stat: %s has %d fields, want at least 8: %w", f[0], len(f)-1, ErrFormat)
			}
			var v [8]uint64
			for i := range v {
				if v[i], err = strconv.ParseUint(f[i+1], 10, 64); err != nil {
					return Stat{}, fmt.Errorf("parsing /proc/stat: %s field %d %q: %w", f[0], i+1, f[i+1], ErrFormat)
				}
			}
			st.CPUs[id] = CPUTimes{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]}
		}
	}
	if err := sc.Err(); err != nil {
		return Stat{}, fmt.Errorf("parsing /proc/stat: %w", err)
	}
	if len(st.CPUs) == 0 || !haveCtxt {
		return Stat{}, fmt.Errorf("parsing /proc/stat: no per-CPU lines or no ctxt line: %w", ErrFormat)
	}
	return st, nil
}

// ParseIO returns read_bytes from /proc/<pid>/io: bytes this process
// caused to be fetched from storage.
func ParseIO(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.TrimSpace(k) != "read_bytes" {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("parsing /proc/self/io: read_bytes %q: %w", strings.TrimSpace(v), ErrFormat)
		}
		return n, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("parsing /proc/self/io: %w", err)
	}
	return 0, fmt.Errorf("parsing /proc/self/io: no read_bytes line: %w", ErrFormat)
}

// DiskStat is one line of /proc/diskstats, reads only.
type DiskStat struct {
	Reads       uint64 // read requests completed
	SectorsRead uint64 // 512-byte sectors, whatever the device's sector size
}

// ParseDiskstats parses /proc/diskstats into reads per device name.
func ParseDiskstats(r io.Reader) (map[string]DiskStat, error) {
	out := map[string]DiskStat{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 14 {
			return nil, fmt.Errorf("parsing /proc/diskstats: line %q has %d fields, want at least 14: %w",
				sc.Text(), len(f), ErrFormat)
		}
		reads, err1 := strconv.ParseUint(f[3], 10, 64)
		sectors, err2 := strconv.ParseUint(f[5], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("parsing /proc/diskstats: device %s: reads %q, sectors %q: %w", f[2], f[3], f[5], ErrFormat)
		}
		out[f[2]] = DiskStat{Reads: reads, SectorsRead: sectors}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("parsing /proc/diskstats: %w", err)
	}
	return out, nil
}

// ErrNoMapping is returned by ParseSmaps when no mapping contains the address.
var ErrNoMapping = errors.New("no mapping contains the address")

// Mapping is one entry of /proc/<pid>/smaps, sizes in bytes.
type Mapping struct {
	Start, End    uintptr
	Rss           int64
	AnonHugePages int64
}

// ParseSmaps reads smaps text and returns the mapping that contains addr.
func ParseSmaps(r io.Reader, addr uintptr) (Mapping, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var cur Mapping
	in := false
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if lo, hi, ok := strings.Cut(f[0], "-"); ok && !strings.HasSuffix(f[0], ":") {
			if in {
				return cur, nil
			}
			s, err1 := strconv.ParseUint(lo, 16, 64)
			e, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 != nil || err2 != nil {
				return Mapping{}, fmt.Errorf("parsing smaps line %q: %w", line, ErrFormat)
			}
			if uintptr(s) <= addr && addr < uintptr(e) {
				in = true
				cur = Mapping{Start: uintptr(s), End: uintptr(e)}
			}
			continue
		}
		if !in || len(f) < 2 {
			continue
		}
		var dst *int64
		switch f[0] {
		case "Rss:":
			dst = &cur.Rss
		case "AnonHugePages:":
			dst = &cur.AnonHugePages
		default:
			continue
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || len(f) < 3 || f[2] != "kB" {
			return Mapping{}, fmt.Errorf("parsing smaps line %q: %w", line, ErrFormat)
		}
		*dst = v << 10
	}
	if err := sc.Err(); err != nil {
		return Mapping{}, fmt.Errorf("reading smaps: %w", err)
	}
	if in {
		return cur, nil
	}
	return Mapping{}, fmt.Errorf("finding mapping of %#x in smaps: %w", addr, ErrNoMapping)
}

// ParseInterrupts returns the action names /proc/interrupts lists for its
// numbered interrupts, in order: the last field of each line, such as
// "virtio0-reporting_vq" or "nvme0q1". Named lines (NMI, LOC, ...) are
// skipped: their last field is prose.
func ParseInterrupts(r io.Reader) ([]string, error) {
	var names []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024) // a line per interrupt, a column per CPU
	first := true
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if first { // the header: CPU0 CPU1 ...
			first = false
			if len(f) == 0 || !strings.HasPrefix(f[0], "CPU") {
				return nil, fmt.Errorf("parsing /proc/interrupts: header %q does not list CPUs: %w", sc.Text(), ErrFormat)
			}
			continue
		}
		if len(f) < 2 {
			continue
		}
		irq, ok := strings.CutSuffix(f[0], ":")
		if !ok {
			return nil, fmt.Errorf("parsing /proc/interrupts: line %q does not start with an interrupt: %w",
				sc.Text(), ErrFormat)
		}
		if _, err := strconv.Atoi(irq); err != nil {
			continue
		}
		names = append(names, f[len(f)-1])
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("parsing /proc/interrupts: %w", err)
	}
	if first {
		return nil, fmt.Errorf("parsing /proc/interrupts: empty: %w", ErrFormat)
	}
	return names, nil
}

// ParseLimit parses a cgroup limit file holding a number or "max"
// (memory.max, memory.limit_in_bytes, cpu.cfs_quota_us): the number, or
// -1 for "max". cgroup v1 writes -1 or a huge number for no limit; both
// are returned as written.
func ParseLimit(b []byte) (int64, error) {
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return -1, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("cgroup limit %q: want a number or max: %w", s, ErrFormat)
	}
	return v, nil
}

// CPUMax is a cgroup CPU bandwidth limit: QuotaUS microseconds of CPU time
// every PeriodUS; QuotaUS < 0 is no limit.
type CPUMax struct {
	QuotaUS, PeriodUS int64
}

// ParseCPUMax parses cgroup v2's cpu.max: "max 100000" or "150000 100000".
func ParseCPUMax(b []byte) (CPUMax, error) {
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return CPUMax{}, fmt.Errorf("cpu.max %q: want a quota (or max) and a period: %w",
			strings.TrimSpace(string(b)), ErrFormat)
	}
	q, err := ParseLimit([]byte(f[0]))
	p, perr := strconv.ParseInt(f[1], 10, 64)
	if err != nil || perr != nil || p <= 0 {
		return CPUMax{}, fmt.Errorf("cpu.max %q: want a quota (or max) and a positive period: %w",
			strings.TrimSpace(string(b)), ErrFormat)
	}
	return CPUMax{QuotaUS: q, PeriodUS: p}, nil
}

// ParseFeatures parses a virtio device's features file, one '0' or '1'
// per feature bit, bit 0 first, into the set bits.
func ParseFeatures(b []byte) ([]int, error) {
	s := strings.TrimSpace(string(b))
	var bits []int
	for i, c := range s {
		switch c {
		case '1':
			bits = append(bits, i)
		case '0':
		default:
			return nil, fmt.Errorf("virtio features %q: want only 0 and 1: %w", s, ErrFormat)
		}
	}
	return bits, nil
}
