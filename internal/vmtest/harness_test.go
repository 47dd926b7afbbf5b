package vmtest

import (
	"context"
	"errors"
	"testing"
)

// host finds this machine's QEMU, busybox and kernel, or skips saying what
// is missing.
func host(t *testing.T) *Host {
	t.Helper()
	h, err := Find()
	if errors.Is(err, ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestSmoke(t *testing.T) {
	h := host(t)
	r, err := h.Run(context.Background(), Machine{Nodes: 2, CPUsPerNode: 2, ThreadsPerCore: 2, MemOnlyMiB: 256, RAMDiskMiB: 64}, Job{Script: "cat /sys/devices/system/node/online; cat /sys/devices/system/node/node*/distance; cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list; pwd; mount | grep data; exit 3"})
	t.Logf("%s\nexit %d boot %v wall %v err %v", r.Output, r.ExitCode, r.Boot, r.Wall, err)
}
