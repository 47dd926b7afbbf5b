// Package store keeps numalab's results in one SQLite file: every run with
// the machine it ran on, its full configuration, numalab's version, and the
// items it measured, in order.
//
// The schema is versioned (PRAGMA user_version) and migrated forward when
// a command that writes opens it; commands that only read (OpenReadOnly)
// never create, migrate or write a store. A store from a newer numalab is
// refused. A file is recognised as a store by its SQLite application_id; any
// other file, SQLite or not, is refused and never written. Several numalab
// processes may write one store at once: the file is in WAL mode, writers
// wait for each other (busy timeout) and every write is one short
// transaction, so nothing is lost.
//
// A run records the process that writes it (PID and start time, with the
// host): a run still "running" whose process is gone (killed, crashed) is
// read back as "abandoned", with everything it stored.
//
// The store never deletes a run.
package store

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	_ "github.com/mattn/go-sqlite3" // the SQLite driver

	"github.com/numalab/numalab/internal/owner"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
)

// applicationID marks a SQLite file as a numalab store ("NUMA").
const applicationID = 0x4E554D41

// ErrNotStore is returned for a file that is not a numalab store.
var ErrNotStore = errors.New("file is not a numalab store")

// ErrNoRun is returned by Get for an id that is not in the store.
var ErrNoRun = errors.New("no such run")

// ErrNoStore is returned by OpenReadOnly for a file that does not exist
// or is empty: nothing has been stored there yet.
var ErrNoStore = errors.New("no store yet")

// ErrNewer is returned for a store written by a newer numalab.
var ErrNewer = errors.New("stored by a newer numalab")

// migrations[i] takes the schema from version i to i+1. Append only.
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
}

// SchemaVersion is the schema version this numalab writes.
var SchemaVersion = len(migrations)

// Store is an open results store.
type Store struct {
	db   *sql.DB
	path string

	ownerOnce sync.Once
	ownerCols string // "pid, pid_start", or NULLs for a store without them
}

// Open opens the store at path, creating it if the file does not exist or
// is empty. It refuses a file that is not a numalab store, and a store
// written by a newer numalab.
func Open(path string) (*Store, error) {
	if err := checkFile(path); err != nil {
		return nil, fmt.Errorf("opening store %q: %w", path, err)
	}
	q := url.Values{}
	q.Set("_busy_timeout", "30000")
	q.Set("_journal_mode", "WAL")
	q.Set("_txlock", "immediate")
	q.Set("_foreign_keys", "1")
	db, err := sql.Open("sqlite3", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("opening store %q: %w", path, err)
	}
	s := &Store{db: db, path: path}
	if err := s.migrate(); err != nil {
		db.Close()
		return nil, fmt.Errorf("opening store %q: %w", path, err)
	}
	return s, nil
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
		return fmt.Errorf("%w: not an SQLite database (try --store new.db)", ErrNotStore)
	}
	// Look read-only first: opening in WAL mode would rewrite the header of
	// a database that is not ours.
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&_busy_timeout=30000")
	if err != nil {
		return err
	}
	defer db.Close()
	var app, tables int
	if err := db.QueryRow(`PRAGMA application_id`).Scan(&app); err != nil {
		return fmt.Errorf("%w: %v (try --store new.db)", ErrNotStore, err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&tables); err != nil {
		return fmt.Errorf("%w: %v (try --store new.db)", ErrNotStore, err)
	}
	if app != applicationID && (app != 0 || tables != 0) {
		return fmt.Errorf("%w: an SQLite database of another program (try --store new.db)", ErrNotStore)
	}
	return nil
}

func (s *Store) migrate() error {
	tx, err := s.db.Begin() // immediate: one migrator at a time
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var app, ver, tables int
	if err := tx.QueryRow(`PRAGMA application_id`).Scan(&app); err != nil {
		return fmt.Errorf("%w: %v (try --store new.db)", ErrNotStore, err)
	}
	if err := tx.QueryRow(`PRAGMA user_version`).Scan(&ver); err != nil {
		return err
	}
	if err := tx.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&tables); err != nil {
		return err
	}
	switch {
	case app == 0 && tables == 0 && ver == 0:
		if _, err := tx.Exec(fmt.Sprintf(`PRAGMA application_id = %d`, applicationID)); err != nil {
			return err
		}
	case app != applicationID:
		return fmt.Errorf("%w: an SQLite database of another program (try --store new.db)", ErrNotStore)
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

func newerError(ver int) error {
	return fmt.Errorf("%w (schema version %d; this numalab knows up to %d): upgrade numalab, or give another --store", ErrNewer, ver, len(migrations))
}

// OpenReadOnly opens the store at path for reading: it creates nothing,
// migrates nothing and writes nothing. A missing or empty file (or an
// SQLite database without tables, which Open would adopt) is ErrNoStore; a store from a newer numalab is refused. It reads every
// older schema as it is: the migrations after version 1 add indexes, and
// the run's process columns (version 3), which a store without them reads
// as NULL (owners). A migration that changes a table otherwise must make
// OpenReadOnly refuse the versions before it, saying to open the store
// once with a command that stores a run.
func OpenReadOnly(path string) (*Store, error) {
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
		return nil, fmt.Errorf("opening store %q: %w", path, err)
	}
	var app, ver int
	err = db.QueryRow(`PRAGMA application_id`).Scan(&app)
	if err == nil {
		err = db.QueryRow(`PRAGMA user_version`).Scan(&ver)
	}
	switch {
	case err != nil:
	case app != applicationID || ver == 0:
		err = ErrNoStore // an empty SQLite database: a writer would make it a store
	case ver > len(migrations):
		err = newerError(ver)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("opening store %q: %w", path, err)
	}
	return &Store{db: db, path: path}, nil
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

// Path is the store's file name.
func (s *Store) Path() string { return s.path }

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

const timeFormat = time.RFC3339Nano

// Begin records a new run with status "running" and sets r.ID.
func (s *Store) Begin(r *result.Run) error {
	var machine []byte
	if r.Machine != nil {
		var err error
		if machine, err = json.Marshal(r.Machine); err != nil {
			return fmt.Errorf("recording run: %w", err)
		}
	}
	cfg := r.Config
	if len(cfg) == 0 {
		cfg = json.RawMessage("{}")
	}
	if r.Status == "" {
		r.Status = result.StatusRunning
	}
	var pid, start any // NULL: a process numalab cannot name is never judged gone
	if self, err := owner.Self(sysfs.New("/")); err == nil {
		pid, start = self.PID, int64(self.Start)
	}
	res, err := s.db.Exec(`INSERT INTO runs (kind, command, config, version, host, machine, started, status, headline, pid, pid_start)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.Kind, r.Command, string(cfg), r.Version, r.Host, nullString(machine), r.Started.UTC().Format(timeFormat), r.Status, r.Headline,
		pid, start)
	if err != nil {
		return fmt.Errorf("recording run in %s: %w", s.path, err)
	}
	r.ID, err = res.LastInsertId()
	return err
}

func nullString(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// Add appends one measured item to run id and returns its sequence number.
// The body is stored with every password in it hidden (result.RedactJSON).
func (s *Store) Add(id int64, e result.Entry) (int, error) {
	kind := e.Kind()
	body, err := json.Marshal(e.Body())
	if err != nil {
		return 0, fmt.Errorf("storing %s of run %d: %w", kind, id, err)
	}
	body = result.RedactJSON(body)
	var seq int
	err = s.db.QueryRow(`INSERT INTO items (run_id, seq, kind, body)
		VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM items WHERE run_id = ?), ?, ?)
		RETURNING seq`, id, id, kind, string(body)).Scan(&seq)
	if err != nil {
		return 0, fmt.Errorf("storing %s of run %d in %s: %w", kind, id, s.path, err)
	}
	return seq, nil
}

// Finish records how run id ended.
func (s *Store) Finish(id int64, finished time.Time, status, headline, errText string) error {
	_, err := s.db.Exec(`UPDATE runs SET finished = ?, status = ?, headline = ?, error = ? WHERE id = ?`,
		finished.UTC().Format(timeFormat), status, headline, errText, id)
	if err != nil {
		return fmt.Errorf("finishing run %d in %s: %w", id, s.path, err)
	}
	return nil
}

// List returns every run, oldest first, without machines or items.
func (s *Store) List() ([]result.Run, error) {
	rows, err := s.db.Query(`SELECT id, kind, command, config, version, host, NULL, started, finished, status, headline, error, ` +
		s.owners() + ` FROM runs ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("listing runs in %s: %w", s.path, err)
	}
	defer rows.Close()
	var runs []result.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("listing runs in %s: %w", s.path, err)
		}
		runs = append(runs, *r)
	}
	return runs, rows.Err()
}

// Latest returns the id of the latest run of kind whose status is one of
// statuses (any status when none is given), below id before (0: no
// bound); 0 when there is none.
func (s *Store) Latest(kind string, before int64, statuses ...string) (int64, error) {
	q := `SELECT COALESCE(MAX(id), 0) FROM runs WHERE kind = ? AND (? = 0 OR id < ?)`
	args := []any{kind, before, before}
	if len(statuses) > 0 {
		q += ` AND status IN (?` + strings.Repeat(`, ?`, len(statuses)-1) + `)`
		for _, st := range statuses {
			args = append(args, st)
		}
	}
	var id int64
	if err := s.db.QueryRow(q, args...).Scan(&id); err != nil {
		return 0, fmt.Errorf("finding the latest %s run in %s: %w", kind, s.path, err)
	}
	return id, nil
}

// Get returns run id with its machine and items.
func (s *Store) Get(id int64) (*result.Run, error) {
	row := s.db.QueryRow(`SELECT id, kind, command, config, version, host, machine, started, finished, status, headline, error, `+
		s.owners()+` FROM runs WHERE id = ?`, id)
	r, err := scanRun(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %d: %w in %s (try 'numalab runs')", id, ErrNoRun, s.path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading run %d from %s: %w", id, s.path, err)
	}
	rows, err := s.db.Query(`SELECT seq, kind, body FROM items WHERE run_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("reading run %d from %s: %w", id, s.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var it result.Item
		var body string
		if err := rows.Scan(&it.Seq, &it.Kind, &body); err != nil {
			return nil, fmt.Errorf("reading run %d from %s: %w", id, s.path, err)
		}
		it.Body = json.RawMessage(body)
		r.Results = append(r.Results, it)
	}
	return r, rows.Err()
}

// owners is the select list of a run's process: its columns, or NULLs in
// a store written before they existed (opened without migrating).
func (s *Store) owners() string {
	s.ownerOnce.Do(func() {
		s.ownerCols = "NULL, NULL"
		var n int
		if err := s.db.QueryRow(`SELECT count(*) FROM pragma_table_info('runs') WHERE name IN ('pid', 'pid_start')`).Scan(&n); err == nil && n == 2 {
			s.ownerCols = "pid, pid_start"
		}
	})
	return s.ownerCols
}

type scanner interface{ Scan(dest ...any) error }

func scanRun(sc scanner) (*result.Run, error) {
	var r result.Run
	var config, started string
	var machine, finished sql.NullString
	var pid, pidStart sql.NullInt64
	if err := sc.Scan(&r.ID, &r.Kind, &r.Command, &config, &r.Version, &r.Host, &machine, &started, &finished,
		&r.Status, &r.Headline, &r.Error, &pid, &pidStart); err != nil {
		return nil, err
	}
	if r.Status == result.StatusRunning && pid.Valid && pidStart.Valid {
		p := owner.Process{Host: r.Host, PID: int(pid.Int64), Start: uint64(pidStart.Int64)}
		if p.Gone(sysfs.New("/")) {
			r.Status = result.StatusAbandoned
		}
	}
	r.Config = json.RawMessage(config)
	var err error
	if r.Started, err = time.Parse(timeFormat, started); err != nil {
		return nil, fmt.Errorf("run %d: bad start time %q: %w", r.ID, started, err)
	}
	if finished.Valid {
		if r.Finished, err = time.Parse(timeFormat, finished.String); err != nil {
			return nil, fmt.Errorf("run %d: bad finish time %q: %w", r.ID, finished.String, err)
		}
	}
	if machine.Valid {
		r.Machine = new(result.Topology)
		if err := json.Unmarshal([]byte(machine.String), r.Machine); err != nil {
			return nil, fmt.Errorf("run %d: bad machine record: %w", r.ID, err)
		}
	}
	return &r, nil
}
