package memlat

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/sysfs"
)

// Meminfo is what the probe needs from /proc/meminfo, in bytes.
type Meminfo struct {
	Total, Available int64
}

// ReadMeminfo reads root/proc/meminfo.
func ReadMeminfo(root string) (Meminfo, error) {
	m, err := sysfs.Parse(sysfs.New(root), "proc/meminfo", sysfs.ParseMeminfo)
	if err != nil {
		return Meminfo{}, fmt.Errorf("reading memory available: %w", err)
	}
	total, okT := m["MemTotal"]
	avail, okA := m["MemAvailable"]
	if !okT || !okA {
		return Meminfo{}, fmt.Errorf("reading memory available: MemTotal or MemAvailable missing from %s/proc/meminfo: %w", strings.TrimSuffix(root, "/"), sysfs.ErrFormat)
	}
	return Meminfo{Total: total, Available: avail}, nil
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
