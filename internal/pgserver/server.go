package pgserver

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

// in the function that started it.
type Server struct {
	// BinDir is the bin directory of the programs running the server.
	BinDir string
	// Source is "system" or "embedded" (embedded-postgres's download).
	Source string
	// User is the operating-system account the server runs as.
	User string
	// Dir is the temporary directory: data directory, log and socket.
	Dir string
	// InitTime and BootTime are how long initdb and the server start took;
	// FetchTime how long downloading and unpacking the binaries took (0
	// when they were already there).
	InitTime, BootTime, FetchTime time.Duration
	// Reclaimed are the directories that servers of killed numalab
	// processes left, which Start removed (Reclaim); ReclaimErr says what
	// it could not remove.
	Reclaimed  []string
	ReclaimErr error

	version     string
	fullVersion string
	settings    map[string]string
	pid         int
	stopTimeout time.Duration

	exited  chan struct{} // closed when the postmaster has been reaped
	waitErr error         // the postmaster's exit status, valid after exited
	stopped chan struct{} // closed when Stop begins

	stopOnce sync.Once
	stopErr  error
}

// Start starts a managed PostgreSQL server as the package documentation
// describes. The server stops when ctx is cancelled or Stop is called;
// the caller must call Stop in any case.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 2 * time.Minute
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = 30 * time.Second
	}
	s := &Server{stopTimeout: cfg.StopTimeout, exited: make(chan struct{}), stopped: make(chan struct{})}
	s.Reclaimed, s.ReclaimErr = Reclaim(sysfs.New("/"), os.TempDir())

	fetchStart := time.Now()
	bin, err := findPGBinaries(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("starting a managed PostgreSQL server: %w", err)
	}
	s.BinDir, s.Source, s.version, s.fullVersion = bin.dir, bin.source, bin.version, bin.full
	if bin.fetched {
		s.FetchTime = time.Since(fetchStart)
	}

	acct, err := serverAccount(cfg.User)
	if err != nil {
		return nil, fmt.Errorf("starting a managed PostgreSQL server: %w", err)
	}
	s.User = acct.name

	if err := s.setup(ctx, cfg, acct, bin.major); err != nil {
		if s.Dir != "" {
			os.RemoveAll(s.Dir)
		}
		return nil, fmt.Errorf("starting managed PostgreSQL %s from %s as user %s: %w", s.version, s.BinDir, s.User, err)
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

// setup creates the directory, runs initdb and starts the postmaster. On
// error the postmaster is not running; the caller removes s.Dir.
func (s *Server) setup(ctx context.Context, cfg Config, acct account, major int) error {
	dir, err := os.MkdirTemp("", "numalab-pg-")
	if err != nil {
		return fmt.Errorf("creating the temporary directory: %w", err)
	}
	s.Dir = dir
	proc := sysfs.New("/")
	self, err := owner.Self(proc)
	if err != nil {
		return err
	}
	if err := writeMarker(dir, marker{Owner: self}); err != nil {
		return err
	}
	sock := filepath.Join(dir, fmt.Sprintf(".s.PGSQL.%d", managedPGPort))
	if len(sock) >= 108 {
		return fmt.Errorf("socket path %s is longer than unix sockets allow (107 bytes; try TMPDIR=/tmp)", sock)
	}
	if acct.other {
		if err := os.Chown(dir, acct.uid, acct.gid); err != nil {
			return fmt.Errorf("giving %s to user %s: %w", dir, acct.name, err)
		}
		if p := unsearchable(filepath.Dir(dir), acct.uid, acct.gid); p != "" {
			return fmt.Errorf("user %s cannot enter %s, which holds the temporary directory (try TMPDIR=/tmp)", acct.name, p)
		}
		if p := unsearchable(filepath.Join(s.BinDir, "postgres"), acct.uid, acct.gid); p != "" {
			bin, err := linkInstall(s.BinDir, filepath.Join(dir, "pg"))
			if err != nil {
				return fmt.Errorf("user %s cannot enter %s, and copying the binaries failed: %w", acct.name, p, err)
			}
			s.BinDir = bin
		}
	}
	initLogPath, logPath := filepath.Join(dir, "initdb.log"), filepath.Join(dir, "postgres.log")
	initLog, err := os.Create(initLogPath)
	if err != nil {
		return fmt.Errorf("creating the initdb log: %w", err)
	}
	defer initLog.Close()
	logf, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("creating the server log: %w", err)
	}
	defer logf.Close()

	deadline, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()

	data := filepath.Join(dir, "data")
	initArgs := []string{"-D", data, "-U", managedPGRole, "--auth=trust", "--no-locale", "-E", "UTF8", "--no-sync"}
	if major >= 14 {
		initArgs = append(initArgs, "--no-instructions")
	}
	t0 := time.Now()
	initdb := exec.CommandContext(deadline, filepath.Join(s.BinDir, "initdb"), initArgs...)
	s.prepare(initdb, acct, initLog)
	if err := initdb.Run(); err != nil {
		return fmt.Errorf("running initdb: %w%s", err, logTail(initLogPath))
	}
	s.InitTime = time.Since(t0)

	s.settings = pgSettings(cfg, dir)
	args := []string{"-D", data}
	for _, k := range sortedKeys(s.settings) {
		args = append(args, "-c", k+"="+s.settings[k])
	}
	pm := exec.Command(filepath.Join(s.BinDir, "postgres"), args...)
	s.prepare(pm, acct, logf)
	pm.SysProcAttr.Setpgid = true
	pm.SysProcAttr.Pdeathsig = syscall.SIGQUIT

	t1 := time.Now()
	if err := s.launch(pm, cfg.MemPolicy); err != nil {
		return err
	}
	if err := s.waitReady(deadline, data, logPath); err != nil {
		s.kill()
		return err
	}
	s.BootTime = time.Since(t1)
	m := marker{Owner: self, Postmaster: owner.Process{Host: self.Host, PID: s.pid}, DSMControl: dsmControl(proc, s.pid)}
	if st, err := proc.ProcStat(s.pid); err == nil {
		m.Postmaster.Start = st.Start
	}
	if err := writeMarker(dir, m); err != nil {
		s.kill()
		return err
	}
	return nil
}

// prepare sets a child's environment, directory, output and account.
func (s *Server) prepare(cmd *exec.Cmd, acct account, log io.Writer) {
	cmd.Dir = s.Dir
	cmd.Env = []string{"PATH=" + s.BinDir + ":/usr/bin:/bin", "HOME=" + s.Dir, "LC_ALL=C", "LANG=C", "TZ=UTC"}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if acct.other {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(acct.uid), Gid: uint32(acct.gid), Groups: []uint32{}}
	}
}

// launch starts the postmaster from a goroutine locked to a fresh OS thread
// carrying the memory policy, and keeps that goroutine waiting for the
// postmaster's exit; the thread is discarded afterwards.
func (s *Server) launch(pm *exec.Cmd, policy place.Policy) error {
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
		if err := pm.Start(); err != nil {
			started <- fmt.Errorf("starting postgres: %w", err)
			close(s.exited)
			return
		}
		s.pid = pm.Process.Pid
		started <- nil
		s.waitErr = pm.Wait()
		close(s.exited)
	}()
	return <-started
}

// waitReady waits until postmaster.pid says the server accepts
// connections.
func (s *Server) waitReady(ctx context.Context, data, logPath string) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(filepath.Join(data, "postmaster.pid")); err == nil && pidFileReady(b) {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("postgres exited while starting (%v)%s", s.waitErr, logTail(logPath))
		case <-ctx.Done():
			return fmt.Errorf("waiting for postgres to accept connections: %w%s", context.Cause(ctx), logTail(logPath))
		case <-tick.C:
		}
	}
}

// pidFileReady reports whether a postmaster.pid says "ready" (its 8th
// line, PostgreSQL 10 and later).
func pidFileReady(b []byte) bool {
	lines := strings.Split(string(b), "\n")
	return len(lines) >= 8 && strings.TrimSpace(lines[7]) == "ready"
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
		if !s.signalAndWait(syscall.SIGINT, s.stopTimeout) {
			errs = append(errs, fmt.Errorf("fast shutdown did not finish within %v; killed the server", s.stopTimeout))
			if !s.signalAndWait(syscall.SIGQUIT, 5*time.Second) {
				s.kill()
			}
		} else {
			// A fast shutdown exits 0: a failure is a kill or crash just
			// before Stop that had not yet been seen.
			crashed = s.waitErr != nil
		}
	}
	if crashed {
		// Killed or crashed before Stop: its backends may outlive it.
		syscall.Kill(-s.pid, syscall.SIGKILL)
		errs = append(errs, fmt.Errorf("the server had already exited (%v)", s.waitErr))
	}
	// A server that did not shut down itself leaves its shared memory; one
	// that did has removed it, and its control segment lists nothing. The
	// segments are removed either way: a server killed just before Stop
	// may not have been seen to exit yet.
	if m, err := readMarker(s.Dir); err == nil {
		if err := removeSegments(sysfs.New("/"), s.Dir, m); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(s.Dir); err != nil {
		errs = append(errs, fmt.Errorf("removing %s: %w", s.Dir, err))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stopping managed PostgreSQL (pid %d): %w", s.pid, err)
	}
	return nil
}

// signalAndWait signals the postmaster and waits up to d for it to exit.
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

// kill SIGKILLs the server's whole process group (the postmaster and any
// backend it left) and waits for the postmaster to be reaped.
func (s *Server) kill() {
	syscall.Kill(-s.pid, syscall.SIGKILL)
	<-s.exited
	syscall.Kill(-s.pid, syscall.SIGKILL) // children orphaned meanwhile
}

// DSN is a keyword/value connection string for the server (pgx, libpq):
// host is the socket directory.
func (s *Server) DSN() string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", dsnQuote(s.Dir), managedPGPort, managedPGRole, managedPGDB)
}

// dsnQuote quotes a keyword/value DSN value that needs it.
func dsnQuote(v string) string {
	if v != "" && !strings.ContainsAny(v, " '\\\t") {
		return v
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// Version is the server's version number ("15.18").
func (s *Server) Version() string { return s.version }

// FullVersion is what `postgres --version` printed.
func (s *Server) FullVersion() string { return s.fullVersion }

// PID is the postmaster's process id (backends are its children).
func (s *Server) PID() int { return s.pid }

// DataDir is the server's data directory.
func (s *Server) DataDir() string { return filepath.Join(s.Dir, "data") }

// Settings returns the settings numalab gave the server (a copy).
func (s *Server) Settings() map[string]string {
	m := make(map[string]string, len(s.settings))
	for k, v := range s.settings {
		m[k] = v
	}
	return m
}

// Describe says in one line which server this is, for a progress line,
// and what Start reclaimed.
func (s *Server) Describe() string {
	d := fmt.Sprintf("managed PostgreSQL %s from %s (%s binaries), running as user %s, socket %s, shared_buffers %s",
		s.version, s.BinDir, s.Source, s.User, s.Dir, s.settings["shared_buffers"])
	if len(s.Reclaimed) > 0 {
		d += fmt.Sprintf("; removed %s, left by killed numalab processes", strings.Join(s.Reclaimed, ", "))
	}
	if s.ReclaimErr != nil {
		d += fmt.Sprintf("; could not reclaim: %v", s.ReclaimErr)
	}
	return d
}

// logTail returns the last lines of the server log, to explain a failure.
func logTail(path string) string {
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
