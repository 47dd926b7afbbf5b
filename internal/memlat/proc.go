package memlat

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ErrNoMapping is returned by ParseSmaps when no mapping contains the address.
var ErrNoMapping = errors.New("no mapping contains the address")

// ErrBadProc is wrapped by the parsers for text that is not what the kernel writes.
var ErrBadProc = errors.New("unexpected /proc format")

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
				return Mapping{}, fmt.Errorf("parsing smaps line %q: %w", line, ErrBadProc)
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
			return Mapping{}, fmt.Errorf("parsing smaps line %q: %w", line, ErrBadProc)
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

// Meminfo is what the probe needs from /proc/meminfo, in bytes.
type Meminfo struct {
	Total, Available int64
}

// ParseMeminfo reads /proc/meminfo text.
func ParseMeminfo(r io.Reader) (Meminfo, error) {
	var m Meminfo
	var seenT, seenA bool
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		var dst *int64
		switch f[0] {
		case "MemTotal:":
			dst, seenT = &m.Total, true
		case "MemAvailable:":
			dst, seenA = &m.Available, true
		default:
			continue
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || len(f) < 3 || f[2] != "kB" {
			return Meminfo{}, fmt.Errorf("parsing meminfo line %q: %w", sc.Text(), ErrBadProc)
		}
		*dst = v << 10
	}
	if err := sc.Err(); err != nil {
		return Meminfo{}, fmt.Errorf("reading meminfo: %w", err)
	}
	if !seenT || !seenA {
		return Meminfo{}, fmt.Errorf("parsing meminfo: MemTotal or MemAvailable missing: %w", ErrBadProc)
	}
	return m, nil
}

// Headroom is the memory the probe leaves free: a quarter of MemTotal, at
// least 512 MiB, so other work on the machine keeps running.
func Headroom(m Meminfo) int64 {
	return max(m.Total/4, 512<<20)
}

// CheckFits returns an error when need bytes would leave less than
// Headroom(m) available.
func CheckFits(need int64, m Meminfo) error {
	free := m.Available - Headroom(m)
	if need > free {
		return fmt.Errorf("checking memory: the probe needs %s but only %s may be used (MemAvailable %s, keeping %s free); try a smaller --max",
			FormatBytes(need), FormatBytes(max(free, 0)), FormatBytes(m.Available), FormatBytes(Headroom(m)))
	}
	return nil
}

// FormatBytes prints a size with a binary unit: 4KiB, 1.5MiB, 1GiB.
func FormatBytes(b int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v := float64(b)
	u := 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + units[u]
}

// ParseBytes reads a size such as 4096, 64k, 32KiB, 1m, 1g or 1GiB.
func ParseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "ib"), "b")
	mult := int64(1)
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k':
			mult = 1 << 10
		case 'm':
			mult = 1 << 20
		case 'g':
			mult = 1 << 30
		case 't':
			mult = 1 << 40
		}
		if mult > 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 || v*float64(mult) > 1<<50 {
		return 0, fmt.Errorf("parsing size %q: want a positive size such as 64k, 256m or 1g", s)
	}
	return int64(v * float64(mult)), nil
}
