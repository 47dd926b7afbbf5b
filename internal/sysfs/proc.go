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
			return nil, fmt.Errorf("parsing /proc/diskstats: line %q has %d fields, want at least 14: %w", sc.Text(), len(f), ErrFormat)
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
