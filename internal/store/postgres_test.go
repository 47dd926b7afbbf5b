package store

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/result"
)

// One managed server serves every PostgreSQL test of the package; it
// starts on first use and TestMain stops it. Each test gets a database of
// its own.
var sharedPG struct {
	once sync.Once
	s    *pgserver.Server
	err  error
	n    atomic.Int32
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedPG.s != nil {
		if err := sharedPG.s.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// testDB creates a new database on the shared managed server and returns
// a postgres:// URL for it (with a password the server does not ask for,
// to check it is never shown) and a handle to it.
func testDB(t *testing.T) (string, *sql.DB) {
	t.Helper()
	sharedPG.once.Do(func() {
		sharedPG.s, sharedPG.err = pgserver.Start(context.Background(), pgserver.Config{SharedBuffers: 32 << 20})
	})
	if sharedPG.err != nil {
		t.Fatal(sharedPG.err)
	}
	cfg, err := pgx.ParseConfig(sharedPG.s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	admin := stdlib.OpenDB(*cfg)
	defer admin.Close()
	name := fmt.Sprintf("store_test_%d", sharedPG.n.Add(1))
	if _, err := admin.Exec(`CREATE DATABASE ` + name); err != nil {
		t.Fatal(err)
	}
	u := fmt.Sprintf("postgres://%s:%s@/%s?host=%s&port=%d&sslmode=disable",
		cfg.User, testPassword, name, url.QueryEscape(cfg.Host), cfg.Port)
	cfg.Database = name
	db := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { db.Close() })
	return u, db
}

const testPassword = "s3cret-pw"

func TestPGMigrationsMatchSQLite(t *testing.T) {
	if len(pgMigrations) != len(migrations) {
		t.Errorf("%d PostgreSQL migrations, %d SQLite ones: both backends must be at one schema version",
			len(pgMigrations), len(migrations))
	}
}

// TestPGRoundTrip: a run and its items read back from PostgreSQL as from
// SQLite, the store's name never shows the password, and a reader sees
// what a writer commits.
func TestPGRoundTrip(t *testing.T) {
	u, _ := testDB(t)
	if _, err := OpenReadOnly(u); !errors.Is(err, ErrNoStore) {
		t.Fatalf("OpenReadOnly of a database without the schema = %v, want ErrNoStore", err)
	}
	s, err := Open(u)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if strings.Contains(s.Path(), testPassword) || !strings.Contains(s.Path(), "xxxxx") {
		t.Errorf("Path() = %q, want the URL with its password hidden", s.Path())
	}
	r := newRun("probe-mem")
	if err := s.Begin(r); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if seq, err := s.Add(r.ID, pointKind.Of(map[string]int{"i": i})); err != nil || seq != i+1 {
			t.Fatalf("Add %d = %d, %v", i, seq, err)
		}
	}
	ro, err := OpenReadOnly(u)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	got, err := ro.Get(r.ID)
	if err != nil || got.Status != result.StatusRunning || len(got.Results) != 3 || !got.Finished.IsZero() {
		t.Fatalf("a running run read by another session = %+v, %v", got, err)
	}
	fin := r.Started.Add(90 * time.Second)
	if err := s.Finish(r.ID, fin, result.StatusComplete, "97.1 ns DRAM", ""); err != nil {
		t.Fatal(err)
	}
	got, err = ro.Get(r.ID)
	if err != nil || got.Status != result.StatusComplete || !got.Finished.Equal(fin) || !got.Started.Equal(r.Started) ||
		got.Machine == nil || len(got.Machine.CPUs) != 2 || string(got.Results[2].Body) != `{"i":2}` ||
		string(got.Config) != `{"x":1}` {
		t.Errorf("finished run = %+v, %v", got, err)
	}
	if id, err := ro.Latest("probe-mem", 0, result.StatusComplete); err != nil || id != r.ID {
		t.Errorf("Latest = %d, %v, want %d", id, err, r.ID)
	}
	uid, err := ro.UID(r.ID)
	if err != nil || len(uid) != 36 {
		t.Fatalf("UID = %q, %v", uid, err)
	}
	if id, err := ro.Resolve(uid[:8]); err != nil || id != r.ID {
		t.Errorf("Resolve(%s) = %d, %v, want %d", uid[:8], id, err, r.ID)
	}
	if err := ro.Begin(newRun("probe-mem")); err == nil {
		t.Error("a read-only store recorded a run")
	}
	// A store closed before its run finished gave the run up.
	w, err := Open(u)
	if err != nil {
		t.Fatal(err)
	}
	left := newRun("oltp")
	if err := w.Begin(left); err != nil {
		t.Fatal(err)
	}
	if got, err := ro.Get(left.ID); err != nil || got.Status != result.StatusRunning {
		t.Errorf("a run begun = %+v, %v; want running", got, err)
	}
	w.Close()
	if got, err := ro.Get(left.ID); err != nil || got.Status != result.StatusAbandoned {
		t.Errorf("a run whose store closed unfinished = %+v, %v; want abandoned", got, err)
	}
}

// TestHelperPGWriter is not a test: the PostgreSQL tests run the test
// binary as writer processes. It writes NUMALAB_PG_RUNS runs of 5 items
// each as host NUMALAB_PG_HOST; with NUMALAB_PG_HANG it stores one run's
// first 3 items, prints "stored RUN" and waits to be killed.
func TestHelperPGWriter(t *testing.T) {
	u := os.Getenv("NUMALAB_PG_WRITER")
	if u == "" {
		t.Skip("helper process for the PostgreSQL store tests")
	}
	s, err := Open(u)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if os.Getenv("NUMALAB_PG_HANG") != "" {
		r := newRun("oltp")
		r.Host = os.Getenv("NUMALAB_PG_HOST")
		if err := s.Begin(r); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if _, err := s.Add(r.ID, cellKind.Of(i)); err != nil {
				t.Fatal(err)
			}
		}
		fmt.Printf("stored %d\n", r.ID)
		time.Sleep(time.Minute)
		t.Fatal("not killed")
	}
	n, _ := strconv.Atoi(os.Getenv("NUMALAB_PG_RUNS"))
	for range n {
		r := newRun("concurrent")
		r.Host = os.Getenv("NUMALAB_PG_HOST")
		if err := s.Begin(r); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			if _, err := s.Add(r.ID, cellKind.Of(i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Finish(r.ID, time.Now(), result.StatusComplete, "", ""); err != nil {
			t.Fatal(err)
		}
	}
}

func pgWriter(u, host string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperPGWriter$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), append([]string{"NUMALAB_PG_WRITER=" + u, "NUMALAB_PG_HOST=" + host}, env...)...)
	return cmd
}

// TestPGConcurrentWriters: 8 processes, as 8 hosts, create the schema and
// write runs into one new PostgreSQL store at once; every run and item is
// kept, with unique IDs and UIDs.
func TestPGConcurrentWriters(t *testing.T) {
	u, db := testDB(t)
	const procs, runs = 8, 10
	var wg sync.WaitGroup
	errs := make([]error, procs)
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := pgWriter(u, fmt.Sprintf("host%d", p), "NUMALAB_PG_RUNS="+strconv.Itoa(runs))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[p] = fmt.Errorf("writer %d: %v\n%s", p, err, out)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s, err := OpenReadOnly(u)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != procs*runs {
		t.Fatalf("%d runs stored, want %d", len(list), procs*runs)
	}
	for _, r := range list {
		got, err := s.Get(r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Results) != 5 || got.Status != result.StatusComplete {
			t.Errorf("run %d: %d items, status %s", r.ID, len(got.Results), got.Status)
		}
	}
	for p := range procs {
		mine, err := s.Find(Filter{Host: fmt.Sprintf("host%d", p), Kind: "concurrent"})
		if err != nil || len(mine) != runs {
			t.Errorf("host%d: %d runs, %v; want %d", p, len(mine), err, runs)
		}
	}
	var uids, ver int
	if err := db.QueryRow(`SELECT count(DISTINCT uid) FROM numalab_results.runs`).Scan(&uids); err != nil ||
		uids != procs*runs {
		t.Errorf("%d distinct UIDs (%v), want %d", uids, err, procs*runs)
	}
	if err := db.QueryRow(`SELECT version FROM numalab_results.numalab_store`).Scan(&ver); err != nil ||
		ver != SchemaVersion {
		t.Errorf("schema version %d (%v), want %d", ver, err, SchemaVersion)
	}
}

// TestPGKilledWriter: a writer of another host, killed (SIGKILL) mid-run,
// leaves its run unfinished with every item it stored: running while the
// writer lives, abandoned once it is gone.
func TestPGKilledWriter(t *testing.T) {
	u, _ := testDB(t)
	s, err := OpenReadOnly(u)
	if err == nil {
		s.Close()
		t.Fatal("a new database is a store before anything was stored")
	}
	cmd := pgWriter(u, "doomed", "NUMALAB_PG_HANG=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var id int64
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "stored "); ok {
			id, _ = strconv.ParseInt(v, 10, 64)
			break
		}
	}
	if id == 0 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the writer stored no run")
	}
	s, err = OpenReadOnly(u)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.Get(id)
	if err != nil || r.Status != result.StatusRunning || len(r.Results) != 3 {
		t.Errorf("the live writer's run = %+v, %v; want running with 3 items", r, err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// The server ends the writer's session when it sees the socket close.
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if r, err = s.Get(id); err != nil || r.Status != result.StatusRunning {
			break
		}
	}
	if err != nil || r.Status != result.StatusAbandoned || !r.Finished.IsZero() || len(r.Results) != 3 ||
		r.Host != "doomed" {
		t.Errorf("killed writer's run: %+v, %v; want abandoned, unfinished, with 3 items, of host doomed", r, err)
	}
	if list, err := s.Find(Filter{Host: "doomed"}); err != nil || len(list) != 1 ||
		list[0].Status != result.StatusAbandoned {
		t.Errorf("Find lists the killed writer's run as %+v, %v; want abandoned", list, err)
	}
}

// TestPGCopyBothWays copies runs from SQLite to PostgreSQL and back:
// everything arrives once, however often it is copied.
func TestPGCopyBothWays(t *testing.T) {
	u, _ := testDB(t)
	dir := t.TempDir()
	lite, err := Open(dir + "/a.db")
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	done := newRun("probe-mem")
	done.Started = time.Date(2026, 11, 21, 6, 0, 0, 123456000, time.UTC) // PostgreSQL keeps microseconds
	if err := lite.Begin(done); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		lite.Add(done.ID, cellKind.Of(i))
	}
	lite.Finish(done.ID, done.Started.Add(time.Minute), result.StatusComplete, "97 ns", "")
	open := newRun("oltp")
	open.Host = "other"
	if err := lite.Begin(open); err != nil {
		t.Fatal(err)
	}
	lite.Add(open.ID, cellKind.Of(7))

	pg, err := Open(u)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	native := newRun("report")
	if err := pg.Begin(native); err != nil {
		t.Fatal(err)
	}
	pg.Add(native.ID, cellKind.Of(1))
	pg.Finish(native.ID, native.Started.Add(time.Second), result.StatusFailed, "", "boom")

	for i, want := range []Copied{{Runs: 2, Items: 4}, {Present: 2}} {
		if c, err := Copy(lite, pg); err != nil || c != want {
			t.Errorf("copy %d SQLite to PostgreSQL = %+v, %v; want %+v", i+1, c, err, want)
		}
	}
	back, err := Open(dir + "/b.db")
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	for i, want := range []Copied{{Runs: 3, Items: 5}, {Present: 3}} {
		if c, err := Copy(pg, back); err != nil || c != want {
			t.Errorf("copy %d PostgreSQL to SQLite = %+v, %v; want %+v", i+1, c, err, want)
		}
	}
	if c, err := Copy(back, lite); err != nil || c != (Copied{Runs: 1, Items: 1, Present: 2}) {
		t.Errorf("copy back to the first store = %+v, %v; want only the PostgreSQL run", c, err)
	}
	// Every store now holds the same three runs, by UID, alike.
	stores := []*Store{lite, pg, back}
	byUID := make([]map[string]*result.Run, len(stores))
	for i, s := range stores {
		byUID[i] = map[string]*result.Run{}
		list, err := s.List()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range list {
			r, err := s.Get(l.ID)
			if err != nil {
				t.Fatal(err)
			}
			uid, err := s.UID(l.ID)
			if err != nil {
				t.Fatal(err)
			}
			r.ID = 0
			byUID[i][uid] = r
		}
		if len(byUID[i]) != 3 {
			t.Errorf("%s holds %d runs, want 3", s.Path(), len(byUID[i]))
		}
	}
	// The run first stored in PostgreSQL was received by the server's
	// clock, and every copy keeps that; runs first stored in SQLite have
	// no received time, in any store.
	for uid, r := range byUID[0] {
		switch {
		case r.Kind == native.Kind && (r.Received.IsZero() || time.Since(r.Received).Abs() > time.Minute):
			t.Errorf("run %s, first stored in PostgreSQL: received %v, want the server's now", uid, r.Received)
		case r.Kind != native.Kind && !r.Received.IsZero():
			t.Errorf("run %s, first stored in SQLite: received %v, want none", uid, r.Received)
		}
	}
	for uid, want := range byUID[0] {
		for i := 1; i < len(stores); i++ {
			got, _ := json.Marshal(byUID[i][uid])
			if w, _ := json.Marshal(want); string(got) != string(w) {
				t.Errorf("run %s in %s = %s, want %s", uid, stores[i].Path(), got, w)
			}
		}
	}
}

// TestPGConcurrentCopies: four copies of one store into one PostgreSQL
// store at once add each run once, and none fails.
func TestPGConcurrentCopies(t *testing.T) {
	u, _ := testDB(t)
	lite, err := Open(t.TempDir() + "/a.db")
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	for range 5 {
		r := newRun("oltp")
		if err := lite.Begin(r); err != nil {
			t.Fatal(err)
		}
		lite.Add(r.ID, cellKind.Of(1))
	}
	var wg sync.WaitGroup
	runs := make([]int, 4)
	errs := make([]error, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pg, err := Open(u)
			if err != nil {
				errs[i] = err
				return
			}
			defer pg.Close()
			c, err := Copy(lite, pg)
			runs[i], errs[i] = c.Runs, err
		}()
	}
	wg.Wait()
	total := 0
	for i := range 4 {
		if errs[i] != nil {
			t.Errorf("copy %d: %v", i, errs[i])
		}
		total += runs[i]
	}
	pg, err := OpenReadOnly(u)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if list, err := pg.List(); err != nil || len(list) != 5 || total != 5 {
		t.Errorf("after 4 concurrent copies: %d runs (%v), %d counted as copied; want 5 and 5", len(list), err, total)
	}
}

// TestPGForeignSchema: a schema named numalab_results that numalab did
// not make is refused, by writers and readers, and left as it was.
func TestPGForeignSchema(t *testing.T) {
	u, db := testDB(t)
	for _, q := range []string{`CREATE SCHEMA numalab_results`, `CREATE TABLE numalab_results.runs (x INTEGER)`,
		`INSERT INTO numalab_results.runs VALUES (42)`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for name, open := range map[string]func(string) (*Store, error){"Open": Open, "OpenReadOnly": OpenReadOnly} {
		s, err := open(u)
		if err == nil {
			s.Close()
			t.Fatalf("%s accepted a foreign schema", name)
		}
		if !errors.Is(err, ErrNotStore) || strings.Contains(err.Error(), testPassword) {
			t.Errorf("%s of a foreign schema = %v, want ErrNotStore without the password", name, err)
		}
	}
	var tables, rows int
	var comment sql.NullString
	db.QueryRow(`SELECT count(*) FROM pg_tables WHERE schemaname = 'numalab_results'`).Scan(&tables)
	db.QueryRow(`SELECT count(*) FROM numalab_results.runs WHERE x = 42`).Scan(&rows)
	db.QueryRow(`SELECT obj_description('numalab_results'::regnamespace, 'pg_namespace')`).Scan(&comment)
	if tables != 1 || rows != 1 || comment.Valid {
		t.Errorf("the foreign schema changed: %d tables, %d rows, comment %v", tables, rows, comment)
	}
}

// TestPGNewerAndUnreachable: a store of a newer schema version and a
// server that cannot be reached are refused with what to do, and nothing
// is written.
func TestPGNewerAndUnreachable(t *testing.T) {
	u, db := testDB(t)
	s, err := Open(u)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := db.Exec(`UPDATE numalab_results.numalab_store SET version = $1`, SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	for name, open := range map[string]func(string) (*Store, error){"Open": Open, "OpenReadOnly": OpenReadOnly} {
		if _, err := open(u); !errors.Is(err, ErrNewer) || !strings.Contains(err.Error(), "upgrade numalab") {
			t.Errorf("%s of a newer store = %v, want ErrNewer", name, err)
		}
	}
	var ver int
	db.QueryRow(`SELECT version FROM numalab_results.numalab_store`).Scan(&ver)
	if ver != SchemaVersion+1 {
		t.Errorf("the newer store's version became %d", ver)
	}

	gone := "postgres://numalab:" + testPassword + "@127.0.0.1:1/lab?connect_timeout=3&sslmode=disable"
	for name, open := range map[string]func(string) (*Store, error){"Open": Open, "OpenReadOnly": OpenReadOnly} {
		_, err := open(gone)
		if err == nil || !strings.Contains(err.Error(), "cannot reach") || strings.Contains(err.Error(), testPassword) {
			t.Errorf("%s of an unreachable server = %v, want 'cannot reach' without the password", name, err)
		}
	}
}
