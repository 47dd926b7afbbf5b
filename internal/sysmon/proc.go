package sysmon

import (
	"strings"

	"github.com/numalab/numalab/internal/sysfs"
)

// physicalDisks names the whole block devices backed by hardware (or a
// hypervisor's virtual hardware): the entries of sys/block with a device
// link. Partitions are not listed there, and loop, ram, zram, device-mapper
// and md devices have no device link, so nothing is counted twice. When
// sys/block cannot be read, it falls back to names, leaving out the usual
// virtual devices.
func physicalDisks(f sysfs.FS, names map[string]sysfs.DiskStat) map[string]bool {
	out := map[string]bool{}
	entries, err := f.ReadDir("sys/block")
	if err == nil && len(entries) > 0 {
		for _, e := range entries {
			if f.Exists("sys/block/" + e.Name() + "/device") {
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
