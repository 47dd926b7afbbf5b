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
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/result"
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
	if _, err := Open(path); err == nil {
		t.Fatal("opened a store from a newer numalab")
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
