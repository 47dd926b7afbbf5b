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
		return Meminfo{}, fmt.Errorf("reading memory available: MemTotal or MemAvailable missing from %s/proc/meminfo: %w",
			strings.TrimSuffix(root, "/"), sysfs.ErrFormat)
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
		return fmt.Errorf("checking memory: the probe needs %s but only %s may be used "+
			"(MemAvailable %s, keeping %s free); try a smaller --max",
			units.Bytes(need), units.Bytes(max(free, 0)), units.Bytes(m.Available), units.Bytes(Headroom(m)))
	}
	return nil
}

// nodeMargin is what a buffer bound to a node leaves of the node's free
// memory, for the process's other allocations and the kernel's there.
const nodeMargin = 64 << 20

// NodeUsable is how much a buffer bound to node may take without the
// kernel killing the process for want of memory there: the node's free
// memory and its inactive file pages (which the kernel reclaims first),
// less nodeMargin, from root/sys/devices/system/node/nodeN/meminfo. A RAM
// disk's pages and tmpfs files count as used: they cannot be reclaimed.
func NodeUsable(root string, node int) (int64, error) {
	path := fmt.Sprintf("sys/devices/system/node/node%d/meminfo", node)
	m, err := sysfs.Parse(sysfs.New(root), path, sysfs.ParseMeminfo)
	if err != nil {
		return 0, fmt.Errorf("reading node %d's free memory: %w", node, err)
	}
	free, ok := m["MemFree"]
	if !ok {
		return 0, fmt.Errorf("reading node %d's free memory: MemFree missing from %s: %w", node, path, sysfs.ErrFormat)
	}
	return max(free+m["Inactive(file)"]-nodeMargin, 0), nil
}
