// Package store keeps numalab's results: every run with the machine it ran
// on, its full configuration, numalab's version, and the items it
// measured, in order. A store is one SQLite file (sqlite.go) or the schema
// numalab_results of a PostgreSQL database (postgres.go), which many hosts
// may share; both hold the same tables at the same schema version.
//
// The schema is versioned and migrated forward when a command that writes
// opens it; commands that only read (OpenReadOnly) never create, migrate or
// write a store. A store from a newer numalab is refused, before anything
// is written. A store is recognised by its mark (the SQLite file's
// application_id; the PostgreSQL schema's comment and its version table):
// anything else is refused and never written. Several numalab processes,
// on one host or many, may write one store at once: every write is one
// short transaction, so each run and each item is kept the moment it is
// measured, and a writer that dies leaves its run unfinished with every
// item it stored.
//
// A run records the process that writes it (PID and start time, with the
// host): a run still "running" whose process is gone (killed, crashed) is
// read back as "abandoned", with everything it stored. In PostgreSQL the
// writer also holds a lock on its run for as long as its session lives, so
// a run of any host reads back as abandoned once its writer, or its host,
// is gone.
//
// A run has two names: its ID, a small number given by the store it is in
// (what users type), and its UID, a random UUID given when it is first
// stored and kept by every copy (Copy), so runs from many hosts never
// collide and copying twice adds nothing.
//
// The store never deletes a run, and never keeps a password: item bodies
// are redacted here, and a PostgreSQL URL's password is never printed.
package store

import (
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/numalab/numalab/internal/owner"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
)

// ErrNotStore is returned for a file or schema that is not a numalab store.
var ErrNotStore = errors.New("not a numalab store")

// ErrNoRun is returned by Get for an id that is not in the store.
var ErrNoRun = errors.New("no such run")

// ErrNoStore is returned by OpenReadOnly where nothing has been stored
// yet: a missing or empty file, a database without the schema.
var ErrNoStore = errors.New("no store yet")

// ErrConnString refuses a store named by something that looks like a
// connection string other than a postgres:// URL (result.LooksLikeDSN):
// numalab never names a file after one, which would carry its password.
var ErrConnString = errors.New(
	"looks like a connection string, not a file; a PostgreSQL store is given as postgres://user@host/db")

// ErrNewer is returned for a store written by a newer numalab.
var ErrNewer = errors.New("stored by a newer numalab")

// SchemaVersion is the schema version this numalab writes, in either
// backend.
var SchemaVersion = len(migrations)

// ownerVersion and uidVersion are the first schema versions whose runs
// name their process, and have a UID.
const (
	ownerVersion    = 3
	uidVersion      = 4
	receivedVersion = 5
)

// Store is an open results store.
type Store struct {
	db   *sql.DB
	name string // the file, or the URL without its password
	pg   bool
	// The runs table has the process columns, the uid column, the
	// received column (not in an older store read as it is).
	owners, uids, received bool
	// writes says the store was opened to write (a file store is checked
	// for it before each operation: writable).
	writes bool

	mu   sync.Mutex
	held map[int64]*sql.Conn // PostgreSQL: the sessions holding this process's running runs' locks
}

// IsURL reports whether target names a PostgreSQL store rather than a file.
func IsURL(target string) bool {
	return strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://")
}

// Open opens the store target (a file name or a postgres:// URL), creating
// it if it does not exist and migrating it to SchemaVersion. It refuses a
// file or schema that is not a numalab store, a store written by a newer
// numalab and a server it cannot reach, writing nothing.
func Open(target string) (*Store, error) {
	if err := checkTarget(target); err != nil {
		return nil, err
	}
	if IsURL(target) {
		return openPostgres(target, false)
	}
	return openSQLite(target)
}

// OpenReadOnly opens the store target for reading: it creates nothing,
// migrates nothing and writes nothing. Where nothing was stored yet it
// returns ErrNoStore; a store from a newer numalab is refused. It reads
// every older schema as it is.
func OpenReadOnly(target string) (*Store, error) {
	if err := checkTarget(target); err != nil {
		return nil, err
	}
	if IsURL(target) {
		return openPostgres(target, true)
	}
	return openSQLiteReadOnly(target)
}

// CheckTarget refuses, with ErrConnString, a target that is not a
// postgres:// URL but looks like a connection string: a file is never
// named after one.
func CheckTarget(target string) error {
	if !IsURL(target) && result.LooksLikeDSN(target) {
		return fmt.Errorf("%q %w", result.Redact(target), ErrConnString)
	}
	return nil
}

func checkTarget(target string) error {
	if err := CheckTarget(target); err != nil {
		return fmt.Errorf("opening store %w", err)
	}
	return nil
}

// Path names the store in messages: its file, or its URL without the
// password.
func (s *Store) Path() string { return s.name }

// Close closes the store.
func (s *Store) Close() error {
	s.releaseAll()
	if err := s.writable(); err != nil {
		// Closing would write the WAL index (SIGBUS: see writable): the
		// handle stays open until the process exits, which releases it.
		return err
	}
	return s.db.Close()
}

const timeFormat = time.RFC3339Nano

// q rewrites a query's ? placeholders as PostgreSQL's $1, $2, ...
func (s *Store) q(query string) string {
	if !s.pg {
		return query
	}
	var b strings.Builder
	n := 0
	for _, c := range query {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// at is a time as the backend stores it: TIMESTAMPTZ, or RFC 3339 text.
func (s *Store) at(t time.Time) any {
	if s.pg {
		return t.UTC()
	}
	return t.UTC().Format(timeFormat)
}

// NewUID returns a random (version 4) UUID.
func NewUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Begin records a new run with status "running", naming this process and
// with a new UID, and sets r.ID.
func (s *Store) Begin(r *result.Run) error {
	var self *owner.Process // nil: a process numalab cannot name is never judged gone
	if p, err := owner.Self(sysfs.New("/")); err == nil {
		self = &p
	}
	err := s.waitLock(func() error {
		_, err := s.insertRun(s.db, r, NewUID(), self, true)
		return err
	})
	if err != nil {
		return err
	}
	if s.pg {
		return s.hold(r.ID)
	}
	return nil
}

// execer is a database or a transaction.
type execer interface {
	QueryRow(query string, args ...any) *sql.Row
	Exec(query string, args ...any) (sql.Result, error)
}

// insertRun stores r with the given UID, written by process p (nil: none
// named), and sets r.ID: received now by a PostgreSQL store's clock when
// fresh, else r.Received (a copy keeps it). Its command, configuration, headline and error
// are stored with every password hidden, whatever flag, file or variable
// they came from.
func (s *Store) insertRun(x execer, r *result.Run, uid string, p *owner.Process, fresh bool) (int64, error) {
	var machine []byte
	if r.Machine != nil {
		var err error
		if machine, err = json.Marshal(r.Machine); err != nil {
			return 0, fmt.Errorf("recording run: %w", err)
		}
	}
	cfg := result.RedactJSON(r.Config)
	if len(cfg) == 0 {
		cfg = json.RawMessage("{}")
	}
	if r.Status == "" {
		r.Status = result.StatusRunning
	}
	var finished any
	if !r.Finished.IsZero() {
		finished = s.at(r.Finished)
	}
	var pid, start any
	if p != nil {
		pid, start = p.PID, int64(p.Start)
	}
	var received any
	if !r.Received.IsZero() {
		received = s.at(r.Received)
	}
	at := "?, NULL" // SQLite: the copy's, or none
	switch {
	case s.pg && fresh:
		at = "?::timestamptz, now()"
	case s.pg:
		at = "?::timestamptz, NULL"
	}
	err := x.QueryRow(s.q(`INSERT INTO runs (uid, kind, command, config, version, host, machine, started, finished, status, headline, error, pid, pid_start,
		received) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, COALESCE(`+at+`)) RETURNING id`),
		uid, r.Kind, result.Redact(r.Command), string(cfg), r.Version, r.Host, nullString(machine), s.at(r.Started), finished,
		r.Status, result.Redact(r.Headline), result.Redact(r.Error), pid, start, received).Scan(&r.ID)
	if err != nil {
		return 0, fmt.Errorf("recording run in %s: %w", s.name, err)
	}
	return r.ID, nil
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
	err = s.waitLock(func() error {
		return s.db.QueryRow(s.q(`INSERT INTO items (run_id, seq, kind, body)
			VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM items WHERE run_id = ?), ?, ?)
			RETURNING seq`), id, id, kind, string(body)).Scan(&seq)
	})
	if err != nil {
		return 0, fmt.Errorf("storing %s of run %d in %s: %w", kind, id, s.name, err)
	}
	return seq, nil
}

// Finish records how run id ended, with any password in the headline or
// the error hidden.
func (s *Store) Finish(id int64, finished time.Time, status, headline, errText string) error {
	err := s.waitLock(func() error {
		_, err := s.db.Exec(s.q(`UPDATE runs SET finished = ?, status = ?, headline = ?, error = ? WHERE id = ?`),
			s.at(finished), status, result.Redact(headline), result.Redact(errText), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("finishing run %d in %s: %w", id, s.name, err)
	}
	s.release(id)
	return nil
}

// Filter selects runs: of a host, of a kind, started in [Since, Until).
// Zero fields select everything.
type Filter struct {
	Host, Kind   string
	Since, Until time.Time
}

func (f Filter) keeps(r *result.Run) bool {
	return (f.Since.IsZero() || !r.Started.Before(f.Since)) && (f.Until.IsZero() || r.Started.Before(f.Until))
}

// List returns every run, oldest first, without machines or items.
func (s *Store) List() ([]result.Run, error) { return s.Find(Filter{}) }

// Find returns the runs f selects, oldest first, without machines or
// items.
func (s *Store) Find(f Filter) ([]result.Run, error) {
	q := `SELECT id, kind, command, config, version, host, NULL, started, finished, status, headline, error, ` +
		s.ownerCols() + `, ` + s.receivedCol() + ` FROM runs WHERE 1 = 1`
	var args []any
	if f.Host != "" {
		q += ` AND host = ?`
		args = append(args, f.Host)
	}
	if f.Kind != "" {
		q += ` AND kind = ?`
		args = append(args, f.Kind)
	}
	rows, err := s.db.Query(s.q(q+` ORDER BY id`), args...)
	if err != nil {
		return nil, fmt.Errorf("listing runs in %s: %w", s.name, err)
	}
	defer rows.Close()
	var runs []result.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("listing runs in %s: %w", s.name, err)
		}
		if f.keeps(r) {
			runs = append(runs, *r)
		}
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
	if err := s.db.QueryRow(s.q(q), args...).Scan(&id); err != nil {
		return 0, fmt.Errorf("finding the latest %s run in %s: %w", kind, s.name, err)
	}
	return id, nil
}

// LatestOfEach returns, for each kind in turn, the id of its latest
// complete or interrupted run, else of its latest run of any status;
// kinds with no run give none.
func (s *Store) LatestOfEach(kinds []string) ([]int64, error) {
	var ids []int64
	for _, k := range kinds {
		id, err := s.Latest(k, 0, result.StatusComplete, result.StatusInterrupted)
		if err == nil && id == 0 {
			id, err = s.Latest(k, 0)
		}
		if err != nil {
			return nil, err
		}
		if id > 0 {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// Resolve turns what a user typed for a run into its ID: the ID itself
// (a positive number), or the run's UID or a unique prefix of it (at least
// 8 characters, as 'numalab runs show' prints it). A number of 8 digits or
// more is an ID if a run has it, else a UID prefix.
func (s *Store) Resolve(text string) (int64, error) {
	if id, err := strconv.ParseInt(text, 10, 64); err == nil && id > 0 {
		if len(text) < 8 {
			return id, nil
		}
		// As long as a UID prefix: a UID's when no run has that number.
		var n int
		if err := s.db.QueryRow(s.q(`SELECT count(*) FROM runs WHERE id = ?`), id).Scan(&n); err != nil || n > 0 || !s.uids {
			return id, err
		}
	}
	bad := fmt.Errorf(
		"%q is not a run ID (a positive number, or 8 or more characters of a run's UID; try 'numalab runs')", text)
	if len(text) < 8 || strings.Trim(strings.ToLower(text), "0123456789abcdef-") != "" {
		return 0, bad
	}
	if !s.uids {
		return 0, fmt.Errorf("run %s: %w in %s, whose runs have no UIDs yet (give the run's number)", text, ErrNoRun, s.name)
	}
	rows, err := s.db.Query(s.q(`SELECT id FROM runs WHERE uid LIKE ? ORDER BY id LIMIT 2`), strings.ToLower(text)+"%")
	if err != nil {
		return 0, fmt.Errorf("finding run %s in %s: %w", text, s.name, err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return 0, fmt.Errorf("finding run %s in %s: %w", text, s.name, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("finding run %s in %s: %w", text, s.name, err)
	}
	switch len(ids) {
	case 0:
		return 0, fmt.Errorf("run %s: %w in %s (try 'numalab runs')", text, ErrNoRun, s.name)
	case 1:
		return ids[0], nil
	}
	return 0, fmt.Errorf("run %s: more than one run's UID starts so in %s (runs %d and %d; give more of it)",
		text, s.name, ids[0], ids[1])
}

// UID returns run id's UID ("" in an older store read as it is).
func (s *Store) UID(id int64) (string, error) {
	if !s.uids {
		return "", nil
	}
	var uid string
	err := s.db.QueryRow(s.q(`SELECT uid FROM runs WHERE id = ?`), id).Scan(&uid)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("run %d: %w in %s (try 'numalab runs')", id, ErrNoRun, s.name)
	}
	if err != nil {
		return "", fmt.Errorf("reading run %d from %s: %w", id, s.name, err)
	}
	return uid, nil
}

// Get returns run id with its machine and items.
func (s *Store) Get(id int64) (*result.Run, error) {
	row := s.db.QueryRow(
		s.q(`SELECT id, kind, command, config, version, host, machine, started, finished, status, headline, error, `+
			s.ownerCols()+`, `+s.receivedCol()+` FROM runs WHERE id = ?`), id)
	r, err := scanRun(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %d: %w in %s (try 'numalab runs')", id, ErrNoRun, s.name)
	}
	if err != nil {
		return nil, fmt.Errorf("reading run %d from %s: %w", id, s.name, err)
	}
	rows, err := s.db.Query(s.q(`SELECT seq, kind, body FROM items WHERE run_id = ? ORDER BY seq`), id)
	if err != nil {
		return nil, fmt.Errorf("reading run %d from %s: %w", id, s.name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var it result.Item
		var body string
		if err := rows.Scan(&it.Seq, &it.Kind, &body); err != nil {
			return nil, fmt.Errorf("reading run %d from %s: %w", id, s.name, err)
		}
		it.Body = json.RawMessage(body)
		r.Results = append(r.Results, it)
	}
	return r, rows.Err()
}

// ownerCols is the select list of a run's process: its columns, or NULLs
// in a store written before they existed (opened without migrating).
func (s *Store) ownerCols() string {
	switch {
	case s.pg:
		return "pid, pid_start, " + pgHeld
	case s.owners:
		return "pid, pid_start, NULL"
	}
	return "NULL, NULL, NULL"
}

// receivedCol is the select expression of when the store received a run:
// its column, or NULL in a store written before it existed.
func (s *Store) receivedCol() string {
	if s.received {
		return "received"
	}
	return "NULL"
}

type scanner interface{ Scan(dest ...any) error }

func scanRun(sc scanner) (*result.Run, error) {
	var r result.Run
	var config string
	var started, finished, received any
	var machine sql.NullString
	var pid, pidStart sql.NullInt64
	var held sql.NullBool
	if err := sc.Scan(&r.ID, &r.Kind, &r.Command, &config, &r.Version, &r.Host, &machine, &started, &finished,
		&r.Status, &r.Headline, &r.Error, &pid, &pidStart, &held, &received); err != nil {
		return nil, err
	}
	switch {
	case r.Status != result.StatusRunning:
	case held.Valid && pid.Valid:
		// PostgreSQL: a running run's writer holds its lock, whatever its
		// host. (A copied run names no writer: it stays as copied.)
		if !held.Bool {
			r.Status = result.StatusAbandoned
		}
	case pid.Valid && pidStart.Valid:
		p := owner.Process{Host: r.Host, PID: int(pid.Int64), Start: uint64(pidStart.Int64)}
		if p.Gone(sysfs.New("/")) {
			r.Status = result.StatusAbandoned
		}
	}
	r.Config = json.RawMessage(config)
	var err error
	if r.Started, err = timeOf(started); err != nil {
		return nil, fmt.Errorf("run %d: bad start time: %w", r.ID, err)
	}
	if finished != nil {
		if r.Finished, err = timeOf(finished); err != nil {
			return nil, fmt.Errorf("run %d: bad finish time: %w", r.ID, err)
		}
	}
	if received != nil {
		if r.Received, err = timeOf(received); err != nil {
			return nil, fmt.Errorf("run %d: bad received time: %w", r.ID, err)
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

// timeOf reads a stored time: PostgreSQL's TIMESTAMPTZ or SQLite's text.
func timeOf(v any) (time.Time, error) {
	switch t := v.(type) {
	case time.Time:
		return t.UTC(), nil
	case string:
		return time.Parse(timeFormat, t)
	case []byte:
		return time.Parse(timeFormat, string(t))
	}
	return time.Time{}, fmt.Errorf("%v (%T) is not a time", v, v)
}
