package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestFileEngine(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	lite := filepath.Join(dir, "a.db")
	db, err := CreateSQLite(lite)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE t (x)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	duck := filepath.Join(dir, "a.duckdb")
	e, err := Open(ctx, "duckdb", Options{Path: duck, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.DB().Exec("CREATE TABLE t (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	e.Close()
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, []byte("SQLite format 2\x00 and more"), 0o644)

	for path, want := range map[string]string{lite: "sqlite", duck: "duckdb"} {
		if got, err := FileEngine(path); got != want || err != nil {
			t.Errorf("FileEngine(%s) = %q, %v; want %q", filepath.Base(path), got, err, want)
		}
	}
	if _, err := FileEngine(junk); !errors.Is(err, ErrUnknownFile) {
		t.Errorf("FileEngine(junk) = %v, want ErrUnknownFile", err)
	}
	if _, err := FileEngine(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("FileEngine(missing) = %v, want os.ErrNotExist", err)
	}
}
