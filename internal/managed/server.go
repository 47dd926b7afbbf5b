package managed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/numalab/numalab/internal/owner"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/sysfs"
)

// Kind is what one kind of server always is.
type Kind struct {
	// Title names the server in messages ("PostgreSQL").
	Title string
	// Prefix starts the temporary directory's name ("numalab-pg-").
	Prefix string
	// Accounts are the accounts to run as when numalab runs as root, the
	// first that exists and is not root.
	Accounts []string
	// RootRefusal says why the server needs such an account, as the start
	// of an error ("PostgreSQL refuses to run as root").
	RootRefusal string
	// InitLog and Log name the init step's log and the server's in the
	// directory.
	InitLog, Log string
	// Shutdown asks the server to shut down, ShutdownName names it in an
	// error ("fast shutdown"); Escalate, when not 0, is sent when it does
	// not finish in time, 5 s before SIGKILL.
	Shutdown, Escalate syscall.Signal
	ShutdownName       string
	// DeathSignal is what the server gets when numalab dies.
	DeathSignal syscall.Signal
	// Release, when set, removes what a dead server in dir keeps outside
	// it, from its marker (PostgreSQL: shared memory).
	Release func(proc sysfs.FS, dir string, m Marker) error
}

// Steps are what one start of a kind of server does.
type Steps struct {
	// User is the account to run as when numalab runs as root (default
	// Kind.Accounts).
	User string
	// MemPolicy, when its Mode is not Default, is the NUMA memory policy
	// the server starts with.
	MemPolicy place.Policy
	// StartTimeout bounds the init step plus the server's start (default
	// 2 minutes); StopTimeout bounds a shutdown before it is escalated
	// (default 30 s).
	StartTimeout, StopTimeout time.Duration

	// Binaries finds the programs: the directory of the server's and its
	// version.
	Binaries func(ctx context.Context) (binDir, version string, err error)
	// Socket is the server's unix socket in dir.
	Socket func(dir string) string
	// Init prepares the directory (initdb), its programs made with
	// s.Command writing to log.
	Init func(ctx context.Context, s *Server, log io.Writer) error
	// Command is the server's command.
	Command func(s *Server) (*exec.Cmd, error)
	// Ready says whether the server accepts connections.
	Ready func(s *Server) bool
	// Segment, when set, names for the marker what the running server
	// keeps outside its directory (see Kind.Release).
	Segment func(proc sysfs.FS, pid int) string
}

// Server is a running managed server. Stop it (defer s.Stop()) in the
// function that started it.
type Server struct {
	// BinDir is the directory of the programs running the server.
	BinDir string
	// User is the operating-system account the server runs as.
	User string
	// Dir is the temporary directory: data directory, logs and socket.
	Dir string
	// InitTime and BootTime are how long the init step and the server's
	// start took.
	InitTime, BootTime time.Duration
	// Reclaimed are the directories that servers of killed numalab
	// processes left, which Start removed (Reclaim); ReclaimErr says what
	// it could not remove.
	Reclaimed  []string
	ReclaimErr error

	kind        Kind
	account     Account
	version     string
	pid         int
	stopTimeout time.Duration

	exited  chan struct{} // closed when the server has been reaped
	waitErr error         // its exit status, valid after exited
	stopped chan struct{} // closed when Stop begins

	stopOnce sync.Once
	stopErr  error
}

// Start starts a server of kind k as the package documentation describes.
// The server stops when ctx is cancelled or Stop is called; the caller
// must call Stop in any case.
func Start(ctx context.Context, k Kind, st Steps) (*Server, error) {
	if st.StartTimeout <= 0 {
		st.StartTimeout = 2 * time.Minute
	}
	if st.StopTimeout <= 0 {
		st.StopTimeout = 30 * time.Second
	}
	s := &Server{kind: k, stopTimeout: st.StopTimeout, exited: make(chan struct{}), stopped: make(chan struct{})}
	s.Reclaimed, s.ReclaimErr = Reclaim(sysfs.New("/"), os.TempDir(), k)

	var err error
	if s.BinDir, s.version, err = st.Binaries(ctx); err != nil {
		return nil, fmt.Errorf("starting a managed %s server: %w", k.Title, err)
	}
	if s.account, err = pickAccount(st.User, k); err != nil {
		return nil, fmt.Errorf("starting a managed %s server: %w", k.Title, err)
	}
	s.User = s.account.Name
	if err := s.setup(ctx, st); err != nil {
		if s.Dir != "" {
			os.RemoveAll(s.Dir)
		}
		return nil, fmt.Errorf("starting managed %s %s from %s as user %s: %w", k.Title, s.version, s.BinDir, s.User, err)
	}
	go func() {
		select {
		case <-ctx.Done():
			s.Stop()
		case <-s.stopped:
		}
	}()
	return s, nil
}

// setup creates the directory, runs the init step and starts the server.
// On error the server is not running; the caller removes s.Dir.
func (s *Server) setup(ctx context.Context, st Steps) error {
	dir, err := os.MkdirTemp("", s.kind.Prefix)
	if err != nil {
		return fmt.Errorf("creating the temporary directory: %w", err)
	}
	s.Dir = dir
	proc := sysfs.New("/")
	self, err := owner.Self(proc)
	if err != nil {
		return err
	}
	if err := WriteMarker(dir, Marker{Owner: self}); err != nil {
		return err
	}
	if sock := st.Socket(dir); len(sock) >= 108 {
		return fmt.Errorf("socket path %s is longer than unix sockets allow (107 bytes; try TMPDIR=/tmp)", sock)
	}
	acct := s.account
	if acct.Other {
		if err := os.Chown(dir, acct.UID, acct.GID); err != nil {
			return fmt.Errorf("giving %s to user %s: %w", dir, acct.Name, err)
		}
		if p := Unsearchable(dir, acct.UID, acct.GID); p != "" {
			return fmt.Errorf("user %s cannot enter %s, which holds the temporary directory (try TMPDIR=/tmp)", acct.Name, p)
		}
	}
	initLogPath, logPath := filepath.Join(dir, s.kind.InitLog), s.LogPath()
	initLog, err := s.createLog(initLogPath)
	if err != nil {
		return err
	}
	defer initLog.Close()
	logf, err := s.createLog(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()

	deadline, cancel := context.WithTimeout(ctx, st.StartTimeout)
	defer cancel()

	t0 := time.Now()
	if err := st.Init(deadline, s, initLog); err != nil {
		return fmt.Errorf("%w%s", err, LogTail(initLogPath))
	}
	s.InitTime = time.Since(t0)

	cmd, err := st.Command(s)
	if err != nil {
		return err
	}
	s.Prepare(cmd, logf)
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = s.kind.DeathSignal

	t1 := time.Now()
	if err := s.launch(cmd, st.MemPolicy); err != nil {
		return err
	}
	if err := s.waitReady(deadline, st.Ready, filepath.Base(cmd.Path)); err != nil {
		s.kill()
		return err
	}
	s.BootTime = time.Since(t1)
	m := Marker{Owner: self, Server: owner.Process{Host: self.Host, PID: s.pid}}
	if pst, err := proc.ProcStat(s.pid); err == nil {
		m.Server.Start = pst.Start
	}
	if st.Segment != nil {
		m.Segment = st.Segment(proc, s.pid)
	}
	if err := WriteMarker(dir, m); err != nil {
		s.kill()
		return err
	}
	return nil
}

// createLog creates a log in the directory that the account can write.
func (s *Server) createLog(path string) (*os.File, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", filepath.Base(path), err)
	}
	if s.account.Other {
		os.Chown(path, s.account.UID, s.account.GID)
	}
	return f, nil
}

// Prepare sets a child's environment, directory, output and account.
func (s *Server) Prepare(cmd *exec.Cmd, log io.Writer) {
	cmd.Dir = s.Dir
	cmd.Env = []string{"PATH=" + s.BinDir + ":/usr/bin:/bin:/usr/sbin", "HOME=" + s.Dir, "LC_ALL=C", "LANG=C", "TZ=UTC"}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if s.account.Other {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(s.account.UID),
			Gid: uint32(s.account.GID), Groups: []uint32{}}
	}
}

// launch starts the server from a goroutine locked to a fresh OS thread
// carrying the memory policy, and keeps that goroutine waiting for the
// server's exit; the thread is discarded afterwards.
func (s *Server) launch(cmd *exec.Cmd, policy place.Policy) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if policy.Mode != place.Default {
			if err := place.SetMemPolicy(policy); err != nil {
				started <- fmt.Errorf("setting the server's memory policy: %w", err)
				close(s.exited)
				return
			}
		}
		if err := cmd.Start(); err != nil {
			started <- fmt.Errorf("starting %s: %w", filepath.Base(cmd.Path), err)
			close(s.exited)
			return
		}
		s.pid = cmd.Process.Pid
		started <- nil
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	return <-started
}

// waitReady waits until ready says the server, program, accepts
// connections.
func (s *Server) waitReady(ctx context.Context, ready func(*Server) bool, program string) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if ready(s) {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("%s exited while starting (%v)%s", program, s.waitErr, LogTail(s.LogPath()))
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to accept connections: %w%s", program, context.Cause(ctx), LogTail(s.LogPath()))
		case <-tick.C:
		}
	}
}

// Stop shuts the server down and removes its temporary directory. It is
// safe to call more than once, and from several goroutines; every call
// returns the first call's result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		close(s.stopped)
		s.stopErr = s.stop()
	})
	return s.stopErr
}

func (s *Server) stop() error {
	var errs []error
	crashed := false
	select {
	case <-s.exited:
		crashed = true
	default:
		if !s.signalAndWait(s.kind.Shutdown, s.stopTimeout) {
			errs = append(errs, fmt.Errorf("%s did not finish within %v; killed the server", s.kind.ShutdownName, s.stopTimeout))
			if s.kind.Escalate != 0 {
				s.signalAndWait(s.kind.Escalate, 5*time.Second)
			}
		} else {
			// A shutdown exits 0: a failure is a kill or crash just
			// before Stop that had not yet been seen.
			crashed = s.waitErr != nil
		}
	}
	if crashed {
		errs = append(errs, fmt.Errorf("the server had already exited (%v)", s.waitErr))
	}
	// Whatever of the server is left (a crashed one's children) goes.
	s.kill()
	// A server that did not shut down itself may leave what Release
	// removes; one that did has nothing left, and Release finds nothing.
	if s.kind.Release != nil {
		if m, err := ReadMarker(s.Dir); err == nil {
			if err := s.kind.Release(sysfs.New("/"), s.Dir, m); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := os.RemoveAll(s.Dir); err != nil {
		errs = append(errs, fmt.Errorf("removing %s: %w", s.Dir, err))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stopping managed %s (pid %d): %w", s.kind.Title, s.pid, err)
	}
	return nil
}

// signalAndWait signals the server and waits up to d for it to exit.
func (s *Server) signalAndWait(sig syscall.Signal, d time.Duration) bool {
	select {
	case <-s.exited:
		return true
	default:
	}
	if err := syscall.Kill(s.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return false
	}
	select {
	case <-s.exited:
		return true
	case <-time.After(d):
		return false
	}
}

// kill SIGKILLs the server's whole process group (the server and any
// child it left) and waits for the server to be reaped.
func (s *Server) kill() {
	syscall.Kill(-s.pid, syscall.SIGKILL)
	<-s.exited
	syscall.Kill(-s.pid, syscall.SIGKILL) // children orphaned meanwhile
}

// Account is the account the server runs as.
func (s *Server) Account() Account { return s.account }

// Version is the server's version, as Steps.Binaries said.
func (s *Server) Version() string { return s.version }

// PID is the server's process id.
func (s *Server) PID() int { return s.pid }

// DataDir is the server's data directory.
func (s *Server) DataDir() string { return filepath.Join(s.Dir, "data") }

// LogPath is the server's log.
func (s *Server) LogPath() string { return filepath.Join(s.Dir, s.kind.Log) }

// Description says in one line which server this is, from where, as
// whom, then details, and what Start reclaimed.
func (s *Server) Description(from, details string) string {
	d := fmt.Sprintf("managed %s %s from %s, running as user %s, %s", s.kind.Title, s.version, from, s.User, details)
	if len(s.Reclaimed) > 0 {
		d += fmt.Sprintf("; removed %s, left by killed numalab processes", strings.Join(s.Reclaimed, ", "))
	}
	if s.ReclaimErr != nil {
		d += fmt.Sprintf("; could not reclaim: %v", s.ReclaimErr)
	}
	return d
}

// LogTail returns the last lines of a log, to explain a failure.
func LogTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(bytes.TrimSpace(b)) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return fmt.Sprintf("; %s says:\n  %s", filepath.Base(path), strings.Join(lines, "\n  "))
}
