package vmtest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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

func TestQemuArgs(t *testing.T) {
	m := Machine{Nodes: 2, CPUsPerNode: 4, Sockets: 2, ThreadsPerCore: 2, MemPerNodeMiB: 512, MemOnlyMiB: 256,
		Distances: map[[2]int]int{{1, 0}: 12, {0, 2}: 40}}
	if err := m.check(); err != nil {
		t.Fatal(err)
	}
	args := strings.Join(m.qemuArgs("K", "I", "C", "O", "B"), " ")
	for _, want := range []string{
		"-cpu max,vendor=GenuineIntel", "-m 1280M", "-smp 8,sockets=2,cores=2,threads=2",
		"-object memory-backend-ram,id=m0,size=512M -numa node,nodeid=0,memdev=m0,cpus=0-3",
		"-object memory-backend-ram,id=m1,size=512M -numa node,nodeid=1,memdev=m1,cpus=4-7",
		"-numa dist,src=0,dst=1,val=12",
		"-object memory-backend-ram,id=m2,size=256M -numa node,nodeid=2,memdev=m2 ",
		"-numa dist,src=0,dst=2,val=40", "-numa dist,src=1,dst=2,val=21",
		"-kernel K -initrd I", "-serial file:C -serial file:O",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("qemu arguments lack %q:\n%s", want, args)
		}
	}
	if args := strings.Join(Machine{Nodes: 1, CPUsPerNode: 1}.qemuArgs("K", "I", "C", "O", "B"),
		" "); !strings.Contains(args, "-cpu max ") ||
		strings.Contains(args, "dist") || strings.Contains(args, "-netdev") {
		t.Errorf("one node, no SMT, no network: %s", args)
	}
	net := Machine{Nodes: 1, CPUsPerNode: 1, HostPort: 5433}
	if args, want := strings.Join(net.qemuArgs("K", "I", "C", "O", "/B"), " "),
		"-netdev user,id=n0,restrict=on,guestfwd=tcp:10.0.2.100:5433-cmd:/B nc 127.0.0.1 5433 -device "+
			"virtio-net-pci,netdev=n0"; !strings.Contains(args, want) {
		t.Errorf("host port 5433: qemu arguments lack %q:\n%s", want, args)
	}
	if got, want := net.String(), "1 node × 1 CPU, host port 5433"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, want := (Machine{Nodes: 4, CPUsPerNode: 1, Sockets: 2, RAMDiskMiB: 8}).String(),
		"4 nodes × 1 CPU, 2 sockets, ext2"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, want := (Machine{Nodes: 1, CPUsPerNode: 1, RAMDiskMiB: 8, RAMDiskFS: "ext4"}).String(),
		"1 node × 1 CPU, ext4"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, want := m.String(), "2 nodes × 4 CPUs, 2 sockets, SMT 2, memory-only node 2"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	for _, bad := range []Machine{
		{Nodes: 0, CPUsPerNode: 1},
		{Nodes: 2, CPUsPerNode: 1, ThreadsPerCore: 2},
		{Nodes: 1, CPUsPerNode: 3, Sockets: 2},
		{Nodes: 2, CPUsPerNode: 1, Distances: map[[2]int]int{{0, 1}: 5}},
		{Nodes: 2, CPUsPerNode: 1, Distances: map[[2]int]int{{0, 2}: 20}},
		{Nodes: 1, CPUsPerNode: 1, RAMDiskMiB: 8, RAMDiskFS: "xfs"},
		{Nodes: 1, CPUsPerNode: 1, HostPort: 70000},
	} {
		if err := bad.check(); err == nil {
			t.Errorf("machine %+v accepted", bad)
		}
	}
}

// TestRunTimeoutKillsQemu: a command that outlives its time has its qemu
// killed by PID, and Run says so. 3 s is enough: the time-out is Run's
// own timer, started with qemu, which it kills whether or not the guest
// has booted by then.
func TestRunTimeoutKillsQemu(t *testing.T) {
	h := host(t)
	start := time.Now()
	r, err := h.Run(context.Background(), Machine{Nodes: 1, CPUsPerNode: 1},
		Job{Script: "echo started; sleep 600", Timeout: 3 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "timed out after 3s") {
		t.Fatalf("Run = %v, want a time-out error", err)
	}
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("Run took %v with a 3s time-out", d)
	}
	assertGone(t, killedPID(t, err))
	t.Logf("%v; output %q", err, r.Output)
}

// TestRunBootLimitKillsQemu: a guest whose /init has not announced itself
// by the boot limit is cut there, long before the run's own time-out, and
// Run says the kernel did not reach /init. A boot takes 3 s or more of
// the guest's clock here, so a 1 s limit always cuts it.
func TestRunBootLimitKillsQemu(t *testing.T) {
	h := host(t)
	start := time.Now()
	_, err := h.Run(context.Background(), Machine{Nodes: 1, CPUsPerNode: 1},
		Job{Script: "true", Timeout: 5 * time.Minute, BootLimit: time.Second})
	if !errors.Is(err, ErrNoBoot) || !strings.Contains(err.Error(), "did not reach its /init within 1s") {
		t.Fatalf("Run = %v, want the boot limit's error", err)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("Run took %v with a 1s boot limit", d)
	}
	assertGone(t, killedPID(t, err))
}

var killedRE = regexp.MustCompile(`killed qemu \(pid (\d+)\)`)

func killedPID(t *testing.T, err error) int {
	t.Helper()
	m := killedRE.FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("error does not name the qemu it killed: %v", err)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

// assertGone fails unless no process has pid.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	if err := unix.Kill(pid, 0); !errors.Is(err, unix.ESRCH) {
		stat, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		t.Errorf("qemu pid %d still exists (kill 0: %v): %s", pid, err, stat)
	}
}

// TestRunInterruptKillsQemu runs a guest in a child test process, sends the
// child SIGINT once its qemu runs, and checks that the child killed qemu,
// removed the guest's files (its temporary directory, the child's TMPDIR
// here) and then died of the interrupt.
func TestRunInterruptKillsQemu(t *testing.T) {
	if os.Getenv("VMTEST_INTERRUPT_CHILD") == "1" {
		_, err := host(t).Run(context.Background(), Machine{Nodes: 1, CPUsPerNode: 1},
			Job{Script: "sleep 600", Timeout: 5 * time.Minute})
		t.Fatalf("Run returned (%v) and the interrupt did not end the process", err)
	}
	host(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunInterruptKillsQemu$", "-test.v")
	tmp := t.TempDir()
	cmd.Env = append(os.Environ(), "VMTEST_INTERRUPT_CHILD=1", "TMPDIR="+tmp)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	qemu := 0
	for deadline := time.Now().Add(2 * time.Minute); qemu == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no qemu started by the child in 2 minutes:\n%s", out.String())
		}
		qemu = childNamed(cmd.Process.Pid, "qemu-system-x86")
	}
	time.Sleep(2 * time.Second) // let the guest start booting
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGINT {
			t.Errorf("child ended with %v, want death by SIGINT:\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("child still running 30s after SIGINT:\n%s", out.String())
	}
	assertGone(t, qemu)
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
		t.Errorf("the interrupted child left %v", left)
	}
}

// childNamed is the PID of a child of pid whose command name starts with
// name, or 0.
func childNamed(pid int, name string) int {
	tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "children"))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for c := range strings.FieldsSeq(string(b)) {
			comm, _ := os.ReadFile(filepath.Join("/proc", c, "comm"))
			if strings.HasPrefix(string(comm), name) {
				n, _ := strconv.Atoi(c)
				return n
			}
		}
	}
	return 0
}

func TestRunRefusesBadJobs(t *testing.T) {
	h := &Host{}
	if _, err := h.Run(context.Background(), Machine{Nodes: 1, CPUsPerNode: 1}, Job{}); err == nil ||
		!strings.Contains(err.Error(), "no command") {
		t.Errorf("a job with no command: %v", err)
	}
	if _, err := h.Run(context.Background(), Machine{Nodes: 1, CPUsPerNode: 1, RAMDiskMiB: 8},
		Job{Script: "true"}); err == nil || !strings.Contains(err.Error(), "brd.ko") {
		t.Errorf("a RAM disk with a kernel without brd: %v", err)
	}
	if _, err := h.Run(context.Background(), Machine{Nodes: 1, CPUsPerNode: 1, HostPort: 5432},
		Job{Script: "true"}); err == nil ||
		!strings.Contains(err.Error(), "virtio_net.ko") {
		t.Errorf("a host port with a kernel without a NIC: %v", err)
	}
}

// TestRunExitStatusAndFiles: a file given reaches /opt/bin with its
// libraries, arguments arrive quoted as given, and the command's exit
// status and output come back.
func TestRunExitStatusAndFiles(t *testing.T) {
	h := host(t)
	sh, err := exec.LookPath("sh") // the host's sh: a dynamic binary with libraries to carry
	if err != nil {
		t.Skip(err)
	}
	r, err := h.Run(context.Background(), Machine{Nodes: 1, CPUsPerNode: 1}, Job{
		Files: []string{sh},
		Args:  []string{filepath.Base(sh), "-c", `echo "it's $0 in $(pwd)"; exit 7`, "arg zero"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 7 || strings.TrimSpace(string(r.Output)) != "it's arg zero in /tmp" {
		t.Errorf("exit %d, output %q; want 7 and \"it's arg zero in /tmp\"", r.ExitCode, r.Output)
	}
	if r.Boot <= 0 || r.Wall < r.Boot {
		t.Errorf("boot %v, wall %v", r.Boot, r.Wall)
	}
	if parts, _ := filepath.Glob(filepath.Join(h.Cache, "payload-*.cpio")); len(parts) == 0 {
		t.Error("no cached payload archive")
	}
}
