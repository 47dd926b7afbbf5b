// Package owner names the process that owns something numalab leaves
// behind while it works (a managed server's directory, a run in the
// store) and says whether that process is gone, so that what a killed
// numalab left can be told from what a live one is using.
//
// A process is its host, PID and start time (/proc/PID/stat): a PID
// reused by a later process has another start time. Gone is conservative:
// it says a process is gone only when it can tell (same host, and /proc
// has no such process, a zombie, or one started at another time); it
// refuses to judge a process of another host.
package owner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/numalab/numalab/internal/sysfs"
)

// Process names one process on one machine.
type Process struct {
	Host string `json:"host"`
	PID  int    `json:"pid"`
	// Start is the process's start time in clock ticks after boot.
	Start uint64 `json:"start"`
}

// Self returns the calling process, read through proc (sysfs.New("/")).
func Self(proc sysfs.FS) (Process, error) {
	host, err := os.Hostname()
	if err != nil {
		return Process{}, fmt.Errorf("naming this process: %w", err)
	}
	st, err := proc.ProcStat(os.Getpid())
	if err != nil {
		return Process{}, fmt.Errorf("naming this process: %w", err)
	}
	return Process{Host: host, PID: os.Getpid(), Start: st.Start}, nil
}

// Gone reports whether p has certainly exited, as the package
// documentation describes. The zero Process is never gone.
func (p Process) Gone(proc sysfs.FS) bool {
	host, err := os.Hostname()
	if p.PID <= 0 || err != nil || host != p.Host {
		return false
	}
	st, err := proc.ProcStat(p.PID)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	return err == nil && (st.Start != p.Start || st.State == 'Z')
}
