// Package managedtest holds what the tests of every managed server kind
// (pgserver, mariaserver) share: a server whose numalab process is killed
// under it, and reading /proc (through sysfs) for what is left.
//
// It is for tests only, and reads the host's processes: those it names
// are the tests' own.
package managedtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/sysfs"
)

// childEnv marks the child process KillOwner runs.
const childEnv = "NUMALAB_MANAGED_CHILD"

// KillOwner checks that a server dies with the numalab process that
// started it. It runs the calling test again in a child process, with
// its own TMPDIR (which the server's account can enter when run as root):
// there start starts a server, and KillOwner says where and waits to be
// killed. Back in the parent it SIGKILLs the child once the server is up
// (no chance to clean up), waits for the server's process group to go
// (the parent-death signal), and returns the server's pid, the directory
// it left (removed at the test's end, if still there) and the TMPDIR.
// The test must call KillOwner before anything else.
func KillOwner(t *testing.T, start func() (pid int, dir string, err error)) (pid int, dir, tmp string) {
	t.Helper()
	if os.Getenv(childEnv) == "1" {
		pid, dir, err := start()
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("server", pid, dir)
		time.Sleep(time.Minute)
		os.Exit(1)
	}
	tmp, err := os.MkdirTemp("", "numalab-reclaim-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$")
	cmd.Env = append(os.Environ(), childEnv+"=1", "TMPDIR="+tmp)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	var word string
	if _, err := fmt.Fscan(out, &word, &pid, &dir); err != nil || word != "server" {
		t.Fatalf("child said %q %d %q, %v", word, pid, dir, err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cmd.Process.Kill()
	deadline := time.Now().Add(20 * time.Second)
	for Alive(pid) || GroupAlive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(-pid, syscall.SIGKILL)
			t.Fatalf("server %d still running 20 s after its parent was killed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !Exists(filepath.Join(dir, "data")) {
		t.Fatalf("%s: the killed process left no data directory to reclaim", dir)
	}
	return pid, dir, tmp
}

// host reads the processes of this machine.
var host = sysfs.New("/")

// Alive reports whether process pid exists and is not a zombie (an orphan
// waits as a zombie until init reaps it).
func Alive(pid int) bool {
	st, err := host.ProcStat(pid)
	return err == nil && st.State != 'Z'
}

// GroupAlive reports whether any live process is left in process group
// pgid.
func GroupAlive(pgid int) bool {
	pids, _ := host.Numbered("proc", "")
	for _, pid := range pids {
		if st, err := host.ProcStat(pid); err == nil && st.State != 'Z' && st.PGRP == pgid {
			return true
		}
	}
	return false
}

// ProcUID reads the real uid of a process.
func ProcUID(t *testing.T, pid int) int {
	t.Helper()
	b, err := host.Bytes(fmt.Sprintf("proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
			uid, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatal(err)
			}
			return uid
		}
	}
	t.Fatalf("no Uid line in /proc/%d/status", pid)
	return 0
}

// Exists reports whether p exists.
func Exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
