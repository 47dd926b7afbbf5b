package owner

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/sysfs"
)

// TestGone names a real child process, and checks it is alive while it
// runs, gone once killed (as a zombie and once reaped), and that its PID
// with another start time (reuse) or on another host is judged right.
func TestGone(t *testing.T) {
	proc := sysfs.New("/")
	self, err := Self(proc)
	if err != nil {
		t.Fatal(err)
	}
	if self.PID != os.Getpid() || self.Start == 0 || self.Gone(proc) {
		t.Fatalf("Self = %+v, gone %v", self, self.Gone(proc))
	}
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Skip(err)
	}
	st, err := proc.ProcStat(child.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	p := Process{Host: self.Host, PID: child.Process.Pid, Start: st.Start}
	if p.Gone(proc) {
		t.Error("a running child is gone")
	}
	if reused := (Process{Host: p.Host, PID: p.PID, Start: p.Start + 1}); !reused.Gone(proc) {
		t.Error("a PID with another start time (reused) is not gone")
	}
	if elsewhere := (Process{Host: p.Host + ".elsewhere", PID: 1 << 30, Start: 1}); elsewhere.Gone(proc) {
		t.Error("a process of another host is judged gone")
	}
	if (Process{}).Gone(proc) {
		t.Error("the zero Process is gone")
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Killed but not yet reaped: a zombie, gone all the same.
	for deadline := time.Now().Add(5 * time.Second); !p.Gone(proc) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if !p.Gone(proc) {
		t.Error("a killed child is not gone")
	}
	child.Wait()
	if !p.Gone(proc) {
		t.Error("a reaped child is not gone")
	}
}
