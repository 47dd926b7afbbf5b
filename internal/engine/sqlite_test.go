package engine

import (
	"database/sql/driver"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSQLiteCreateAndOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a b?.db") // characters a URI must escape
	db, err := CreateSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "off" {
		t.Errorf("load connection journal_mode %q (%v), want off", mode, err)
	}
	if _, err := db.Exec("CREATE TABLE t (x INTEGER PRIMARY KEY, y TEXT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO t VALUES (1, 'one'), (2, 'two')"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	if _, err := CreateSQLite(path); err == nil || !strings.Contains(err.Error(), "file exists") {
		t.Errorf("creating over an existing file: %v", err)
	}

	c, err := OpenSQLiteConn(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	q := func(s string) driver.Value {
		rows, err := c.Query(s, nil)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		defer rows.Close()
		v := make([]driver.Value, 1)
		if err := rows.Next(v); err != nil && err != io.EOF {
			t.Fatalf("%s: %v", s, err)
		}
		return v[0]
	}
	fi, _ := os.Stat(path)
	if m, _ := q("PRAGMA mmap_size").(int64); m < fi.Size() {
		t.Errorf("mmap_size %d does not cover the %d-byte file", m, fi.Size())
	}
	if y := q("SELECT y FROM t WHERE x = 2"); y != "two" {
		t.Errorf("read %v, want two", y)
	}
	if _, err := c.Exec("INSERT INTO t VALUES (3, 'three')", nil); err == nil {
		t.Error("a run connection could write")
	}

	n, err := PrewarmSQLiteFile(path, true)
	if err != nil || n != fi.Size() {
		t.Errorf("prewarm read %d bytes (%v), want %d", n, err, fi.Size())
	}

	missing := filepath.Join(dir, "missing.db")
	if _, err := OpenSQLiteConn(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("opening a missing file: %v", err)
	}
	if _, err := OpenSQLiteDB(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("opening a missing file: %v", err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("opening a missing file created it")
	}
}

func TestSQLiteDiskFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "full.db")
	db, err := CreateSQLite(path, "PRAGMA max_page_count=3")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.Exec("CREATE TABLE t (y TEXT)")
	_, err = db.Exec("INSERT INTO t VALUES (?)", strings.Repeat("x", 20000))
	if err = SQLiteError(err); !errors.Is(err, ErrDiskFull) {
		t.Errorf("insert past max_page_count: %v, want ErrDiskFull", err)
	}
}

// TestSQLiteWrite: Options.Write opens an existing file read-write, for
// DB and for two streams that write it in turn.
func TestSQLiteWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	db, err := CreateSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE t (x INTEGER PRIMARY KEY, n INTEGER); INSERT INTO t VALUES (1, 0)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	e, err := Open(t.Context(), "sqlite", Options{Path: path, Write: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for range 2 {
		c, err := e.Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Exec(t.Context(), "UPDATE t SET n = n + ? WHERE x = 1", int64(2)); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	var n int
	if err := e.DB().QueryRow("SELECT n FROM t").Scan(&n); err != nil || n != 4 {
		t.Errorf("n = %d (%v), want 4 after two streams added 2", n, err)
	}
	if _, err := Open(t.Context(), "sqlite",
		Options{Path: filepath.Join(t.TempDir(), "none.db"), Write: true}); err == nil {
		t.Error("Write opened a file that does not exist; want it refused")
	}
}
