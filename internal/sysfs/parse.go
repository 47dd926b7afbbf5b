package sysfs

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/units"
)

// maxCPU bounds CPU numbers read from lists, so a corrupt file cannot make
// a reader allocate gigabytes.
const maxCPU = 1 << 20

// ParseCPUList parses a kernel CPU list: comma-separated numbers and
// ranges, "0-3,8,10-11" (the kernel's stride form "0-15:2/4" is not
// accepted). Empty input is the empty set. The result is sorted and without
// duplicates.
func ParseCPUList(b []byte) ([]int, error) {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return nil, nil
	}
	var cpus []int
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 || a > maxCPU {
			return nil, fmt.Errorf("CPU list %q: %q is not a CPU number or range (want e.g. 0-3,8): %w", s, part, ErrFormat)
		}
		z := a
		if isRange {
			z, err = strconv.Atoi(hi)
			if err != nil || z < a || z > maxCPU {
				return nil, fmt.Errorf("CPU list %q: %q is not a CPU range (want e.g. 0-3): %w", s, part, ErrFormat)
			}
		}
		for c := a; c <= z; c++ {
			cpus = append(cpus, c)
		}
	}
	return normalize(cpus), nil
}

// FormatCPUList writes a sorted CPU set in the kernel's list form
// ("0-3,8"); the empty set is "".
func FormatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", cpus[i], cpus[j])
		} else {
			fmt.Fprintf(&b, "%d", cpus[i])
		}
		i = j + 1
	}
	return b.String()
}

// ParseCPUMask parses a hex CPU mask as the kernel writes it: 32-bit
// groups separated by commas, most significant first
// ("00000000,0000000f" is CPUs 0-3). Groups may be shorter than eight
// digits and may carry a "0x" prefix (hwloc's form, "0x000000ff,0x0000000f").
// The result is sorted.
func ParseCPUMask(b []byte) ([]int, error) {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return nil, nil
	}
	groups := strings.Split(s, ",")
	if len(groups)*32 > maxCPU {
		return nil, fmt.Errorf("CPU mask has %d groups, more than any machine: %w", len(groups), ErrFormat)
	}
	var cpus []int
	for i, g := range groups {
		g = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(g), "0x"), "0X")
		if g == "" {
			g = "0"
		}
		v, err := strconv.ParseUint(g, 16, 32)
		if err != nil {
			return nil,
				fmt.Errorf("CPU mask %q: group %q is not up to 8 hex digits (want e.g. 00000000,0000000f): %w", s, g, ErrFormat)
		}
		base := (len(groups) - 1 - i) * 32
		for bit := 0; bit < 32; bit++ {
			if v&(1<<bit) != 0 {
				cpus = append(cpus, base+bit)
			}
		}
	}
	return normalize(cpus), nil
}

// ParseSize parses a size as sysfs writes cache sizes, "32K", "30720K",
// "2M", in units.Bytes's grammar (K, M and G are binary).
func ParseSize(b []byte) (int64, error) {
	v, err := units.Parse(string(b))
	if err != nil {
		return 0, fmt.Errorf("%w: %w", err, ErrFormat)
	}
	return int64(v), nil
}

// ParseMeminfo parses /proc/meminfo or a node's meminfo ("Node 0 MemTotal:
// 8387892 kB") into bytes by field name ("MemTotal"). Fields without a kB
// unit (HugePages_Total) are counts and are returned as they are.
func ParseMeminfo(r io.Reader) (map[string]int64, error) {
	m := make(map[string]int64)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		key, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if f := strings.Fields(key); len(f) > 0 {
			key = f[len(f)-1] // drop "Node 0"
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("meminfo line %q: want a number: %w", line, ErrFormat)
		}
		if len(f) > 1 && strings.EqualFold(f[1], "kB") {
			v *= 1024
		}
		m[key] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading meminfo: %w", err)
	}
	return m, nil
}

// Mount is one line of /proc/mounts.
type Mount struct {
	Device, Dir, Type string
	Options           []string
}

// ParseMounts parses /proc/mounts (octal escapes such as \040 in paths are
// decoded).
func ParseMounts(r io.Reader) ([]Mount, error) {
	var ms []Mount
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 4 {
			return nil, fmt.Errorf("mounts line %q: want device, directory, type and options: %w", sc.Text(), ErrFormat)
		}
		ms = append(ms, Mount{Device: unescape(f[0]), Dir: unescape(f[1]), Type: f[2], Options: strings.Split(f[3], ",")})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading mounts: %w", err)
	}
	return ms, nil
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// CgroupLine is one line of /proc/self/cgroup: "hierarchy:controllers:path"
// (hierarchy 0 with no controllers is cgroup v2).
type CgroupLine struct {
	Hierarchy   int
	Controllers []string
	Path        string
}

// ParseCgroup parses /proc/<pid>/cgroup.
func ParseCgroup(r io.Reader) ([]CgroupLine, error) {
	var ls []CgroupLine
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			return nil, fmt.Errorf("cgroup line %q: want hierarchy:controllers:path: %w", line, ErrFormat)
		}
		h, err := strconv.Atoi(f[0])
		if err != nil {
			return nil, fmt.Errorf("cgroup line %q: hierarchy is not a number: %w", line, ErrFormat)
		}
		var cs []string
		if f[1] != "" {
			cs = strings.Split(f[1], ",")
		}
		ls = append(ls, CgroupLine{Hierarchy: h, Controllers: cs, Path: f[2]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading cgroup: %w", err)
	}
	return ls, nil
}

// CPUInfo is what /proc/cpuinfo says about one logical CPU.
type CPUInfo struct {
	Processor  int
	ModelName  string // "model name" (x86), else "Processor"/"cpu" where that names the model
	PhysicalID int    // "physical id", -1 if absent
	Flags      []string
}

// ParseCPUInfo parses /proc/cpuinfo into one entry per "processor" block.
func ParseCPUInfo(r io.Reader) ([]CPUInfo, error) {
	var out []CPUInfo
	cur := -1
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var global string // a model named outside processor blocks (some ARM kernels)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "processor":
			n, err := strconv.Atoi(val)
			if err != nil {
				// Old ARM kernels: "Processor : ARMv7 ..." names the model.
				global = val
				continue
			}
			out = append(out, CPUInfo{Processor: n, PhysicalID: -1})
			cur = len(out) - 1
		case "model name", "cpu model", "Processor":
			if cur >= 0 {
				if out[cur].ModelName == "" {
					out[cur].ModelName = val
				}
			} else {
				global = val
			}
		case "cpu": // powerpc
			if cur >= 0 && out[cur].ModelName == "" {
				out[cur].ModelName = val
			}
		case "physical id":
			if cur >= 0 {
				if n, err := strconv.Atoi(val); err == nil {
					out[cur].PhysicalID = n
				}
			}
		case "flags", "Features":
			if cur >= 0 {
				out[cur].Flags = strings.Fields(val)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading cpuinfo: %w", err)
	}
	if global != "" {
		for i := range out {
			if out[i].ModelName == "" {
				out[i].ModelName = global
			}
		}
	}
	return out, nil
}

// FirstLine returns the first line of b, trimmed.
func FirstLine(b []byte) string {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return strings.TrimSpace(string(line))
}

// Bracketed returns the word in square brackets in a sysfs choice file
// ("always [madvise] never" yields "madvise"), or the whole trimmed text
// when nothing is bracketed.
func Bracketed(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '['); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j > 0 {
			return s[i+1 : i+j]
		}
	}
	return s
}

func normalize(cpus []int) []int {
	sortInts(cpus)
	return slices.Compact(cpus)
}

func sortInts(s []int) { slices.Sort(s) }

// ProcStat is what numalab reads of a /proc/PID/stat line.
type ProcStat struct {
	// State is the process state letter: R, S, D, Z (zombie), ...
	State byte
	// PPID is the parent's process id (field 4), PGRP its process group
	// (field 5).
	PPID, PGRP int
	// Start is when the process started, in clock ticks after boot (field
	// 22): with the PID it names one process, even after the PID is reused.
	Start uint64
}

// ParseProcStat parses a /proc/PID/stat line. The command name (field 2)
// is in parentheses and may itself hold spaces and parentheses, so the
// fields are counted from the last ')'.
func ParseProcStat(b []byte) (ProcStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ProcStat{}, fmt.Errorf("parsing /proc/PID/stat: no command name in %q: %w", FirstLine(b), ErrFormat)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so field 22 (starttime) is f[19].
	if len(f) < 20 || len(f[0]) != 1 {
		return ProcStat{},
			fmt.Errorf("parsing /proc/PID/stat: %d fields after the command name, want at least 20: %w", len(f), ErrFormat)
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return ProcStat{}, fmt.Errorf("parsing /proc/PID/stat: start time %q: %w", f[19], ErrFormat)
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return ProcStat{}, fmt.Errorf("parsing /proc/PID/stat: parent %q: %w", f[1], ErrFormat)
	}
	pgrp, err := strconv.Atoi(f[2])
	if err != nil {
		return ProcStat{}, fmt.Errorf("parsing /proc/PID/stat: process group %q: %w", f[2], ErrFormat)
	}
	return ProcStat{State: f[0][0], PPID: ppid, PGRP: pgrp, Start: start}, nil
}
