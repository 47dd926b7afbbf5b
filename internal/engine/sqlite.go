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
	"strings"
	"time"

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

// WriteBusyTimeout is how long a read-write SQLite connection
// (Options.Write) waits for another's lock before its statement fails
// with SQLITE_BUSY.
const WriteBusyTimeout = 5 * time.Second

// writeParams open a file read-write, with a busy timeout, without a
// per-connection mutex (each connection belongs to one stream). The
// journal mode is the file's: numalab sets nothing in it.
var writeParams = fmt.Sprintf("mode=rw&_busy_timeout=%d&_mutex=no", WriteBusyTimeout.Milliseconds())

// openSQLiteWrite opens one read-write connection to an existing file.
func openSQLiteWrite(path string) (*sqlite3.SQLiteConn, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	dsn, err := sqliteURI(path, writeParams)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	dc, err := (&sqlite3.SQLiteDriver{}).Open(dsn)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	return dc.(*sqlite3.SQLiteConn), nil
}

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

// sqliteEngine is SQLite as an Engine: a file, written by one load
// connection (Options.Create) and read by read-only, immutable stream
// connections, or with Options.Write read and written by read-write ones.
type sqliteEngine struct {
	path    string
	created bool
	write   bool
	db      *sql.DB
}

var _ Engine = (*sqliteEngine)(nil)

func openSQLite(opt Options) (*sqliteEngine, error) {
	if opt.Path == "" {
		return nil, errors.New("opening sqlite: no database file given (name one, e.g. numalab.sqlite)")
	}
	e := &sqliteEngine{path: opt.Path, created: opt.Create}
	var err error
	switch {
	case opt.Create:
		e.db, err = CreateSQLite(opt.Path)
	case opt.Write:
		e.write = true
		var dsn string
		if _, err = os.Stat(opt.Path); err == nil {
			dsn, err = sqliteURI(opt.Path, writeParams)
		}
		if err == nil {
			e.db = sql.OpenDB(connector{dsn: dsn, d: &sqlite3.SQLiteDriver{}})
			e.db.SetMaxIdleConns(2)
		}
	default:
		e.db, err = OpenSQLiteDB(opt.Path)
		if err == nil {
			e.db.SetMaxIdleConns(2)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("opening sqlite: %w", err)
	}
	return e, nil
}

func (e *sqliteEngine) Name() string { return "sqlite" }
func (e *sqliteEngine) DB() *sql.DB  { return e.db }

func (e *sqliteEngine) Path() string   { return e.path }
func (e *sqliteEngine) Schema() string { return "" }

// Bulk loads with prepared multi-row INSERTs, in one write transaction per
// Flush (and per sqliteBulkTxRows rows).
func (e *sqliteEngine) Bulk(ctx context.Context, table string, columns []string) (Bulk, error) {
	if !e.created {
		return nil, fmt.Errorf("loading %s into %s: the file is open read-only (load into a new file)", table, e.path)
	}
	if len(columns) == 0 {
		return nil, fmt.Errorf("loading %s into %s: no columns", table, e.path)
	}
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading %s into %s: %w", table, e.path, err)
	}
	per := max(1, sqliteBulkParams/len(columns))
	b := &sqliteBulk{ctx: ctx, conn: conn, table: table, cols: columns, per: per,
		stmts: map[int]*sql.Stmt{}, buf: make([]any, 0, per*len(columns))}
	return b, nil
}

// sqliteBulkParams bounds the parameters of one INSERT; sqliteBulkTxRows
// the rows of one write transaction.
const (
	sqliteBulkParams = 4096
	sqliteBulkTxRows = 65536
)

type sqliteBulk struct {
	ctx   context.Context
	conn  *sql.Conn
	table string
	cols  []string
	per   int // rows per INSERT
	stmts map[int]*sql.Stmt
	buf   []any
	inTx  int // rows written in the open transaction; -1 none open
	rows  int64
	open  bool
}

func (b *sqliteBulk) stmt(n int) (*sql.Stmt, error) {
	if s, ok := b.stmts[n]; ok {
		return s, nil
	}
	var q strings.Builder
	fmt.Fprintf(&q, "INSERT INTO %s (%s) VALUES ", b.table, strings.Join(b.cols, ", "))
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", len(b.cols)), ",") + ")"
	for i := 0; i < n; i++ {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteString(row)
	}
	s, err := b.conn.PrepareContext(b.ctx, q.String())
	if err != nil {
		return nil, err
	}
	b.stmts[n] = s
	return s, nil
}

func (b *sqliteBulk) Append(vals ...any) error {
	if len(vals) != len(b.cols) {
		return fmt.Errorf("loading %s: %d values for %d columns", b.table, len(vals), len(b.cols))
	}
	b.buf = append(b.buf, vals...)
	if len(b.buf) == b.per*len(b.cols) {
		return b.write()
	}
	return nil
}

// write inserts the buffered rows inside the open write transaction.
func (b *sqliteBulk) write() error {
	n := len(b.buf) / len(b.cols)
	if n == 0 {
		return nil
	}
	if !b.open {
		if _, err := b.conn.ExecContext(b.ctx, "BEGIN"); err != nil {
			return fmt.Errorf("loading %s: %w", b.table, SQLiteError(err))
		}
		b.open, b.inTx = true, 0
	}
	s, err := b.stmt(n)
	if err == nil {
		_, err = s.ExecContext(b.ctx, b.buf...)
	}
	if err != nil {
		return fmt.Errorf("loading %s: %w", b.table, SQLiteError(err))
	}
	b.buf = b.buf[:0]
	b.rows += int64(n)
	b.inTx += n
	if b.inTx >= sqliteBulkTxRows {
		return b.commit()
	}
	return nil
}

func (b *sqliteBulk) commit() error {
	if !b.open {
		return nil
	}
	b.open = false
	if _, err := b.conn.ExecContext(b.ctx, "COMMIT"); err != nil {
		return fmt.Errorf("loading %s: %w", b.table, SQLiteError(err))
	}
	return nil
}

func (b *sqliteBulk) Flush() error {
	if err := b.write(); err != nil {
		return err
	}
	return b.commit()
}

func (b *sqliteBulk) Close() error {
	err := b.Flush()
	for _, s := range b.stmts {
		s.Close()
	}
	if b.open {
		b.conn.ExecContext(context.Background(), "ROLLBACK")
	}
	if cerr := b.conn.Close(); err == nil {
		err = cerr
	}
	return err
}

func (b *sqliteBulk) Rows() int64 { return b.rows }

// Connect opens a read-only, immutable connection with mmap over the file,
// or with Options.Write a read-write one.
func (e *sqliteEngine) Connect(ctx context.Context) (Conn, error) {
	open := OpenSQLiteConn
	if e.write {
		open = openSQLiteWrite
	}
	c, h, err := openWithHandle(func() (*sqlite3.SQLiteConn, error) { return open(e.path) })
	if err != nil {
		return nil, err
	}
	return &sqliteConn{c: c, h: h}, nil
}

// SetDOP accepts only 1: SQLite runs each query on the one thread that
// calls it.
func (e *sqliteEngine) SetDOP(ctx context.Context, dop int) error {
	if dop != 1 {
		return fmt.Errorf("setting sqlite DOP: %d is not possible: SQLite runs each query on one thread, the caller's "+
			"(use DOP 1, or more streams)", dop)
	}
	return nil
}

func (e *sqliteEngine) Describe(ctx context.Context) (Info, error) {
	v, _, _ := sqlite3.Version()
	in := Info{Engine: "sqlite", Version: v, Where: e.path, Settings: map[string]string{}}
	switch {
	case e.created:
		in.Settings["mode"] = "load: journal_mode=OFF, synchronous=OFF, locking_mode=EXCLUSIVE"
	case e.write:
		in.Settings["mode"] = fmt.Sprintf(
			"read-write, busy timeout %v, one connection per stream, no connection mutex", WriteBusyTimeout)
	default:
		in.Settings["mode"] = "read-only, immutable=1, one connection per stream, no connection mutex"
	}
	for _, p := range []string{"page_size", "cache_size", "mmap_size", "journal_mode", "page_count"} {
		var s string
		if err := e.db.QueryRowContext(ctx, "PRAGMA "+p).Scan(&s); err != nil {
			return in, fmt.Errorf("describing sqlite: PRAGMA %s: %w", p, err)
		}
		in.Settings[p] = s
	}
	in.Settings["dop"] = "1"
	return in, nil
}

// Explain renders EXPLAIN QUERY PLAN as an indented tree.
func (e *sqliteEngine) Explain(ctx context.Context, query string, args ...any) (string, error) {
	rows, err := e.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		return "", fmt.Errorf("explaining on sqlite: %w", err)
	}
	defer rows.Close()
	depth := map[int64]int{0: -1}
	var lines []string
	for rows.Next() {
		var id, parent, unused int64
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return "", fmt.Errorf("explaining on sqlite: %w", err)
		}
		d := depth[parent] + 1
		depth[id] = d
		lines = append(lines, strings.Repeat("  ", d)+detail)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("explaining on sqlite: %w", err)
	}
	return normalisePlan(lines), nil
}

// Prewarm drops the file's clean, unmapped cached pages and reads the file
// from the calling thread, so that its pages come to the caller's node.
func (e *sqliteEngine) Prewarm(ctx context.Context) (PrewarmStats, error) {
	n, err := PrewarmSQLiteFile(e.path, true)
	return PrewarmStats{Bytes: n, Objects: 1, Method: "read file"}, err
}

func (e *sqliteEngine) Close() error { return e.db.Close() }

func (e *sqliteEngine) Discard() error {
	err := e.db.Close()
	if e.created {
		for _, p := range []string{e.path, e.path + "-journal", e.path + "-wal", e.path + "-shm"} {
			if rerr := os.Remove(p); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
				err = rerr
			}
		}
	}
	return err
}

// sqliteConn is a stream's connection on go-sqlite3's own API, and its
// handle for prepared statements (sqlite_stmt.go).
type sqliteConn struct {
	c *sqlite3.SQLiteConn
	h sqliteHandle
}

func namedValues(args []any) []driver.NamedValue {
	nv := make([]driver.NamedValue, len(args))
	for i, a := range args {
		if x, ok := a.(int); ok {
			a = int64(x)
		}
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return nv
}

func (c *sqliteConn) Exec(ctx context.Context, query string, args ...any) error {
	_, err := c.c.ExecContext(ctx, query, namedValues(args))
	return err
}

func (c *sqliteConn) Query(ctx context.Context, query string, args []any, row func([]any) error) error {
	rows, err := c.c.QueryContext(ctx, query, namedValues(args))
	if err != nil {
		return err
	}
	defer rows.Close()
	dv := make([]driver.Value, len(rows.Columns()))
	vals := make([]any, len(dv))
	for {
		err := rows.Next(dv)
		if err == io.EOF {
			return rows.Close()
		}
		if err != nil {
			return err
		}
		for i, v := range dv {
			vals[i] = normalise(v)
		}
		if err := row(vals); err != nil {
			return err
		}
	}
}

func (c *sqliteConn) BackendPID() int { return 0 }
func (c *sqliteConn) Close() error    { return c.c.Close() }
