package store

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
)

// Item kinds of the tests' runs.
const (
	pointKind result.Kind[map[string]int] = "point"
	cellKind  result.Kind[int]            = "cell"
)

func newRun(kind string) *result.Run {
	return &result.Run{
		Kind:    kind,
		Command: "numalab " + kind,
		Config:  json.RawMessage(`{"x":1}`),
		Version: "test",
		Host:    "h",
		Machine: &result.Topology{Source: "sysfs:/", CPUs: []result.CPU{{ID: 0}, {ID: 1}}},
		Started: time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC),
	}
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r := newRun("probe-mem")
	if err := s.Begin(r); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		seq, err := s.Add(r.ID, pointKind.Of(map[string]int{"i": i}))
		if err != nil {
			t.Fatal(err)
		}
		if seq != i+1 {
			t.Errorf("seq = %d, want %d", seq, i+1)
		}
	}
	fin := r.Started.Add(time.Minute)
	if err := s.Finish(r.ID, fin, result.StatusComplete, "97.1 ns DRAM", ""); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(path) // reopen: no migration needed, data kept
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Get(r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != result.StatusComplete || got.Headline != "97.1 ns DRAM" || !got.Finished.Equal(fin) {
		t.Errorf("got %+v", got)
	}
	if got.Machine == nil || len(got.Machine.CPUs) != 2 {
		t.Errorf("machine not kept: %+v", got.Machine)
	}
	if len(got.Results) != 3 || string(got.Results[2].Body) != `{"i":2}` {
		t.Errorf("items = %+v", got.Results)
	}
	list, err := s.List()
	if err != nil || len(list) != 1 || list[0].Machine != nil {
		t.Errorf("List = %+v, %v", list, err)
	}
	if _, err := s.Get(99); !errors.Is(err, ErrNoRun) {
		t.Errorf("Get(99) error = %v, want ErrNoRun", err)
	}
}

func TestRefusesForeignFiles(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	content := []byte("my precious notes\n")
	os.WriteFile(text, content, 0o644)

	other := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite3", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE t (x); INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	otherBytes, _ := os.ReadFile(other)

	for _, p := range []string{text, other} {
		s, err := Open(p)
		if err == nil {
			s.Close()
			t.Fatalf("Open(%s) accepted a foreign file", p)
		}
		if !errors.Is(err, ErrNotStore) {
			t.Errorf("Open(%s) = %v, want ErrNotStore", p, err)
		}
	}
	if b, _ := os.ReadFile(text); !bytes.Equal(b, content) {
		t.Errorf("text file changed")
	}
	if b, _ := os.ReadFile(other); !bytes.Equal(b, otherBytes) {
		t.Errorf("foreign SQLite file changed")
	}
	if _, err := Open(dir); err == nil {
		t.Errorf("Open(directory) succeeded")
	}
}

func TestRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for name, open := range map[string]func(string) (*Store, error){"Open": Open, "OpenReadOnly": OpenReadOnly} {
		_, err := open(path)
		if !errors.Is(err, ErrNewer) || !strings.Contains(err.Error(), "stored by a newer numalab") {
			t.Errorf("%s of a store from a newer numalab: %v", name, err)
		}
	}
}

// TestVersion1 opens a store as the first schema left it: read-only it is
// read as it is and left alone; a writer migrates it and keeps its runs.
func TestVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{migrations[0], fmt.Sprintf(`PRAGMA application_id = %d`, applicationID),
		`PRAGMA user_version = 1`,
		`INSERT INTO runs (kind, command, config, version, host, started, status) VALUES ('probe-mem', 'numalab probe mem', '{}', 'v1', 'h', '2026-11-21T06:00:00Z', 'complete')`,
		`INSERT INTO items (run_id, seq, kind, body) VALUES (1, 1, 'memlat.Summary', '{"ghz": 3}')`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ro.Get(1)
	if err != nil || r.Kind != "probe-mem" || len(r.Results) != 1 {
		t.Fatalf("read-only Get(1) of a version 1 store = %+v, %v", r, err)
	}
	if runs, err := ro.List(); err != nil || len(runs) != 1 || runs[0].Status != result.StatusComplete {
		t.Errorf("read-only List of a version 1 store (no process columns) = %+v, %v", runs, err)
	}
	if id, err := ro.Latest("probe-mem", 0); err != nil || id != 1 {
		t.Errorf("Latest on a version 1 store = %d, %v, want 1", id, err)
	}
	if err := ro.Begin(newRun("probe-mem")); err == nil {
		t.Error("a read-only store recorded a run")
	}
	ro.Close()
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("reading a version 1 store changed it")
	}

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ver, idx int
	s.db.QueryRow(`PRAGMA user_version`).Scan(&ver)
	s.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'runs_kind'`).Scan(&idx)
	if ver != SchemaVersion || idx != 1 {
		t.Errorf("after Open: schema version %d with %d runs_kind index, want %d with 1", ver, idx, SchemaVersion)
	}
	if r, err := s.Get(1); err != nil || r.Version != "v1" {
		t.Errorf("run 1 after migrating: %+v, %v", r, err)
	}
	uid, err := s.UID(1)
	if err != nil || !uuidRE.MatchString(uid) {
		t.Errorf("run 1 after migrating has UID %q, %v; want a version 4 UUID", uid, err)
	}
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestFindAndResolve: Find selects by host, kind and start time; Resolve
// takes a run's number, its UID or a unique prefix of it, and refuses
// anything else.
func TestFindAndResolve(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	for i, hk := range [][2]string{{"a", "oltp"}, {"b", "oltp"}, {"a", "probe-mem"}, {"a", "oltp"}} {
		r := newRun(hk[1])
		r.Host, r.Started = hk[0], t0.Add(time.Duration(i)*time.Hour)
		if err := s.Begin(r); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		f    Filter
		want []int64
	}{
		{Filter{}, []int64{1, 2, 3, 4}},
		{Filter{Host: "a"}, []int64{1, 3, 4}},
		{Filter{Host: "a", Kind: "oltp"}, []int64{1, 4}},
		{Filter{Since: t0.Add(time.Hour)}, []int64{2, 3, 4}},
		{Filter{Until: t0.Add(time.Hour)}, []int64{1}},
		{Filter{Kind: "oltp", Since: t0.Add(30 * time.Minute), Until: t0.Add(3 * time.Hour)}, []int64{2}},
		{Filter{Host: "c"}, nil},
	} {
		runs, err := s.Find(c.f)
		var ids []int64
		for _, r := range runs {
			ids = append(ids, r.ID)
		}
		if err != nil || fmt.Sprint(ids) != fmt.Sprint(c.want) {
			t.Errorf("Find(%+v) = %v, %v; want %v", c.f, ids, err, c.want)
		}
	}
	uid, err := s.UID(3)
	if err != nil || !uuidRE.MatchString(uid) {
		t.Fatalf("UID(3) = %q, %v", uid, err)
	}
	// A UID whose first 8 characters are digits, as one in 40 are.
	if _, err := s.db.Exec(`UPDATE runs SET uid = '12345678-' || substr(uid, 10) WHERE id = 2`); err != nil {
		t.Fatal(err)
	}
	if id, err := s.Resolve("12345678"); err != nil || id != 2 {
		t.Errorf("Resolve(12345678), a UID prefix no run's number is, = %d, %v; want 2", id, err)
	}
	for _, text := range []string{"3", "00000003", uid, uid[:8], strings.ToUpper(uid[:13])} {
		if id, err := s.Resolve(text); err != nil || id != 3 {
			t.Errorf("Resolve(%q) = %d, %v; want 3", text, id, err)
		}
	}
	for _, text := range []string{"0", "-2", "x", "abcdef1", "ffffffff-ffff"} {
		if id, err := s.Resolve(text); err == nil {
			t.Errorf("Resolve(%q) = %d, want an error", text, id)
		}
	}
	if _, err := s.Resolve("ffffffff-ffff"); !errors.Is(err, ErrNoRun) {
		t.Errorf("Resolve of an unknown UID = %v, want ErrNoRun", err)
	}
}

func TestOpenReadOnlyCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "numalab.db")
	if _, err := OpenReadOnly(missing); !errors.Is(err, ErrNoStore) {
		t.Errorf("OpenReadOnly(missing) = %v, want ErrNoStore", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenReadOnly created %s", missing)
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenReadOnly(empty); !errors.Is(err, ErrNoStore) {
		t.Errorf("OpenReadOnly(empty file) = %v, want ErrNoStore", err)
	}
	if st, err := os.Stat(empty); err != nil || st.Size() != 0 {
		t.Errorf("OpenReadOnly wrote to an empty file: %v", err)
	}
	bare := filepath.Join(dir, "bare.db") // SQLite, no tables: Open would adopt it
	db, err := sql.Open("sqlite3", "file:"+bare)
	if err == nil {
		_, err = db.Exec(`CREATE TABLE t (x); DROP TABLE t`)
		db.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenReadOnly(bare); !errors.Is(err, ErrNoStore) {
		t.Errorf("OpenReadOnly(SQLite without tables) = %v, want ErrNoStore", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("OpenReadOnly left files behind: %v", entries)
	}
}

// TestAddHidesPasswords: whoever stores an item, a password in it (an
// error text, a DSN) is hidden in the store.
func TestAddHidesPasswords(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := newRun("report")
	if err := s.Begin(r); err != nil {
		t.Fatal(err)
	}
	load := result.BulkLoad{Where: "postgres://u:hunter2@db/x", Method: "COPY"}
	if _, err := s.Add(r.ID, result.KindBulkLoad.Of(load)); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if b := string(got.Results[0].Body); strings.Contains(b, "hunter2") || !strings.Contains(b, "COPY") {
		t.Errorf("stored body %s: want the password hidden and the rest kept", b)
	}
}

// TestRunHidesPasswords: a run's command, configuration, headline and
// error are stored with every password hidden, whatever door it came in
// by (a --db or sweep-file value in the configuration, an error that
// quotes a DSN): no byte of the store holds it.
func TestRunHidesPasswords(t *testing.T) {
	const pw = "hunter2pw"
	dir := t.TempDir()
	s, err := Open(filepath.Join(dir, "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	r := newRun("oltp")
	r.Command = "numalab run oltp --db 'host=h password=" + pw + " dbname=x'"
	r.Config = []byte(`{"db":"host=h password=` + pw + ` dbname=x","store":"mysql://u:` + pw + `@h/db"}`)
	if err := s.Begin(r); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(r.ID, time.Now(), result.StatusFailed, "0 tps at postgres://u:"+pw+"@h/x",
		"connecting to mysql://u:"+pw+"@h/db: refused"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), pw) {
			t.Errorf("the password is in the bytes of %s", e.Name())
		}
	}
}

// TestRefusesConnectionStrings: a target that looks like a connection
// string, but is no postgres:// URL, is refused without creating a file
// named after it, its password not quoted.
func TestRefusesConnectionStrings(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, target := range []string{"host=127.0.0.1 password=hunter2 dbname=x", "mysql://u:hunter2@h/db", "dbname=x"} {
		for name, open := range map[string]func(string) (*Store, error){"Open": Open, "OpenReadOnly": OpenReadOnly} {
			_, err := open(target)
			if !errors.Is(err, ErrConnString) || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("%s(%q) = %v, want ErrConnString without the password", name, target, err)
			}
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("refused targets left %v", ents)
	}
}

// TestReadOnlyLeavesNoFiles: reading a store leaves its directory as it
// found it (no -wal or -shm files), as a writer's close does.
func TestReadOnlyLeavesNoFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Begin(newRun("oltp")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	if runs, err := ro.List(); err != nil || len(runs) != 1 {
		t.Errorf("List = %d runs, %v; want 1", len(runs), err)
	}
	ro.Close()
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("after reading, the store's directory holds %v, want s.db only", entries)
	}
}

func TestLatest(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, st := range []string{result.StatusComplete, result.StatusFailed, result.StatusComplete, result.StatusRunning} {
		r := newRun("oltp")
		r.Status = st
		if err := s.Begin(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Begin(newRun("probe-mem")); err != nil { // run 5
		t.Fatal(err)
	}
	for _, c := range []struct {
		kind     string
		before   int64
		statuses []string
		want     int64
	}{
		{"oltp", 0, nil, 4},
		{"oltp", 0, []string{result.StatusComplete, result.StatusInterrupted}, 3},
		{"oltp", 3, []string{result.StatusComplete}, 1},
		{"oltp", 3, nil, 2},
		{"oltp", 1, nil, 0},
		{"probe-io", 0, nil, 0},
		{"probe-mem", 0, []string{result.StatusRunning}, 5},
	} {
		if got, err := s.Latest(c.kind, c.before, c.statuses...); err != nil || got != c.want {
			t.Errorf("Latest(%s, %d, %v) = %d, %v, want %d", c.kind, c.before, c.statuses, got, err, c.want)
		}
	}
	// oltp: the latest complete run, not the running one after it;
	// probe-mem: running is all there is; probe-io: none.
	if ids, err := s.LatestOfEach([]string{"probe-io", "oltp", "probe-mem"}); err != nil ||
		!slices.Equal(ids, []int64{3, 5}) {
		t.Errorf("LatestOfEach = %v, %v, want [3 5]", ids, err)
	}
}

func TestParseWhen(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		{"", time.Time{}},
		{"24h", now.Add(-24 * time.Hour)},
		{"2026-11-20", time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)},
		{"2026-11-20T06:30", time.Date(2026, 11, 20, 6, 30, 0, 0, time.UTC)},
		{"2026-11-20 06:30:15", time.Date(2026, 11, 20, 6, 30, 15, 0, time.UTC)},
		{"2026-11-20T06:30:00+02:00", time.Date(2026, 11, 20, 4, 30, 0, 0, time.UTC)},
	} {
		if got, err := ParseWhen(c.in, now); err != nil || !got.Equal(c.want) {
			t.Errorf("ParseWhen(%q) = %v, %v, want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"yesterday", "-24h", "2026-13-01"} {
		if _, err := ParseWhen(bad, now); err == nil || !strings.Contains(err.Error(), "is not a time") {
			t.Errorf("ParseWhen(%q) = %v, want refused", bad, err)
		}
	}
}

// TestHelperWriter is not a test: TestConcurrentProcesses runs the test
// binary as several processes that each write runs through it.
func TestHelperWriter(t *testing.T) {
	path := os.Getenv("NUMALAB_STORE_WRITER")
	if path == "" {
		t.Skip("helper process for TestConcurrentProcesses")
	}
	n, _ := strconv.Atoi(os.Getenv("NUMALAB_STORE_RUNS"))
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range n {
		r := newRun("concurrent")
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

func TestConcurrentProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	const procs, runs = 4, 20
	var wg sync.WaitGroup
	errs := make([]error, procs)
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
			cmd.Env = append(os.Environ(), "NUMALAB_STORE_WRITER="+path, "NUMALAB_STORE_RUNS="+strconv.Itoa(runs))
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
	s, err := Open(path)
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
}

// TestAbandoned: a running run whose process is gone (a child named while
// it ran, then killed, or a PID now with another start time) reads back as
// abandoned with its items; a live one, a finished one, one of another host
// and one that names no process stay as stored.
func TestAbandoned(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Skip(err)
	}
	st, err := sysfs.New("/").ProcStat(child.Process.Pid)
	child.Process.Kill()
	child.Wait()
	if err != nil {
		t.Fatal(err)
	}
	self, err := sysfs.New("/").ProcStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		host       string
		pid        any
		start      any
		finish     bool
		wantStatus string
	}{
		{host, child.Process.Pid, st.Start, false, result.StatusAbandoned},
		{host, os.Getpid(), self.Start + 1, false, result.StatusAbandoned}, // the PID reused
		{host, os.Getpid(), self.Start, false, result.StatusRunning},
		{host, child.Process.Pid, st.Start, true, result.StatusComplete},
		{host + ".elsewhere", child.Process.Pid, st.Start, false, result.StatusRunning},
		{host, nil, nil, false, result.StatusRunning}, // stored before runs named their process
	} {
		r := newRun("oltp")
		r.Host = tc.host
		if err := s.Begin(r); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Add(r.ID, pointKind.Of(map[string]int{"i": 7})); err != nil {
			t.Fatal(err)
		}
		if tc.finish {
			if err := s.Finish(r.ID, r.Started.Add(time.Second), result.StatusComplete, "7 tps", ""); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.db.Exec(`UPDATE runs SET pid = ?, pid_start = ? WHERE id = ?`, tc.pid, tc.start, r.ID); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(r.ID)
		if err != nil {
			t.Fatal(err)
		}
		runs, err := s.List()
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != tc.wantStatus || runs[len(runs)-1].Status != tc.wantStatus || len(got.Results) != 1 {
			t.Errorf("host %s pid %v start %v: Get %s with %d items, List %s; want %s with its item",
				tc.host, tc.pid, tc.start, got.Status, len(got.Results), runs[len(runs)-1].Status, tc.wantStatus)
		}
	}
	// Begin names this process.
	r := newRun("oltp")
	if err := s.Begin(r); err != nil {
		t.Fatal(err)
	}
	var pid int
	var start uint64
	if err := s.db.QueryRow(`SELECT pid, pid_start FROM runs WHERE id = ?`, r.ID).Scan(&pid, &start); err != nil ||
		pid != os.Getpid() || start != self.Start {
		t.Errorf("Begin stored pid %d start %d (%v), want %d %d", pid, start, err, os.Getpid(), self.Start)
	}
}

// TestOpenLockedSaysWho: a writer to a store whose write lock another
// connection holds waits, saying every lockStep who holds it (the runs in
// progress there, with PID and command) and for how long; past lockLimit
// it is refused, naming them and the next step; a lock released within
// the limit lets the writer go on.
func TestOpenLockedSaysWho(t *testing.T) {
	step, limit := lockStep, lockLimit
	lockStep, lockLimit = 100*time.Millisecond, 500*time.Millisecond
	defer func() { lockStep, lockLimit, Waiting = step, limit, nil }()
	var mu sync.Mutex
	var said []string
	Waiting = func(l string) {
		mu.Lock()
		said = append(said, l)
		mu.Unlock()
	}
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := newRun("run-oltp")
	if err := s.Begin(r); err != nil {
		t.Fatal(err)
	}
	// An sqlite3 shell in a transaction: the write lock, held.
	db, err := sql.Open("sqlite3", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`UPDATE runs SET headline = 'held'`); err != nil {
		t.Fatal(err)
	}
	who := fmt.Sprintf("in progress in this store: run %d (pid %d: numalab run-oltp)", r.ID, os.Getpid())
	_, err = Open(path)
	want := who + "; wait for it to end, or give another --store"
	if err == nil || !strings.Contains(err.Error(), "database is locked") || !strings.Contains(err.Error(), want) {
		t.Errorf("Open of a locked store: %v\nwant it to say %q", err, want)
	}
	mu.Lock()
	progress := said
	said = nil
	mu.Unlock()
	// How many steps fit in the limit is the machine's speed (under a CPU
	// hog two of five did); that the wait is told, and by whom, is numalab's.
	if len(progress) == 0 {
		t.Errorf("no progress line while waiting %v, %v at a time", lockLimit, lockStep)
	}
	for _, l := range progress {
		if !strings.HasPrefix(l, "store "+path+" is locked ("+who+"): waited ") {
			t.Errorf("progress line %q does not say who holds the lock", l)
		}
	}
	// Released within the limit: Add waits, then stores.
	go func() {
		time.Sleep(250 * time.Millisecond)
		tx.Rollback()
	}()
	if _, err := s.Add(r.ID, cellKind.Of(1)); err != nil {
		t.Errorf("Add after the lock was released: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(said) == 0 {
		t.Error("Add waited for the lock without saying so")
	}
}
