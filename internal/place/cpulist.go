package place

import (
	"slices"

	"github.com/numalab/numalab/internal/sysfs"
)

// ParseCPUList parses a list in the kernel's cpulist format ("0-3,8",
// "0-1\n") into sorted, distinct numbers; the empty list is nil. The same
// format serves node lists ("0,1", "0-1"). It is sysfs.ParseCPUList for a
// string; errors wrap sysfs.ErrFormat.
func ParseCPUList(s string) ([]int, error) {
	return sysfs.ParseCPUList([]byte(s))
}

// FormatCPUs writes numbers in the kernel's cpulist format: sorted,
// distinct, runs of two or more as ranges ("0-3,8"). The empty set is "".
// Unlike sysfs.FormatCPUList it accepts unsorted input with duplicates.
func FormatCPUs(ids []int) string {
	s := slices.Clone(ids)
	slices.Sort(s)
	return sysfs.FormatCPUList(slices.Compact(s))
}
