package outfile

import (
	"compress/gzip"
	"database/sql"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	_ "github.com/mattn/go-sqlite3"
)

// Files as numalab's report writers and topo --capture make them.
const (
	ourHTML = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
		"<title>numalab report: AMD EPYC</title>\n</head></html>\n"
	ourText = "numalab report\n\nFindings\n  - DRAM latency 294.7 ns\n"
	ourCSV  = "section,run,series,x_name,x,y_name,y,unit,min,max,repeats\n" +
		"memory,1,random,working_set_bytes,4096,latency,1.2,ns,,,3\n"
	ourJSON = "{\n  \"runs\": [\n    {\n      \"id\": 1,\n      \"kind\": \"probe-mem\",\n" +
		"      \"command\": \"numalab probe mem --quick\"\n    }\n  ],\n  \"findings\": []\n}\n"
)

func ourCapture(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	zw := gzip.NewWriter(&b)
	zw.Comment = CaptureComment
	zw.Write([]byte("a tar would be here"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

// sqliteFile makes a real SQLite database at dir/name, as a store, a TPC-C
// database or another program's database would be.
func sqliteFile(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(
		`CREATE TABLE runs(id INTEGER PRIMARY KEY, x TEXT); INSERT INTO runs(x) VALUES ('keep me')`); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dirNames lists dir, to show that nothing (no temporary file) was left.
func dirNames(t *testing.T, dir string) []string {
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

func TestWriteNewFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.html")
	if err := Write(path, HTMLReport, Options{Flag: "out"}, writeString(ourHTML)); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, path); got != ourHTML {
		t.Errorf("wrote %q, want %q", got, ourHTML)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{"r.html"}) {
		t.Errorf("directory holds %q, want only r.html", got)
	}
}

// Each kind replaces a file it wrote, without --force.
func TestWriteReplacesOwnFile(t *testing.T) {
	for _, c := range []struct {
		name string
		kind Kind
		old  string
	}{
		{"r.html", HTMLReport, ourHTML},
		{"r.txt", TextReport, ourText},
		{"r.csv", CSVReport, ourCSV},
		{"r.json", JSONReport, ourJSON},
		{"m.tar.gz", Capture, ourCapture(t)},
	} {
		path := filepath.Join(t.TempDir(), c.name)
		if err := os.WriteFile(path, []byte(c.old), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := Write(path, c.kind, Options{Flag: "out"}, writeString("new")); err != nil {
			t.Errorf("%s: replacing numalab's own %s: %v", c.name, c.kind.name, err)
			continue
		}
		if got := mustRead(t, path); got != "new" {
			t.Errorf("%s: holds %q after the write, want %q", c.name, got, "new")
		}
	}
}

// A file numalab did not write is refused, in every format, unless
// --force; the refusal says what to do and leaves the file as it was.
func TestWriteRefusesForeignFile(t *testing.T) {
	foreign := map[string]string{
		"plain text":            "my notes\n",
		"another program's CSV": "a,b,c\n1,2,3\n",
		"another JSON":          `{"runs": [{"command": "make all"}]}`,
		"an HTML page":          "<!DOCTYPE html>\n<html><title>my page</title></html>\n",
		"a plain tar.gz":        "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00",
		"an empty file":         "",
	}
	for _, kind := range []Kind{HTMLReport, TextReport, CSVReport, JSONReport, Capture} {
		for what, content := range foreign {
			dir := t.TempDir()
			path := filepath.Join(dir, "out")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			err := Write(path, kind, Options{Flag: "out"}, writeString(ourHTML))
			if !errors.Is(err, ErrRefused) {
				t.Errorf("%s over %s: err = %v, want a refusal", kind.name, what, err)
			} else if want := "exists and was not written by numalab"; !strings.Contains(err.Error(), want) ||
				!strings.Contains(err.Error(), "--force") || !strings.Contains(err.Error(), "--out") {
				t.Errorf("%s over %s: %q does not say %q, --out and --force", kind.name, what, err, want)
			}
			if got := mustRead(t, path); got != content {
				t.Errorf("%s over %s: file changed to %q", kind.name, what, got)
			}
			if got := dirNames(t, dir); !slices.Equal(got, []string{"out"}) {
				t.Errorf("%s over %s: directory holds %q", kind.name, what, got)
			}
			if err := Write(path, kind, Options{Flag: "out", Force: true}, writeString("forced")); err != nil {
				t.Errorf("%s over %s with --force: %v", kind.name, what, err)
			} else if got := mustRead(t, path); got != "forced" {
				t.Errorf("%s over %s with --force: holds %q", kind.name, what, got)
			}
		}
	}
}

// Databases are never replaced, not even with --force: the store (by
// identity, and by content under another name), a TPC-C database, another
// program's SQLite file, their journals and a DuckDB database.
func TestWriteNeverReplacesDatabases(t *testing.T) {
	dir := t.TempDir()
	store := sqliteFile(t, dir, "numalab.db")
	other := sqliteFile(t, dir, "app.sqlite")
	duck := filepath.Join(dir, "t.duckdb")
	// A DuckDB file: a checksum, then the magic "DUCK" at byte 8.
	if err := os.WriteFile(duck, append(make([]byte, 8), "DUCK\x40\x00\x00\x00"...), 0o644); err != nil {
		t.Fatal(err)
	}
	wal := filepath.Join(dir, "app.sqlite-wal")
	if err := os.WriteFile(wal, []byte{0x37, 0x7f, 0x06, 0x82, 0, 0x2d, 0xe2, 0x18}, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.html")
	if err := os.Symlink(store, link); err != nil {
		t.Fatal(err)
	}
	before := map[string]string{}
	for _, p := range []string{store, other, duck, wal} {
		before[p] = mustRead(t, p)
	}
	opt := Options{Flag: "out", Force: true, Keep: []string{store}}
	for _, c := range []struct{ path, want string }{
		{store, "is the results store"},
		{filepath.Join(dir, ".", "sub", "..", "numalab.db"), "is the results store"},
		{store + "-wal", "is the results store"}, // not there yet: by name
		{link, "is the results store"},
		{other, "is a SQLite database"},
		{duck, "is a DuckDB database"},
		{wal, "is a SQLite write-ahead log"},
	} {
		for _, kind := range []Kind{HTMLReport, CSVReport, JSONReport, TextReport, Capture} {
			err := Write(c.path, kind, opt, writeString(ourHTML))
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s as %s: err = %v, want a refusal saying %q", c.path, kind.name, err, c.want)
			}
		}
	}
	for p, b := range before {
		if got := mustRead(t, p); got != b {
			t.Errorf("%s changed", p)
		}
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link to the store was replaced: %v %v", fi, err)
	}
	if got := dirNames(t, dir); len(got) != 5 {
		t.Errorf("directory holds %q, want the five files it had", got)
	}
}

// --out DIR, a device and a pipe are refused, and nothing is left behind.
func TestWriteRefusesNonFiles(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "adir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{sub, "is a directory; give a file name in it, such as " + filepath.Join(sub, "numalab-report.html")},
		{fifo, "is not a regular file"},
		{"/dev/null", "is not a regular file"},
	} {
		err := Write(c.path, HTMLReport, Options{Flag: "out", Force: true}, writeString(ourHTML))
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want a refusal saying %q", c.path, err, c.want)
		}
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{"adir", "fifo"}) {
		t.Errorf("directory holds %q, want adir and fifo only", got)
	}
	if got := dirNames(t, sub); len(got) != 0 {
		t.Errorf("adir holds %q, want nothing", got)
	}
}

// A write that fails leaves the old file as it was and no temporary file.
func TestWriteFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.txt")
	if err := os.WriteFile(path, []byte(ourText), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("renderer failed")
	err := Write(path, TextReport, Options{Flag: "out"}, func(w io.Writer) error {
		io.WriteString(w, "half a rep")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the renderer's", err)
	}
	if got := mustRead(t, path); got != ourText {
		t.Errorf("the old report became %q", got)
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{"r.txt"}) {
		t.Errorf("directory holds %q, want r.txt only", got)
	}
	// A missing directory is refused before any file is made.
	if err := Write(filepath.Join(dir, "no", "r.txt"), TextReport, Options{Flag: "out"},
		writeString("x")); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("writing into a missing directory: err = %v, want a refusal", err)
	}
}

// Check refuses the same paths Write does, before any work, and writes
// nothing.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	store := sqliteFile(t, dir, "s.db")
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := Options{Flag: "out", Keep: []string{store}}
	if err := Check(filepath.Join(dir, "new.html"), HTMLReport, opt); err != nil {
		t.Errorf("a new file: %v", err)
	}
	for _, p := range []string{store, notes, dir, "", filepath.Join(dir, "no", "r.html"), filepath.Join(notes, "r.html")} {
		if err := Check(p, HTMLReport, opt); !errors.Is(err, ErrRefused) {
			t.Errorf("Check(%q) = %v, want a refusal", p, err)
		}
	}
	if got := dirNames(t, dir); len(got) != 2 {
		t.Errorf("Check left %q", got)
	}
}
