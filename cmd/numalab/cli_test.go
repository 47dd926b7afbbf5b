package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/golden"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
)

// checkGolden compares got with testdata/golden/name; -update rewrites it.
func checkGolden(t testing.TB, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name), []byte(got))
}

// runCLI runs numalab in-process and returns stdout, stderr and the error.
func runCLI(t testing.TB, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := runChecked(t, context.Background(), args, &out, &errb)
	return out.String(), errb.String(), err
}

// storedRun reads run id, with its results, back from the store at path.
func storedRun(t testing.TB, path string, id int64) *result.Run {
	t.Helper()
	s, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// onlyRun reads back, with its results, the one run of the store at path,
// and fails the test when the store holds another number of runs.
func onlyRun(t testing.TB, path string) *result.Run {
	t.Helper()
	s, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.List()
	s.Close()
	if err != nil || len(runs) != 1 {
		t.Fatalf("stored runs %+v, %v; want one", runs, err)
	}
	return storedRun(t, path, runs[0].ID)
}

// storedCells counts the cells, OLTP or reporting, that run 1 of the store
// at path holds so far (0 while it cannot be read), to watch a run that
// another process is making.
func storedCells(path string) int {
	s, err := store.OpenReadOnly(path)
	if err != nil {
		return 0
	}
	defer s.Close()
	r, err := s.Get(1)
	if err != nil {
		return 0
	}
	n := 0
	for _, it := range r.Results {
		if k := it.Kind; k == string(result.KindCell) || k == string(result.KindQueryCell) {
			n++
		}
	}
	return n
}

func TestHelpListsEveryCommand(t *testing.T) {
	out, _, err := runCLI(t, "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range commands {
		if !strings.Contains(out, "  "+c.name+" ") {
			t.Errorf("--help does not list %q", c.name)
		}
		cout, cerr, err := runCLI(t, c.name, "--help")
		if err != nil {
			t.Errorf("%s --help: %v", c.name, err)
		}
		if cerr != "" || strings.Count(cout, "Usage") != 1 {
			t.Errorf("%s --help must print once, to stdout; stdout has %d usages, stderr:\n%s",
				c.name, strings.Count(cout, "Usage"), cerr)
		}
		if !strings.Contains(cout, "Usage") || !strings.Contains(cout, "Example") {
			t.Errorf("%s --help teaches no usage or examples:\n%s", c.name, cout)
		}
	}
}

func TestUnknownCommandAndFlag(t *testing.T) {
	_, stderr, err := runCLI(t, "frobnicate")
	if !errors.Is(err, cliflag.ErrUsage) || !strings.Contains(stderr, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: err=%v stderr=%q", err, stderr)
	}
	_, stderr, err = runCLI(t, "runs", "--bogus")
	if !errors.Is(err, cliflag.ErrUsage) || !strings.Contains(stderr, "bogus") || strings.Count(stderr, "Flags:") != 1 {
		t.Errorf("unknown flag: want the error and the usage once on stderr; err=%v stderr=%q", err, stderr)
	}
	if _, _, err := runCLI(t); !errors.Is(err, cliflag.ErrUsage) {
		t.Errorf("no command: err=%v", err)
	}
	_, stderr, err = runCLI(t, "run", "bogus")
	if !errors.Is(err, cliflag.ErrUsage) || !strings.HasPrefix(stderr,
		`numalab run: unknown workload "bogus" (want oltp, report, insert, null, tpch, pages or sql)`) ||
		!strings.HasSuffix(stderr, helpText("run")) {
		t.Errorf("unknown workload: want it named with the choices, then run's help; err=%v stderr=%q", err, stderr)
	}
}

func TestVersion(t *testing.T) {
	out, _, err := runCLI(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"numalab ", "go ", "github.com/mattn/go-sqlite3"} {
		if !strings.Contains(out, want) {
			t.Errorf("version output lacks %q:\n%s", want, out)
		}
	}
}
