package vmtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Job is one command to run in a guest.
type Job struct {
	// Files are host files copied into the guest's /opt/bin, which is on
	// PATH, with the shared libraries they need.
	Files []string
	// Args is the command; Args[0] is looked up on PATH. When Args is
	// empty, Script is run by the guest's sh.
	Args   []string
	Script string
	// Timeout bounds the whole run, boot included; 0 means 10 minutes.
	Timeout time.Duration
	// BootLimit bounds the boot alone: the guest's /init must have
	// announced itself on the console by then; 0 means 3 minutes.
	BootLimit time.Duration
}

// Result is what a guest's command did.
type Result struct {
	Output   []byte        // its standard output and error, interleaved
	ExitCode int           // its exit status
	Boot     time.Duration // the guest's uptime when its /init ran
	Wall     time.Duration // from starting qemu to its exit
}

// Run boots m, runs j and powers the guest off. The error is nil when the
// command ran to its end, whatever its exit status; it is not nil when the
// guest failed, the time ran out, ctx was cancelled or the process was
// interrupted, and then qemu has been killed.
func (h *Host) Run(ctx context.Context, m Machine, j Job) (Result, error) {
	rs, errs := h.RunTogether(ctx, []Guest{{m, j}})
	return rs[0], errs[0]
}

// Guest is one machine and the job it runs.
type Guest struct {
	Machine Machine
	Job     Job
}

// RunTogether boots every guest at once, under one hold of the
// one-guest-at-a-time lock, and returns when all have powered off: what
// each did and its error, as [Host.Run] gives them. The guests share the
// host's CPUs: a test that runs them together (guests that talk to one
// server) takes the lock's place for all of them. An interrupt (SIGINT,
// SIGTERM) kills every guest's qemu, removes their files and then takes
// its usual course: the process dies of it.
func (h *Host) RunTogether(ctx context.Context, guests []Guest) ([]Result, []error) {
	rs, errs := make([]Result, len(guests)), make([]error, len(guests))
	dirs, initrds := make([]string, len(guests)), make([]string, len(guests))
	var unlock func()
	cleanup := func() {
		for _, d := range dirs {
			if d != "" {
				os.RemoveAll(d)
			}
		}
		if unlock != nil {
			unlock()
		}
	}
	defer cleanup()
	ready := 0
	for i, g := range guests {
		dirs[i], initrds[i], errs[i] = h.prepare(g.Machine, g.Job)
		if errs[i] == nil {
			ready++
		}
	}
	if ready == 0 {
		return rs, errs
	}
	var err error
	if unlock, err = h.lock(); err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
		return rs, errs
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	got := make(chan os.Signal, 1)
	go func() {
		sig, ok := <-sigs
		if ok {
			cancel(fmt.Errorf("interrupted by %v", sig))
		}
		got <- sig
	}()
	var wg sync.WaitGroup
	for i, g := range guests {
		if errs[i] != nil {
			continue
		}
		wg.Go(func() { rs[i], errs[i] = h.boot(ctx, g.Machine, g.Job, dirs[i], initrds[i]) })
	}
	wg.Wait()
	signal.Stop(sigs)
	close(sigs)
	if sig := <-got; sig != nil {
		// Every qemu is gone: let the interrupt take its usual course.
		cleanup()
		reraise(sig.(syscall.Signal))
	}
	return rs, errs
}

// prepare checks m and j and writes the guest's initramfs into a new
// directory, which the caller removes.
func (h *Host) prepare(m Machine, j Job) (dir, initrd string, err error) {
	if err := m.check(); err != nil {
		return "", "", err
	}
	if len(j.Args) == 0 && j.Script == "" {
		return "", "", fmt.Errorf("running on %s: no command (set Job.Args or Job.Script)", m)
	}
	if m.RAMDiskMiB > 0 && h.Brd == "" {
		return "", "", fmt.Errorf("running on %s: the guest kernel %s has no brd.ko for a RAM disk", m, h.Kernel)
	}
	if m.HostPort > 0 && len(h.Net) == 0 {
		return "", "", fmt.Errorf("running on %s: the guest kernel %s lacks a module of a virtio NIC (%s)",
			m, h.Kernel, strings.Join(netModules, ", "))
	}
	if m.RAMDiskMiB > 0 && m.DiskFS() != "ext2" {
		// busybox's mke2fs makes ext2 only: the host's goes in.
		mk, err := findMke2fs()
		if err != nil {
			return "", "", fmt.Errorf("running on %s: %w", m, err)
		}
		j.Files = append(slices.Clone(j.Files), mk)
	}
	if dir, err = os.MkdirTemp("", "vmtest-"); err != nil {
		return "", "", err
	}
	initrd = filepath.Join(dir, "initrd")
	if err := h.initrd(initrd, m, j); err != nil {
		return dir, "", fmt.Errorf("running on %s: %w", m, err)
	}
	return dir, initrd, nil
}

// boot runs the guest of m, whose initramfs prepare wrote into dir, with
// the lock held.
func (h *Host) boot(ctx context.Context, m Machine, j Job, dir, initrd string) (Result, error) {
	timeout := j.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	console, out := filepath.Join(dir, "console"), filepath.Join(dir, "out")
	var stderr bytes.Buffer
	cmd := exec.Command(h.Qemu, m.qemuArgs(h.Kernel, initrd, console, out, h.Busybox)...)
	cmd.Stderr = &stderr
	// If this process dies without killing qemu, the kernel does.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	done := make(chan error, 1)
	if err := startFavoured(cmd, done); err != nil {
		return Result{}, fmt.Errorf("running on %s: starting qemu: %w", m, err)
	}
	pid := cmd.Process.Pid
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	bootLimit := j.BootLimit
	if bootLimit <= 0 {
		bootLimit = 3 * time.Minute
	}
	// Until /init has announced itself, the console is polled: a boot
	// that hangs is cut at bootLimit, not at the whole run's timeout.
	poll := time.NewTicker(500 * time.Millisecond)
	defer poll.Stop()

	var stop, err error
	for exited := false; !exited && stop == nil; {
		select {
		case err = <-done:
			exited = true
		case <-timer.C:
			stop = fmt.Errorf("timed out after %v", timeout)
		case <-ctx.Done():
			stop = context.Cause(ctx)
		case <-poll.C:
			if consoleHas(console, "@@BOOTED") {
				poll.Stop() // no tick comes after Stop (Go 1.23's timers)
			} else if time.Since(start) > bootLimit {
				stop = fmt.Errorf(
					"%w within %v (boots here take 3 to 35 s), so no command ran: a kernel or emulator hang; its log is below",
					ErrNoBoot, bootLimit)
			}
		}
	}
	if stop != nil {
		unix.Kill(pid, unix.SIGKILL) // by its own PID: never by name
		<-done
	}
	res := Result{Wall: time.Since(start)}
	res.Output, _ = os.ReadFile(out)
	con, _ := os.ReadFile(console)
	if stop != nil {
		return res, fmt.Errorf("running on %s: %w: killed qemu (pid %d)%s", m, stop, pid, tail(con, stderr.Bytes()))
	}
	if booted := bootedRE.FindSubmatch(con); booted != nil {
		s, _ := strconv.ParseFloat(string(booted[1]), 64)
		res.Boot = time.Duration(s * float64(time.Second))
	}
	if bytes.Contains(con, []byte("@@NODISK")) {
		return res, fmt.Errorf("running on %s: the guest could not make its %s RAM disk%s",
			m, m.DiskFS(), tail(con, stderr.Bytes()))
	}
	if bytes.Contains(con, []byte("@@NONET")) {
		return res, fmt.Errorf("running on %s: the guest could not bring up eth0 for its host port%s",
			m, tail(con, stderr.Bytes()))
	}
	exit := exitRE.FindSubmatch(con)
	if exit == nil {
		return res, fmt.Errorf("running on %s: the guest gave no exit status (qemu: %v)%s", m, err, tail(con, stderr.Bytes()))
	}
	res.ExitCode, _ = strconv.Atoi(string(exit[1]))
	return res, nil
}

// ErrNoBoot is Run's error, wrapped, when the guest's kernel did not reach
// its /init within the job's boot limit.
var ErrNoBoot = errors.New("the guest's kernel did not reach its /init")

// findMke2fs is the host's mke2fs (e2fsprogs), which makes ext4.
func findMke2fs() (string, error) {
	if p, err := exec.LookPath("mke2fs"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/sbin/mke2fs", "/sbin/mke2fs"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New(
		"an ext4 RAM disk needs the host's mke2fs, and none is on PATH or in /usr/sbin or /sbin: install e2fsprogs")
}

// consoleHas says whether the console file holds s.
func consoleHas(console, s string) bool {
	b, _ := os.ReadFile(console)
	return bytes.Contains(b, []byte(s))
}

var (
	bootedRE = regexp.MustCompile(`@@BOOTED ([0-9.]+)`)
	exitRE   = regexp.MustCompile(`@@EXIT ([0-9]+)`)
)

// tail is the end of the guest's console and of qemu's stderr, for errors.
func tail(console, stderr []byte) string {
	last := func(b []byte, n int) string {
		lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(string(b), "\r", "")), "\n")
		return strings.Join(lines[max(0, len(lines)-n):], "\n")
	}
	s := ""
	if c := last(console, 30); c != "" {
		s += "\nguest console:\n" + c
	}
	if e := last(stderr, 10); e != "" {
		s += "\nqemu:\n" + e
	}
	return s
}

// initrd writes the guest's initramfs: the cached base, the cached
// payload of j's files, and j's command.
func (h *Host) initrd(name string, m Machine, j Job) error {
	parts := []string{}
	b, err := h.base()
	if err != nil {
		return err
	}
	parts = append(parts, b)
	if len(j.Files) > 0 {
		p, err := h.payload(j.Files)
		if err != nil {
			return err
		}
		parts = append(parts, p)
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range parts {
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, src)
		src.Close()
		if err != nil {
			return err
		}
	}
	script := j.Script
	if len(j.Args) > 0 {
		q := make([]string, len(j.Args))
		for i, a := range j.Args {
			q[i] = shellQuote(a)
		}
		script = "exec " + strings.Join(q, " ")
	}
	c := newCpio(f)
	c.File("run.sh", 0o755, []byte(script+"\n"))
	c.File("run.env", 0o644,
		[]byte(fmt.Sprintf("RAMDISK_MIB=%d\nRAMDISK_FS=%s\nHOST_PORT=%d\n", m.RAMDiskMiB, m.DiskFS(), m.HostPort)))
	if err := c.Close(); err != nil {
		return err
	}
	return f.Close()
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,:") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// lock takes the host-wide lock that lets one guest run at a time.
func (h *Host) lock() (func(), error) {
	f, err := os.OpenFile(filepath.Join(h.Cache, "qemu.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("taking the one-guest-at-a-time lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("taking the one-guest-at-a-time lock: %w", err)
	}
	return func() { f.Close() }, nil
}

// reraise sends sig to the calling thread, so that it is handled before
// reraise returns. Sent to the process, the signal could wait for another
// thread to be scheduled while this one goes on and exits with a test's
// status instead of dying of the signal.
func reraise(sig syscall.Signal) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	unix.Tgkill(unix.Getpid(), unix.Gettid(), sig)
}

// Favour is how far below this process's nice value qemu's is (a higher
// priority), where the process may raise priorities (root,
// CAP_SYS_NICE). A guest's eval spends a budget of wall time, and the
// packages go test runs beside this one (.ci/run's -p 3) would otherwise
// take the CPU its steps need: without it, a guest's probe once took
// 107 s of a 2-minute budget and eval stored no OLTP run. Those packages
// mostly wait on timed cells; beside a favoured qemu they take longer
// (1.5 to 2.4 times in three fresh-clone runs), the suite less; and a
// test there that times work on one CPU finds that CPU taken when a
// guest is busy (sentinel's hog test, which reads its thread's share of
// the CPU for that reason).
const Favour = 5

// startFavoured starts cmd from an OS thread of its own whose nice value
// is Favour below this process's, which cmd inherits, and sends cmd.Wait's
// result on done. The thread lives until cmd has exited: cmd's
// parent-death signal comes when the thread that started it ends. Where
// the priority cannot be raised, cmd starts at this process's.
func startFavoured(cmd *exec.Cmd, done chan<- error) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if prio, err := unix.Getpriority(unix.PRIO_PROCESS, 0); err == nil {
			// The kernel returns 20 − nice; 0 is this thread.
			unix.Setpriority(unix.PRIO_PROCESS, 0, 20-prio-Favour)
		}
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		done <- cmd.Wait()
	}()
	return <-started
}
