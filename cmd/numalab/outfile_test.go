package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fileState is a file's bytes, for checking that a refused write left it
// alone.
func fileState(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func dirList(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// report --out never writes over the store, another store, a TPC-C
// database, a file it did not write, or a directory; it replaces its own reports in
// every format; --force replaces a foreign file but never the store.
func TestReportOutNeverOverwrites(t *testing.T) {
	db := reportStore(t, 1)
	dir := filepath.Dir(db)
	other := reportStore(t, 1)
	tpcc := tpccDB(t)
	otherBytes, tpccBytes := fileState(t, other), fileState(t, tpcc)
	for _, format := range []string{"html", "text", "json", "csv"} {
		for _, c := range []struct {
			out, want string
			force     bool
		}{
			{db, "is the results store", false},
			{db, "is the results store", true},
			{filepath.Join(dir, ".", "runs.db"), "is the results store", true},
			{other, "is a SQLite database", true},
			{tpcc, "is a SQLite database", true},
			{dir, "is a directory", false},
		} {
			args := []string{"report", "--store", db, "--format", format, "--out", c.out}
			if c.force {
				args = append(args, "--force")
			}
			_, _, err := runCLI(t, args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: err = %v, want %q", strings.Join(args, " "), err, c.want)
			}
		}
	}
	// Opening the store to read runs may touch it; only the other database
	// is bytewise the same, and the store still holds its runs.
	if fileState(t, other) != otherBytes || fileState(t, tpcc) != tpccBytes ||
		!strings.HasPrefix(fileState(t, db), "SQLite format 3\x00") {
		t.Fatal("a refused --out changed a database")
	}
	if got := dirList(t, dir); !slices.Equal(got, []string{"runs.db"}) {
		t.Errorf("the store's directory holds %q, want runs.db only (no temporary files)", got)
	}
	if out, _, err := runCLI(t, "runs", "--store", db); err != nil || !strings.Contains(out, "probe-mem") {
		t.Fatalf("the store no longer lists its runs: %q, %v", out, err)
	}

	for _, format := range []string{"html", "text", "json", "csv"} {
		notes := filepath.Join(t.TempDir(), "notes."+format)
		if err := os.WriteFile(notes, []byte("my own notes\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := runCLI(t, "report", "--store", db, "--format", format, "--out", notes)
		want := notes + " exists and was not written by numalab"
		if err == nil || !strings.Contains(err.Error(), want) ||
			!strings.Contains(err.Error(), "choose another --out or pass --force") {
			t.Errorf("--format %s over a foreign file: err = %v, want %q", format, err, want)
		}
		if fileState(t, notes) != "my own notes\n" {
			t.Errorf("--format %s changed a foreign file", format)
		}
		if _, _, err := runCLI(t, "report", "--store", db, "--format", format, "--out", notes, "--force"); err != nil {
			t.Errorf("--format %s --force: %v", format, err)
		}
		first := fileState(t, notes)
		if first == "my own notes\n" {
			t.Errorf("--format %s --force left the file as it was", format)
		}
		// The report it wrote carries numalab's mark: it may be replaced.
		if _, _, err := runCLI(t, "report", "--store", db, "--format", format, "--out", notes, "1", "2"); err != nil {
			t.Errorf("--format %s over its own report: %v", format, err)
		} else if fileState(t, notes) == first {
			t.Errorf("--format %s over its own report: the file did not change", format)
		}
	}
}

// eval checks --out before it measures anything.
func TestEvalRefusesOutAtOnce(t *testing.T) {
	dir := t.TempDir()
	db := reportStore(t, 1)
	notes := filepath.Join(dir, "notes.html")
	if err := os.WriteFile(notes, []byte("<p>mine</p>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ out, want string }{
		{db, "is the results store"},
		{notes, "exists and was not written by numalab"},
		{dir, "is a directory"},
		{filepath.Join(dir, "no", "r.html"), "does not exist"},
	} {
		stdout, _, err := runCLI(t, "eval", "--store", db, "--dir", dir, "--out", c.out)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("eval --out %s: err = %v, want %q", c.out, err, c.want)
		}
		if stdout != "" {
			t.Errorf("eval --out %s started work: %q", c.out, stdout)
		}
	}
	if got := dirList(t, dir); !slices.Equal(got, []string{"notes.html"}) {
		t.Errorf("eval left %q", got)
	}
}

// topo --capture replaces its own capture but not another file.
func TestTopoCaptureReplacesOnlyCapturesHost(t *testing.T) {
	if _, err := os.Stat("/sys/devices/system/cpu"); err != nil {
		t.Skip("no /sys/devices/system/cpu: not Linux")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "box.tar.gz")
	for i := range 2 {
		if _, _, err := runCLI(t, "topo", "--capture", file); err != nil {
			t.Fatalf("capture %d: %v", i+1, err)
		}
	}
	foreign := filepath.Join(dir, "backup.tar.gz")
	if err := os.WriteFile(foreign, []byte("not numalab's"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := runCLI(t, "topo", "--capture", foreign)
	if err == nil || !strings.Contains(err.Error(), "exists and was not written by numalab") ||
		!strings.Contains(err.Error(), "choose another --capture") {
		t.Errorf("capture over a foreign file: %v", err)
	}
	if fileState(t, foreign) != "not numalab's" {
		t.Error("a refused capture changed the file")
	}
	if _, _, err := runCLI(t, "topo", "--capture", foreign, "--force"); err != nil {
		t.Errorf("capture --force: %v", err)
	}
	if got := dirList(t, dir); !slices.Equal(got, []string{"backup.tar.gz", "box.tar.gz"}) {
		t.Errorf("directory holds %q", got)
	}
}
