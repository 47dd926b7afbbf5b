package managed

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/numalab/numalab/internal/owner"
	"github.com/numalab/numalab/internal/sysfs"
)

// deadProcess returns a process that ran on this host and is gone: a
// child named while it ran, then killed and reaped.
func deadProcess(t *testing.T) owner.Process {
	t.Helper()
	proc := sysfs.New("/")
	self, err := owner.Self(proc)
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Skip(err)
	}
	st, err := proc.ProcStat(child.Process.Pid)
	child.Process.Kill()
	child.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return owner.Process{Host: self.Host, PID: child.Process.Pid, Start: st.Start}
}

// TestReclaimOnlyTheDead removes a directory whose owner is gone, or whose
// PID another process now has, releasing what it left outside, and keeps
// one whose owner or server lives, one without a marker, and what does not
// look like a server's.
func TestReclaimOnlyTheDead(t *testing.T) {
	proc := sysfs.New("/")
	self, err := owner.Self(proc)
	if err != nil {
		t.Fatal(err)
	}
	dead := deadProcess(t)
	reused := self
	reused.Start++
	tmp := t.TempDir()
	mk := func(name string, m *Marker) string {
		dir := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
			t.Fatal(err)
		}
		if m != nil {
			if err := WriteMarker(dir, *m); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	gone := mk("numalab-test-dead", &Marker{Owner: dead, Server: dead})
	reusedDir := mk("numalab-test-reused", &Marker{Owner: reused})
	live := mk("numalab-test-live", &Marker{Owner: self})
	serverLive := mk("numalab-test-serverlive", &Marker{Owner: dead, Server: self})
	unmarked := mk("numalab-test-unmarked", nil)
	other := mk("other-dead", &Marker{Owner: dead})

	var released []string
	k := Kind{Prefix: "numalab-test-", Release: func(_ sysfs.FS, dir string, _ Marker) error {
		released = append(released, dir)
		return nil
	}}
	removed, err := Reclaim(proc, tmp, k)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	if want := []string{gone, reusedDir}; !slices.Equal(removed, want) {
		t.Errorf("Reclaim removed %v, want %v", removed, want)
	}
	if slices.Sort(released); !slices.Equal(released, removed) {
		t.Errorf("Reclaim released %v, want %v", released, removed)
	}
	for _, d := range []string{live, serverLive, unmarked, other} {
		if !exists(d) {
			t.Errorf("%s removed", d)
		}
	}
	for _, d := range []string{gone, reusedDir} {
		if exists(d) {
			t.Errorf("%s left", d)
		}
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
