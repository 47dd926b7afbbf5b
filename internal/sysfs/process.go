package sysfs

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// A process's files under proc/PID. A process that does not exist (or
// has ended) is an error satisfying errors.Is(err, fs.ErrNotExist).

// Comm returns the command name of process pid (proc/PID/comm), at most
// 15 bytes: "postgres", "mariadbd".
func (f FS) Comm(pid int) (string, error) {
	return f.String(fmt.Sprintf("proc/%d/comm", pid))
}

// ThreadComm returns the name of thread tid of process pid
// (proc/PID/task/TID/comm), which a thread may set for itself.
func (f FS) ThreadComm(pid, tid int) (string, error) {
	return f.String(fmt.Sprintf("proc/%d/task/%d/comm", pid, tid))
}

// Cmdline returns the command line of process pid (proc/PID/cmdline) as
// the kernel gives it: the arguments, each ended by a NUL byte, or the
// text a process wrote over them ("postgres: parallel worker for PID 7").
func (f FS) Cmdline(pid int) (string, error) {
	b, err := f.Bytes(fmt.Sprintf("proc/%d/cmdline", pid))
	return string(b), err
}

// Exe returns the path of the executable that process (or thread) pid
// runs: where its proc/PID/exe link leads.
func (f FS) Exe(pid int) (string, error) {
	return os.Readlink(f.Path(fmt.Sprintf("proc/%d/exe", pid)))
}

// Threads returns the thread IDs of process pid (the entries of
// proc/PID/task), sorted.
func (f FS) Threads(pid int) ([]int, error) {
	ents, err := f.ReadDir(fmt.Sprintf("proc/%d/task", pid))
	if err != nil {
		return nil, err
	}
	var tids []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	slices.Sort(tids)
	return tids, nil
}

// Children returns the children of process pid's main thread
// (proc/PID/task/PID/children): every child of a process that forks only
// from its main thread, as PostgreSQL's postmaster does.
func (f FS) Children(pid int) ([]int, error) {
	rel := fmt.Sprintf("proc/%d/task/%d/children", pid, pid)
	b, err := f.Bytes(rel)
	if err != nil {
		return nil, err
	}
	pids, err := ParsePIDs(b)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	return pids, nil
}

// ParsePIDs parses a list of process IDs separated by white space, as
// proc/PID/task/TID/children holds.
func ParsePIDs(b []byte) ([]int, error) {
	var pids []int
	for _, s := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(s)
		if err != nil || pid <= 0 {
			return nil, fmt.Errorf("process id %q: %w", s, ErrFormat)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}
