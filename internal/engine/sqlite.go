// Package engine opens the databases numalab drives: one file per engine.
//
// SQLite (this file) is opened in two ways:
//
//   - for loading: a new file, written by one connection with journal_mode=OFF,
//     synchronous=OFF and an exclusive lock. A crash leaves a broken file; the
//     loader therefore deletes what it created on error, and marks the file
//     complete only at the very end.
//   - for running: read-only and immutable=1 (no file locks, no change checks),
//     with memory-mapped I/O covering the file, one connection per stream and
//     no per-connection mutex. All connections then read the same physical
//     pages: the kernel's page cache, mapped into the process, rather than a
//     private page cache per connection. SQLite caps mmap at 2 GiB
//     (SQLITE_MAX_MMAP_SIZE); pages beyond it are read with pread into each
//     connection's own cache, so files larger than that are not fully shared.
//
// Where those shared pages live on a NUMA machine is decided when they enter
// the page cache (the first read, or the loader's write), on the node of the
// thread that caused it, not when SQLite maps them. PrewarmSQLiteFile can drop
// a file's clean, unmapped pages and read it again from the calling thread, so
// that a caller pinned to node N places the data on node N.
package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"

	"github.com/mattn/go-sqlite3"
	"golang.org/x/sys/unix"
)

// SQLiteMaxMmap is the largest memory map SQLite was compiled to allow.
const SQLiteMaxMmap = 0x7fff0000

// ErrDiskFull is wrapped by errors from a write that found the disk (or the
// database's page limit) full.
var ErrDiskFull = errors.New("disk full")

// sqliteURI makes an SQLite URI filename for path with query parameters.
func sqliteURI(path string, params string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: params}
	return u.String(), nil
}

// loadPragmas make a bulk load fast: no rollback journal, no fsync, one
// writer holding its lock, a large page cache.
var loadPragmas = []string{
	"PRAGMA journal_mode=OFF",
	"PRAGMA synchronous=OFF",
	"PRAGMA locking_mode=EXCLUSIVE",
	"PRAGMA temp_store=MEMORY",
	"PRAGMA cache_size=-262144", // 256 MiB
}

// CreateSQLite creates a new SQLite file at path for loading. It refuses a
// path that exists. The returned pool holds at most one connection, opened
// with the load pragmas and then the extra ones (tests use max_page_count to
// simulate a full disk). The caller removes the file if the load fails.
func CreateSQLite(path string, extra ...string) (*sql.DB, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("creating %s: file exists (remove it or choose another file)", path)
		}
		return nil, fmt.Errorf("creating %s: %w", path, err)
	}
	f.Close()
	dsn, err := sqliteURI(path, "_mutex=no")
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("creating %s: %w", path, err)
	}
	pragmas := append(append([]string(nil), loadPragmas...), extra...)
	hook := func(c *sqlite3.SQLiteConn) error {
		for _, p := range pragmas {
			if _, err := c.Exec(p, nil); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
		return nil
	}
	db := sql.OpenDB(connector{dsn: dsn, d: &sqlite3.SQLiteDriver{ConnectHook: hook}})
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	if err := db.Ping(); err != nil {
		db.Close()
		os.Remove(path)
		return nil, fmt.Errorf("creating %s: %w", path, err)
	}
	return db, nil
}

// SQLiteError makes an error from a write clearer: a full disk or a full
// database wraps ErrDiskFull.
func SQLiteError(err error) error {
	var se sqlite3.Error
	if errors.As(err, &se) && se.Code == sqlite3.ErrFull {
		return fmt.Errorf("%w: %w", ErrDiskFull, err)
	}
	if errors.Is(err, unix.ENOSPC) {
		return fmt.Errorf("%w: %w", ErrDiskFull, err)
	}
	return err
}

// runParams open a file read-only and immutable, without a per-connection
// mutex (each connection belongs to one stream).
const runParams = "mode=ro&immutable=1&_mutex=no"

// OpenSQLiteConn opens one read-only connection to an existing file for a
// stream, with mmap covering the whole file (up to SQLiteMaxMmap). Each
// stream opens its own.
func OpenSQLiteConn(path string) (*sqlite3.SQLiteConn, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	dsn, err := sqliteURI(path, runParams)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	dc, err := (&sqlite3.SQLiteDriver{ConnectHook: mmapHook(st.Size())}).Open(dsn)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	return dc.(*sqlite3.SQLiteConn), nil
}

// OpenSQLiteDB opens an existing file read-only through database/sql, for
// checks and reports rather than the measured hot path.
func OpenSQLiteDB(path string) (*sql.DB, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	dsn, err := sqliteURI(path, runParams)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	return sql.OpenDB(connector{dsn: dsn, d: &sqlite3.SQLiteDriver{ConnectHook: mmapHook(st.Size())}}), nil
}

// mmapHook sets mmap_size to cover size bytes.
func mmapHook(size int64) func(*sqlite3.SQLiteConn) error {
	m := size + 1<<20
	if m > SQLiteMaxMmap {
		m = SQLiteMaxMmap
	}
	return func(c *sqlite3.SQLiteConn) error {
		_, err := c.Exec(fmt.Sprintf("PRAGMA mmap_size=%d", m), nil)
		return err
	}
}

// connector opens connections with a configured driver, so no driver needs
// registering under a global name.
type connector struct {
	dsn string
	d   *sqlite3.SQLiteDriver
}

func (c connector) Connect(context.Context) (driver.Conn, error) { return c.d.Open(c.dsn) }
func (c connector) Driver() driver.Driver                        { return c.d }

// PrewarmSQLiteFile reads the whole file from the calling thread so that its
// pages are in the page cache. With evict, it first asks the kernel to drop
// the file's cached pages (only clean pages not mapped by anyone are dropped),
// so that the read places them anew on the caller's NUMA node. It returns the
// bytes read.
func PrewarmSQLiteFile(path string, evict bool) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("prewarming %s: %w", path, err)
	}
	defer f.Close()
	if evict {
		// Only clean pages can be dropped: write back what the load left.
		if err := f.Sync(); err != nil {
			return 0, fmt.Errorf("prewarming %s: syncing: %w", path, err)
		}
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			return 0, fmt.Errorf("prewarming %s: dropping cached pages: %w", path, err)
		}
	}
	buf := make([]byte, 1<<20)
	var n int64
	for {
		k, err := f.Read(buf)
		n += int64(k)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("prewarming %s: %w", path, err)
		}
	}
}
