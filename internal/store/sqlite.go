package store

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-sqlite3" // the SQLite driver
	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/result"
)

// applicationID marks a SQLite file as a numalab store ("NUMA").
const applicationID = 0x4E554D41

// migrations[i] takes an SQLite store's schema from version i to i+1
// (PRAGMA user_version); pgMigrations[i] does the same in PostgreSQL.
// Append only, to both.
var migrations = []string{
	`CREATE TABLE runs (
		id       INTEGER PRIMARY KEY,
		kind     TEXT NOT NULL,
		command  TEXT NOT NULL,
		config   TEXT NOT NULL,
		version  TEXT NOT NULL,
		host     TEXT NOT NULL,
		machine  TEXT,
		started  TEXT NOT NULL,
		finished TEXT,
		status   TEXT NOT NULL,
		headline TEXT NOT NULL DEFAULT '',
		error    TEXT NOT NULL DEFAULT ''
	);
	CREATE TABLE items (
		run_id INTEGER NOT NULL REFERENCES runs(id),
		seq    INTEGER NOT NULL,
		kind   TEXT NOT NULL,
		body   TEXT NOT NULL,
		PRIMARY KEY (run_id, seq)
	);`,
	// 2: the latest run of a kind (Latest) without reading every run, for
	// stores that many machines write.
	`CREATE INDEX runs_kind ON runs (kind, id);`,
	// 3: the process writing a run, to tell a killed run from a running one.
	`ALTER TABLE runs ADD COLUMN pid INTEGER;
	ALTER TABLE runs ADD COLUMN pid_start INTEGER;`,
	// 4: a UID for every run (a version 4 UUID), the same in every store
	// the run is copied to; runs stored before get one now.
	`ALTER TABLE runs ADD COLUMN uid TEXT;
	UPDATE runs SET uid = lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' ||
		substr('89ab', 1 + abs(random() % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)));
	CREATE UNIQUE INDEX runs_uid ON runs (uid);`,
	// 5: when a PostgreSQL store received the run, by its own clock
	// (result.Run.Received); SQLite keeps a copied run's.
	`ALTER TABLE runs ADD COLUMN received TEXT;`,
}

// openSQLite opens (creating or migrating) the store in the file path.
func openSQLite(path string) (*Store, error) {
	if err := checkFile(path); err != nil {
		return nil, fmt.Errorf("opening store %q: %w", path, err)
	}
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(lockStep.Milliseconds(), 10))
	q.Set("_journal_mode", "WAL")
	q.Set("_txlock", "immediate")
	q.Set("_foreign_keys", "1")
	db, err := sql.Open("sqlite3", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("opening store %q: %w", path, err)
	}
	s := &Store{db: db, name: path, owners: true, uids: true, received: true, writes: true}
	if err := s.waitLock(s.migrateSQLite); err != nil {
		db.Close()
		if isBusy(err) {
			return nil, fmt.Errorf("opening store %q: %w", path, lockedError(path, err))
		}
		return nil, fmt.Errorf("opening store %q: %w", path, fileTrouble(path, err))
	}
	return s, nil
}

// Waiting, when set, hears a line at most every 5 s while a writer to an
// SQLite store (Open, Begin, Add, Finish) waits for the write lock that
// another holds: who holds it and how long this one has waited. The store
// prints nothing itself; cmd/numalab sets Waiting to print on stderr.
var Waiting func(line string)

// lockStep is SQLite's busy timeout, one wait for a held lock, and so how
// often Waiting hears; lockLimit is the whole wait before a writer is
// refused. Tests shorten them.
var lockStep, lockLimit = 5 * time.Second, 30 * time.Second

// waitLock runs op (one SQLite statement or transaction, which changes
// nothing when it fails on a held lock) again while another holds the
// store's write lock, telling Waiting, until lockLimit has passed.
func (s *Store) waitLock(op func() error) error {
	if err := s.writable(); err != nil {
		return err
	}
	start := time.Now()
	for {
		err := op()
		if s.pg || !isBusy(err) || time.Since(start) >= lockLimit {
			return err
		}
		if Waiting != nil {
			Waiting(fmt.Sprintf("store %s is locked (%s): waited %v of %v for it",
				s.name, lockHolders(s.name), time.Since(start).Round(time.Second), lockLimit))
		}
	}
}

// writable says whether a file store opened to write can still be
// written: SQLite writes its WAL index (the -shm file) through a shared
// mapping, on reads too, and a file made immutable or a file system
// remounted read-only under a run ends the process there with SIGBUS.
// Checked before each operation, such a store ends the run with this
// error instead, and what was stored before stays.
func (s *Store) writable() error {
	if s.pg || !s.writes {
		return nil
	}
	for _, p := range []string{s.name, s.name + "-wal", s.name + "-shm"} {
		if err := unix.Access(p, unix.W_OK); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("store %s stopped accepting writes: %s: %w (what was stored before stays; make it writable "+
				"again, or give --store elsewhere)",
				s.name, filepath.Base(p), err)
		}
	}
	return nil
}

// isBusy reports whether err is SQLite's "database is locked".
func isBusy(err error) bool {
	se := sqlite3.Error{}
	return errors.As(err, &se) && se.Code == sqlite3.ErrBusy
}

// lockHolders says who may hold the store's write lock: the runs stored
// as in progress, with their process and command, read without a lock.
func lockHolders(path string) string {
	const other = "by another program, not a numalab run in progress: an sqlite3 shell in a transaction?"
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		return other
	}
	defer db.Close()
	rows, err := db.Query(`SELECT id, pid, command FROM runs WHERE status = ? AND pid IS NOT NULL ORDER BY id`,
		result.StatusRunning)
	if err != nil {
		return other
	}
	defer rows.Close()
	var held []string
	for rows.Next() {
		var id, pid int64
		var command string
		if rows.Scan(&id, &pid, &command) == nil {
			held = append(held, fmt.Sprintf("run %d (pid %d: %s)", id, pid, command))
		}
	}
	if len(held) == 0 {
		return other
	}
	return "in progress in this store: " + strings.Join(held, ", ")
}

// lockedError is err, a writer's refusal after lockLimit, with who holds
// the lock and the next step.
func lockedError(path string, err error) error {
	return fmt.Errorf("%w: another writer held it for %v; %s; wait for it to end, or give another --store",
		err, lockLimit, lockHolders(path))
}

// checkFile refuses, without writing, a file that is not SQLite.
func checkFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.IsDir() {
		return fmt.Errorf("is a directory (try --store %s/numalab.db)", path)
	}
	head := make([]byte, 16)
	n, err := io.ReadFull(f, head)
	if n == 0 && (err == io.EOF || err == nil) {
		return nil // empty file: a new store
	}
	if !bytes.Equal(head[:n], []byte("SQLite format 3\x00")) {
		return fmt.Errorf("file is %w: not an SQLite database (try --store new.db)", ErrNotStore)
	}
	// Look read-only first: opening in WAL mode would rewrite the header of
	// a database that is not ours.
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&_busy_timeout=30000")
	if err != nil {
		return err
	}
	defer db.Close()
	app, _, tables, err := readMarks(db)
	if err != nil {
		return marksError(path, err)
	}
	if app != applicationID && (app != 0 || tables != 0) {
		return fmt.Errorf("file is %w: an SQLite database of another program (try --store new.db)", ErrNotStore)
	}
	return nil
}

// readMarks reads what tells a numalab store from another file: the
// application id, the schema version and the number of schema objects, in
// one statement and so from one snapshot. Read one by one, they could
// straddle another process's creation of the store: the id from before
// it, the tables from after, which is "another program's database".
func readMarks(q interface {
	QueryRow(query string, args ...any) *sql.Row
}) (app, ver, tables int, err error) {
	err = q.QueryRow(`SELECT (SELECT application_id FROM pragma_application_id),
		(SELECT user_version FROM pragma_user_version),
		(SELECT count(*) FROM sqlite_master)`).Scan(&app, &ver, &tables)
	return app, ver, tables, err
}

func (s *Store) migrateSQLite() error {
	tx, err := s.db.Begin() // immediate: one migrator at a time
	if err != nil {
		return err
	}
	defer tx.Rollback()
	app, ver, tables, err := readMarks(tx)
	if err != nil {
		return marksError(s.name, err)
	}
	switch {
	case app == 0 && tables == 0 && ver == 0:
		if _, err := tx.Exec(fmt.Sprintf(`PRAGMA application_id = %d`, applicationID)); err != nil {
			return err
		}
	case app != applicationID:
		return fmt.Errorf("file is %w: an SQLite database of another program (try --store new.db)", ErrNotStore)
	case ver > len(migrations):
		return newerError(ver)
	}
	for v := ver; v < len(migrations); v++ {
		if _, err := tx.Exec(migrations[v]); err != nil {
			return fmt.Errorf("migrating schema to version %d: %w", v+1, err)
		}
	}
	if _, err := tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, len(migrations))); err != nil {
		return err
	}
	return tx.Commit()
}

// marksError is readMarks's failure on the file path: the file is not a
// store only where SQLite says it is no database, or a corrupt one; any
// other failure (a full disk, a directory that cannot be written, an I/O
// error) is named as what it is (fileTrouble), never blamed on the file.
func marksError(path string, err error) error {
	var se sqlite3.Error
	if errors.As(err, &se) && (se.Code == sqlite3.ErrNotADB || se.Code == sqlite3.ErrCorrupt) {
		return fmt.Errorf("file is %w: %v (try --store new.db)", ErrNotStore, err)
	}
	return fileTrouble(path, err)
}

// fileTrouble is err, SQLite's failure to open, read or write the store
// in the file path, with what was wrong where it can be told: no space
// left on the file system, a directory that does not exist or cannot be
// written, a file that cannot be written. SQLite itself may say "no such
// file or directory" for a directory it may not create a file in.
func fileTrouble(path string, err error) error {
	if errors.Is(err, ErrNotStore) || errors.Is(err, ErrNewer) {
		return err
	}
	var se sqlite3.Error
	errors.As(err, &se)
	dir := filepath.Dir(path)
	if se.Code == sqlite3.ErrFull || se.SystemErrno == unix.ENOSPC || errors.Is(err, unix.ENOSPC) {
		return fmt.Errorf("the file system holding %s is full (%w): free space there, or give --store elsewhere", dir, err)
	}
	if st, serr := os.Stat(dir); serr != nil {
		return fmt.Errorf("its directory: %w (SQLite said: %v): create it, or give --store elsewhere", serr, err)
	} else if !st.IsDir() {
		return fmt.Errorf("%s is not a directory (SQLite said: %v): give --store elsewhere", dir, err)
	}
	if aerr := unix.Access(dir, unix.W_OK); aerr != nil {
		return fmt.Errorf(
			"directory %s cannot be written: %w (SQLite said: %v): give --store in a directory you can write", dir, aerr, err)
	}
	if aerr := unix.Access(path, unix.W_OK); aerr != nil && !errors.Is(aerr, unix.ENOENT) {
		return fmt.Errorf("the file cannot be written: %w (SQLite said: %v): give --store a file you can write", aerr, err)
	}
	return err
}

func newerError(ver int) error {
	return fmt.Errorf("%w (schema version %d; this numalab knows up to %d): upgrade numalab, or give another --store",
		ErrNewer, ver, len(migrations))
}

// openSQLiteReadOnly opens the file path for reading. A missing or empty
// file (or an SQLite database without tables, which Open would adopt) is
// ErrNoStore. Every older schema is read as it is: the migrations after
// version 1 add an index, the run's process columns (read as NULL where
// they are missing: Store.owners), the uid column (Store.uids) and the
// received column (Store.received). A
// migration that changes a table otherwise must make this refuse the
// versions before it, saying to open the store once with a command that
// stores a run.
func openSQLiteReadOnly(path string) (*Store, error) {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) || err == nil && st.Mode().IsRegular() && st.Size() == 0 {
		return nil, fmt.Errorf("opening store %q: %w", path, ErrNoStore)
	}
	if err := checkFile(path); err != nil {
		return nil, fmt.Errorf("opening store %q: %w", path, err)
	}
	// Query-only on a writable file, so that closing it checkpoints and
	// removes the WAL files as a writer's close does; mode=ro where the
	// file cannot be written.
	db, err := openQuery(path, "mode=rw&_query_only=1")
	if err != nil {
		db, err = openQuery(path, "mode=ro")
	}
	if err != nil {
		return nil, fmt.Errorf("opening store %q: %w", path, fileTrouble(path, err))
	}
	app, ver, _, err := readMarks(db)
	switch {
	case err != nil:
		err = marksError(path, err)
	case app != applicationID || ver == 0:
		err = ErrNoStore // an empty SQLite database: a writer would make it a store
	case ver > len(migrations):
		err = newerError(ver)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("opening store %q: %w", path, err)
	}
	return &Store{db: db, name: path, owners: ver >= ownerVersion, uids: ver >= uidVersion,
		received: ver >= receivedVersion}, nil
}

// openQuery opens path with the given SQLite URI parameters and checks
// that it can be read.
func openQuery(path, params string) (*sql.DB, error) {
	db, err := sql.Open("sqlite3", "file:"+path+"?"+params+"&_busy_timeout=30000")
	if err != nil {
		return nil, err
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}
