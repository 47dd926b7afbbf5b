package mariaserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/numalab/numalab/internal/managed"
	"github.com/numalab/numalab/internal/place"
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

// kind is what package managed needs to know of MariaDB.
var kind = managed.Kind{
	Title:        "MariaDB",
	Prefix:       "numalab-mariadb-",
	Accounts:     []string{"mysql", "nobody"},
	RootRefusal:  "numalab runs its MariaDB server as an unprivileged user",
	InitLog:      "install-db.log",
	Log:          "mariadb.log",
	Shutdown:     syscall.SIGTERM,
	ShutdownName: "shutdown",
	DeathSignal:  syscall.SIGKILL,
}

// Server is a running managed MariaDB server. Stop it (defer s.Stop()) in
// the function that started it.
type Server struct {
	// Server is the lifecycle: BinDir (mariadbd's), User, Dir, InitTime
	// (mariadb-install-db), BootTime, Reclaimed, Stop, PID (connections
	// are its threads), DataDir, Version ("10.11.19-MariaDB-0+deb12u1").
	*managed.Server
	// Port is the TCP port on 127.0.0.1.
	Port int

	password string
	settings map[string]string
}

// Start starts a managed MariaDB server as the package documentation
// describes. The server stops when ctx is cancelled or Stop is called;
// the caller must call Stop in any case.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	s := &Server{}
	var server, install string
	m, err := managed.Start(ctx, kind, managed.Steps{
		User: cfg.User, MemPolicy: cfg.MemPolicy,
		StartTimeout: cfg.StartTimeout, StopTimeout: cfg.StopTimeout,
		Binaries: func(ctx context.Context) (string, string, error) {
			var err error
			if server, install, err = findBinaries(cfg.BinDir); err != nil {
				return "", "", err
			}
			version, err := serverVersion(ctx, server)
			return filepath.Dir(server), version, err
		},
		Socket: socket,
		Init: func(ctx context.Context, m *managed.Server, log io.Writer) error {
			cmd := exec.CommandContext(ctx, install, "--no-defaults", "--datadir="+m.DataDir(),
				"--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve")
			m.Prepare(cmd, log)
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("running %s: %w", install, err)
			}
			return nil
		},
		Command: func(m *managed.Server) (*exec.Cmd, error) { return s.command(cfg, m, server) },
		Ready: func(m *managed.Server) bool {
			b, err := os.ReadFile(m.LogPath())
			if err != nil || !bytes.Contains(b, []byte("ready for connections")) {
				return false
			}
			c, err := net.Dial("unix", socket(m.Dir))
			if err == nil {
				c.Close()
			}
			return err == nil
		},
	})
	if err != nil {
		return nil, err
	}
	s.Server = m
	os.Remove(initFile(m.Dir))
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
		return "", "", fmt.Errorf("%w: no mariadbd in %s (install MariaDB's server, Debian's package mariadb-server, "+
			"or use --dsn with your own server)", ErrNoBinaries, strings.Join(dirs, ", "))
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
	return "", "",
		fmt.Errorf("%w: %s is there but mariadb-install-db is not (looked in %s; install Debian's package mariadb-server)",
			ErrNoBinaries, server, strings.Join(cands, ", "))
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

// command writes the init file, chooses the port and settings, and
// returns mariadbd's command.
func (s *Server) command(cfg Config, m *managed.Server, server string) (*exec.Cmd, error) {
	var err error
	if s.password, err = randomPassword(); err != nil {
		return nil, err
	}
	init := initFile(m.Dir)
	if err := os.WriteFile(init, []byte(initSQL(s.password)), 0o600); err != nil {
		return nil, fmt.Errorf("writing the init file: %w", err)
	}
	if acct := m.Account(); acct.Other {
		if err := os.Chown(init, acct.UID, acct.GID); err != nil {
			return nil, fmt.Errorf("giving the init file to user %s: %w", acct.Name, err)
		}
	}
	if s.Port, err = freePort(); err != nil {
		return nil, err
	}
	s.settings = serverSettings(cfg, m.Dir, s.Port)
	args := []string{"--no-defaults"}
	for _, k := range slices.Sorted(maps.Keys(s.settings)) {
		args = append(args, "--"+k+"="+s.settings[k])
	}
	args = append(args, "--init-file="+init, "--log-error="+m.LogPath())
	return exec.Command(server, args...), nil
}

// initFile is the init file in dir, removed once the server is up.
func initFile(dir string) string { return filepath.Join(dir, "init.sql") }

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

// serverSettings returns the server options for cfg, in dir, on port.
func serverSettings(cfg Config, dir string, port int) map[string]string {
	bp := cfg.BufferPool
	if bp <= 0 {
		bp = 128 << 20
	}
	conns := cfg.MaxConnections
	if conns <= 0 {
		conns = max(151, 4*runtime.NumCPU()+20)
	}
	m := map[string]string{
		"datadir":                        filepath.Join(dir, "data"),
		"socket":                         socket(dir),
		"bind-address":                   "127.0.0.1",
		"port":                           strconv.Itoa(port),
		"pid-file":                       filepath.Join(dir, "mariadbd.pid"),
		"tmpdir":                         dir,
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

// socket is the server's unix socket in dir.
func socket(dir string) string { return filepath.Join(dir, "mariadb.sock") }

// DSN is a go-sql-driver/mysql DSN for numalab's account over the unix
// socket, password included: never print it (Describe says where).
func (s *Server) DSN() string {
	return fmt.Sprintf("%s:%s@unix(%s)/", User, s.password, socket(s.Dir))
}

// TCPDSN is DSN over TCP loopback (127.0.0.1).
func (s *Server) TCPDSN() string {
	return fmt.Sprintf("%s:%s@tcp(127.0.0.1:%d)/", User, s.password, s.Port)
}

// Socket is the server's unix socket.
func (s *Server) Socket() string { return socket(s.Dir) }

// Password is numalab's account's password, for a peer client (sysbench)
// run against the same server. Never print it.
func (s *Server) Password() string { return s.password }

// Settings returns the options numalab gave the server (a copy).
func (s *Server) Settings() map[string]string { return maps.Clone(s.settings) }

// Describe says in one line which server this is, for a progress line,
// and what Start reclaimed. It never shows the password.
func (s *Server) Describe() string {
	return s.Description(s.BinDir, fmt.Sprintf("socket %s, 127.0.0.1:%d, innodb_buffer_pool_size %s",
		socket(s.Dir), s.Port, s.settings["innodb-buffer-pool-size"]))
}
