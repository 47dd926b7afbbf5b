package mariaserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/numalab/numalab/internal/owner"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/sysfs"
)

// Config says how to start a managed MariaDB server. The zero value is a
// working default.
type Config struct {
	// BinDir, when set, is the directory holding mariadbd.
	BinDir string
	// User is the account to run the server as when numalab runs as root
	// (default "mysql" if it exists, else "nobody"). Ignored otherwise:
	// the server then runs as the current user.
	User string
	// BufferPool is innodb_buffer_pool_size in bytes (default 128 MiB).
	BufferPool int64
	// MaxConnections is max_connections (default max(151, 4·CPUs+20)).
	MaxConnections int
	// Settings are extra server options (name → value, as after --name=);
	// they override numalab's own.
	Settings map[string]string
	// MemPolicy, when its Mode is not Default, is the NUMA memory policy
	// mariadbd starts with.
	MemPolicy place.Policy
	// StartTimeout bounds mariadb-install-db plus server start (default 2
	// minutes); StopTimeout bounds a shutdown before the server is killed
	// (default 30 s).
	StartTimeout time.Duration
	StopTimeout  time.Duration
}

// ErrNoBinaries is what Start's error wraps when mariadbd or
// mariadb-install-db cannot be found.
var ErrNoBinaries = errors.New("no MariaDB server binaries")

// User is the account numalab creates on its managed server.
const User = "numalab"

// BufferPoolFor returns an innodb_buffer_pool_size that holds a database
// of dataBytes with room for indexes and temporary use: 1.5 × the data
// plus 64 MiB, at least 128 MiB, in whole MiB.
func BufferPoolFor(dataBytes int64) int64 {
	const mib = 1 << 20
	b := max(dataBytes+dataBytes/2+64*mib, 128*mib)
	return (b + mib - 1) / mib * mib
}

// Server is a running managed MariaDB server. Stop it (defer s.Stop()) in
// the function that started it.
type Server struct {
	// BinDir is the directory of the mariadbd that runs the server.
	BinDir string
	// User is the operating-system account the server runs as.
	User string
	// Dir is the temporary directory: data directory, log and socket.
	Dir string
	// Port is the TCP port on 127.0.0.1.
	Port int
	// InitTime and BootTime are how long mariadb-install-db and the
	// server start took.
	InitTime, BootTime time.Duration
	// Reclaimed are the directories that servers of killed numalab
	// processes left, which Start removed (Reclaim); ReclaimErr says what
	// it could not remove.
	Reclaimed  []string
	ReclaimErr error

	version     string
	password    string
	settings    map[string]string
	pid         int
	stopTimeout time.Duration

	exited  chan struct{} // closed when mariadbd has been reaped
	waitErr error         // its exit status, valid after exited
	stopped chan struct{} // closed when Stop begins

	stopOnce sync.Once
	stopErr  error
}

// Start starts a managed MariaDB server as the package documentation
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

	server, install, err := findBinaries(cfg.BinDir)
	if err != nil {
		return nil, fmt.Errorf("starting a managed MariaDB server: %w", err)
	}
	s.BinDir = filepath.Dir(server)
	if s.version, err = serverVersion(ctx, server); err != nil {
		return nil, fmt.Errorf("starting a managed MariaDB server: %w", err)
	}
	acct, err := serverAccount(cfg.User)
	if err != nil {
		return nil, fmt.Errorf("starting a managed MariaDB server: %w", err)
	}
	s.User = acct.name
	if err := s.setup(ctx, cfg, acct, server, install); err != nil {
		if s.Dir != "" {
			os.RemoveAll(s.Dir)
		}
		return nil, fmt.Errorf("starting managed MariaDB %s from %s as user %s: %w", s.version, s.BinDir, s.User, err)
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

// findBinaries finds mariadbd (in binDir when given) and
// mariadb-install-db.
func findBinaries(binDir string) (server, install string, err error) {
	dirs := []string{"/usr/sbin", "/usr/libexec", "/usr/local/mysql/bin", "/usr/local/mysql/sbin"}
	if binDir != "" {
		dirs = []string{binDir}
	} else if p, err := exec.LookPath("mariadbd"); err == nil {
		dirs = append([]string{filepath.Dir(p)}, dirs...)
	}
	for _, d := range dirs {
		if p := filepath.Join(d, "mariadbd"); executable(p) {
			server = p
			break
		}
	}
	if server == "" {
		return "", "", fmt.Errorf("%w: no mariadbd in %s (install MariaDB's server, Debian's package mariadb-server, or use --dsn with your own server)", ErrNoBinaries, strings.Join(dirs, ", "))
	}
	cands := []string{filepath.Join(filepath.Dir(server), "mariadb-install-db")}
	if p, err := exec.LookPath("mariadb-install-db"); err == nil {
		cands = append(cands, p)
	}
	cands = append(cands, "/usr/bin/mariadb-install-db", "/usr/local/mysql/scripts/mariadb-install-db")
	for _, p := range cands {
		if executable(p) {
			return server, p, nil
		}
	}
	return "", "", fmt.Errorf("%w: %s is there but mariadb-install-db is not (looked in %s; install Debian's package mariadb-server)", ErrNoBinaries, server, strings.Join(cands, ", "))
}

func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// serverVersion runs mariadbd --version and returns the version
// ("10.11.19-MariaDB-0+deb12u1").
func serverVersion(ctx context.Context, server string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, server, "--no-defaults", "--version").Output()
	if err != nil {
		return "", fmt.Errorf("running %s --version: %w", server, err)
	}
	f := strings.Fields(string(out))
	for i, w := range f {
		if w == "Ver" && i+1 < len(f) {
			return f[i+1], nil
		}
	}
	return "", fmt.Errorf("running %s --version: no version in %q", server, strings.TrimSpace(string(out)))
}

// setup creates the directory, runs mariadb-install-db and starts the
// server. On error the server is not running; the caller removes s.Dir.
func (s *Server) setup(ctx context.Context, cfg Config, acct account, server, install string) error {
	dir, err := os.MkdirTemp("", "numalab-mariadb-")
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
	if len(s.socket()) >= 108 {
		return fmt.Errorf("socket path %s is longer than unix sockets allow (107 bytes; try TMPDIR=/tmp)", s.socket())
	}
	if acct.other {
		if err := os.Chown(dir, acct.uid, acct.gid); err != nil {
			return fmt.Errorf("giving %s to user %s: %w", dir, acct.name, err)
		}
		if p := unsearchable(filepath.Dir(dir), acct.uid, acct.gid); p != "" {
			return fmt.Errorf("user %s cannot enter %s, which holds the temporary directory (try TMPDIR=/tmp)", acct.name, p)
		}
	}
	logPath := filepath.Join(dir, "mariadb.log")
	initLogPath := filepath.Join(dir, "install-db.log")
	initLog, err := os.Create(initLogPath)
	if err != nil {
		return fmt.Errorf("creating the mariadb-install-db log: %w", err)
	}
	defer initLog.Close()
	logf, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("creating the server log: %w", err)
	}
	defer logf.Close()
	if acct.other {
		for _, p := range []string{initLogPath, logPath} {
			os.Chown(p, acct.uid, acct.gid)
		}
	}

	deadline, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()

	t0 := time.Now()
	initdb := exec.CommandContext(deadline, install, "--no-defaults", "--datadir="+s.DataDir(),
		"--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve")
	s.prepare(initdb, acct, initLog)
	if err := initdb.Run(); err != nil {
		return fmt.Errorf("running %s: %w%s", install, err, logTail(initLogPath))
	}
	s.InitTime = time.Since(t0)

	if s.password, err = randomPassword(); err != nil {
		return err
	}
	initFile := filepath.Join(dir, "init.sql")
	if err := os.WriteFile(initFile, []byte(initSQL(s.password)), 0o600); err != nil {
		return fmt.Errorf("writing the init file: %w", err)
	}
	defer os.Remove(initFile)
	if acct.other {
		if err := os.Chown(initFile, acct.uid, acct.gid); err != nil {
			return fmt.Errorf("giving the init file to user %s: %w", acct.name, err)
		}
	}
	if s.Port, err = freePort(); err != nil {
		return err
	}
	s.settings = serverSettings(cfg, s)
	args := []string{"--no-defaults"}
	for _, k := range sortedKeys(s.settings) {
		args = append(args, "--"+k+"="+s.settings[k])
	}
	args = append(args, "--init-file="+initFile, "--log-error="+logPath)
	srv := exec.Command(server, args...)
	s.prepare(srv, acct, logf)
	srv.SysProcAttr.Setpgid = true
	srv.SysProcAttr.Pdeathsig = syscall.SIGKILL

	t1 := time.Now()
	if err := s.launch(srv, cfg.MemPolicy); err != nil {
		return err
	}
	if err := s.waitReady(deadline, logPath); err != nil {
		s.kill()
		return err
	}
	s.BootTime = time.Since(t1)
	m := marker{Owner: self, Server: owner.Process{Host: self.Host, PID: s.pid}}
	if st, err := proc.ProcStat(s.pid); err == nil {
		m.Server.Start = st.Start
	}
	if err := writeMarker(dir, m); err != nil {
		s.kill()
		return err
	}
	return nil
}

// initSQL runs before the server accepts connections: it drops the
// accounts TCP reaches without a password and creates numalab's.
func initSQL(password string) string {
	host, _ := os.Hostname()
	var b strings.Builder
	b.WriteString("DROP USER IF EXISTS 'root'@'127.0.0.1', 'root'@'::1'")
	if host != "" && host != "localhost" {
		fmt.Fprintf(&b, ", 'root'@'%s'", strings.ReplaceAll(host, "'", "''"))
	}
	b.WriteString(";\n")
	for _, h := range []string{"localhost", "127.0.0.1"} {
		fmt.Fprintf(&b, "CREATE USER '%s'@'%s' IDENTIFIED BY '%s';\n", User, h, password)
		fmt.Fprintf(&b, "GRANT ALL PRIVILEGES ON *.* TO '%s'@'%s' WITH GRANT OPTION;\n", User, h)
	}
	return b.String()
}

// randomPassword returns 24 random hex digits.
func randomPassword() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("making a password: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port on 127.0.0.1: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// serverSettings returns the server options for cfg.
func serverSettings(cfg Config, s *Server) map[string]string {
	bp := cfg.BufferPool
	if bp <= 0 {
		bp = 128 << 20
	}
	conns := cfg.MaxConnections
	if conns <= 0 {
		conns = max(151, 4*runtime.NumCPU()+20)
	}
	m := map[string]string{
		"datadir":                        s.DataDir(),
		"socket":                         s.socket(),
		"bind-address":                   "127.0.0.1",
		"port":                           strconv.Itoa(s.Port),
		"pid-file":                       filepath.Join(s.Dir, "mariadbd.pid"),
		"tmpdir":                         s.Dir,
		"skip-name-resolve":              "ON",
		"innodb-buffer-pool-size":        strconv.FormatInt(bp, 10),
		"innodb-flush-log-at-trx-commit": "0",
		"innodb-doublewrite":             "0",
		"innodb-fast-shutdown":           "2",
		"performance-schema":             "ON",
		"max-connections":                strconv.Itoa(conns),
		"character-set-server":           "utf8mb4",
		"collation-server":               "utf8mb4_bin",
	}
	for k, v := range cfg.Settings {
		m[k] = v
	}
	return m
}

func (s *Server) socket() string { return filepath.Join(s.Dir, "mariadb.sock") }

// prepare sets a child's environment, directory, output and account.
func (s *Server) prepare(cmd *exec.Cmd, acct account, log io.Writer) {
	cmd.Dir = s.Dir
	cmd.Env = []string{"PATH=" + s.BinDir + ":/usr/bin:/bin:/usr/sbin", "HOME=" + s.Dir, "LC_ALL=C", "LANG=C", "TZ=UTC"}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if acct.other {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(acct.uid), Gid: uint32(acct.gid), Groups: []uint32{}}
	}
}

// launch starts mariadbd from a goroutine locked to a fresh OS thread
// carrying the memory policy, and keeps that goroutine waiting for the
// server's exit: the parent-death signal follows the thread that forked,
// so the thread must live as long as the server.
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
			started <- fmt.Errorf("starting mariadbd: %w", err)
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

// waitReady waits until the server accepts connections on its socket.
func (s *Server) waitReady(ctx context.Context, logPath string) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(logPath); err == nil && bytes.Contains(b, []byte("ready for connections")) {
			if c, err := net.Dial("unix", s.socket()); err == nil {
				c.Close()
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("mariadbd exited while starting (%v)%s", s.waitErr, logTail(logPath))
		case <-ctx.Done():
			return fmt.Errorf("waiting for mariadbd to accept connections: %w%s", context.Cause(ctx), logTail(logPath))
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
	select {
	case <-s.exited:
		errs = append(errs, fmt.Errorf("the server had already exited (%v)", s.waitErr))
	default:
		if !s.signalAndWait(syscall.SIGTERM, s.stopTimeout) {
			errs = append(errs, fmt.Errorf("shutdown did not finish within %v; killed the server", s.stopTimeout))
		}
	}
	s.kill() // nothing is left either way; a no-op after a clean exit
	if err := os.RemoveAll(s.Dir); err != nil {
		errs = append(errs, fmt.Errorf("removing %s: %w", s.Dir, err))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stopping managed MariaDB (pid %d): %w", s.pid, err)
	}
	return nil
}

// signalAndWait signals mariadbd and waits up to d for it to exit.
func (s *Server) signalAndWait(sig syscall.Signal, d time.Duration) bool {
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

// kill SIGKILLs the server's process group and waits for mariadbd to be
// reaped.
func (s *Server) kill() {
	syscall.Kill(-s.pid, syscall.SIGKILL)
	<-s.exited
}

// DSN is a go-sql-driver/mysql DSN for numalab's account over the unix
// socket, password included: never print it (Describe says where).
func (s *Server) DSN() string {
	return fmt.Sprintf("%s:%s@unix(%s)/", User, s.password, s.socket())
}

// TCPDSN is DSN over TCP loopback (127.0.0.1).
func (s *Server) TCPDSN() string {
	return fmt.Sprintf("%s:%s@tcp(127.0.0.1:%d)/", User, s.password, s.Port)
}

// Socket is the server's unix socket.
func (s *Server) Socket() string { return s.socket() }

// Password is numalab's account's password, for a peer client (sysbench)
// run against the same server. Never print it.
func (s *Server) Password() string { return s.password }

// Version is the server's version ("10.11.19-MariaDB-0+deb12u1").
func (s *Server) Version() string { return s.version }

// PID is mariadbd's process id (connections are its threads).
func (s *Server) PID() int { return s.pid }

// DataDir is the server's data directory.
func (s *Server) DataDir() string { return filepath.Join(s.Dir, "data") }

// Settings returns the options numalab gave the server (a copy).
func (s *Server) Settings() map[string]string {
	m := make(map[string]string, len(s.settings))
	for k, v := range s.settings {
		m[k] = v
	}
	return m
}

// Describe says in one line which server this is, for a progress line,
// and what Start reclaimed. It never shows the password.
func (s *Server) Describe() string {
	d := fmt.Sprintf("managed MariaDB %s from %s, running as user %s, socket %s, 127.0.0.1:%d, innodb_buffer_pool_size %s",
		s.version, s.BinDir, s.User, s.socket(), s.Port, s.settings["innodb-buffer-pool-size"])
	if len(s.Reclaimed) > 0 {
		d += fmt.Sprintf("; removed %s, left by killed numalab processes", strings.Join(s.Reclaimed, ", "))
	}
	if s.ReclaimErr != nil {
		d += fmt.Sprintf("; could not reclaim: %v", s.ReclaimErr)
	}
	return d
}

// logTail returns the last lines of a log, to explain a failure.
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

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
