package memlat

import (
	"fmt"
	"strings"

	"github.com/numalab/numalab/internal/sysfs"
	"github.com/numalab/numalab/internal/units"
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
			units.Bytes(need), units.Bytes(max(free, 0)), units.Bytes(m.Available), units.Bytes(Headroom(m)))
	}
	return nil
}
