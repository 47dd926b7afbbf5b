package sysmon

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrFormat is wrapped by every error about a file's contents.
var ErrFormat = errors.New("unexpected format")

// cpuTimes are one CPU line of /proc/stat, in clock ticks. Guest time is
// already included in user and nice.
type cpuTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

func (c cpuTimes) total() uint64 {
	return c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal
}

// stat is what sysmon uses of /proc/stat.
type stat struct {
	CPUs map[int]cpuTimes // per logical CPU
	Ctxt uint64           // context switches since boot, whole machine
}

// parseStat parses /proc/stat.
func parseStat(r io.Reader) (stat, error) {
	st := stat{CPUs: map[int]cpuTimes{}}
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
				return stat{}, fmt.Errorf("parsing /proc/stat: ctxt line %q: %w", sc.Text(), ErrFormat)
			}
			v, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return stat{}, fmt.Errorf("parsing /proc/stat: ctxt %q: %w", f[1], ErrFormat)
			}
			st.Ctxt, haveCtxt = v, true
		case strings.HasPrefix(f[0], "cpu") && f[0] != "cpu":
			id, err := strconv.Atoi(f[0][3:])
			if err != nil || id < 0 {
				return stat{}, fmt.Errorf("parsing /proc/stat: CPU name %q: %w", f[0], ErrFormat)
			}
			if len(f) < 9 { // user..steal; guest fields came later and are optional
				return stat{}, fmt.Errorf("parsing /proc/stat: %s has %d fields, want at least 8: %w", f[0], len(f)-1, ErrFormat)
			}
			var v [8]uint64
			for i := range v {
				if v[i], err = strconv.ParseUint(f[i+1], 10, 64); err != nil {
					return stat{}, fmt.Errorf("parsing /proc/stat: %s field %d %q: %w", f[0], i+1, f[i+1], ErrFormat)
				}
			}
			st.CPUs[id] = cpuTimes{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]}
		}
	}
	if err := sc.Err(); err != nil {
		return stat{}, fmt.Errorf("parsing /proc/stat: %w", err)
	}
	if len(st.CPUs) == 0 || !haveCtxt {
		return stat{}, fmt.Errorf("parsing /proc/stat: no per-CPU lines or no ctxt line: %w", ErrFormat)
	}
	return st, nil
}

// parseIO returns read_bytes from /proc/<pid>/io: bytes this process
// caused to be fetched from storage.
func parseIO(r io.Reader) (int64, error) {
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

// disk is one line of /proc/diskstats, reads only.
type disk struct {
	Reads       uint64 // read requests completed
	SectorsRead uint64 // 512-byte sectors, whatever the device's sector size
}

// parseDiskstats parses /proc/diskstats into reads per device name.
func parseDiskstats(r io.Reader) (map[string]disk, error) {
	out := map[string]disk{}
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
		out[f[2]] = disk{Reads: reads, SectorsRead: sectors}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("parsing /proc/diskstats: %w", err)
	}
	return out, nil
}

// parseFile opens root/rel and parses it.
func parseFile[T any](root, rel string, parse func(io.Reader) (T, error)) (T, error) {
	var zero T
	f, err := os.Open(filepath.Join(root, rel))
	if err != nil {
		return zero, fmt.Errorf("reading %s: %w", rel, err)
	}
	defer f.Close()
	v, err := parse(f)
	if err != nil {
		return zero, fmt.Errorf("reading %s under %s: %w", rel, root, err)
	}
	return v, nil
}

// physicalDisks names the whole block devices backed by hardware (or a
// hypervisor's virtual hardware): the entries of sys/block with a device
// link. Partitions are not listed there, and loop, ram, zram, device-mapper
// and md devices have no device link, so nothing is counted twice. When
// sys/block cannot be read, it falls back to names, leaving out the usual
// virtual devices.
func physicalDisks(root string, names map[string]disk) map[string]bool {
	out := map[string]bool{}
	entries, err := os.ReadDir(filepath.Join(root, "sys/block"))
	if err == nil && len(entries) > 0 {
		for _, e := range entries {
			if _, err := os.Stat(filepath.Join(root, "sys/block", e.Name(), "device")); err == nil {
				out[e.Name()] = true
			}
		}
		return out
	}
	for n := range names {
		virtual := false
		for _, p := range []string{"loop", "ram", "zram", "dm-", "md", "nbd"} {
			virtual = virtual || strings.HasPrefix(n, p)
		}
		if !virtual {
			out[n] = true
		}
	}
	return out
}
