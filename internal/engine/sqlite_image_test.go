package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSQLiteImage: a database file's bytes opened as an image answer
// queries on DB and on a stream's native connection, and reads go to the
// image: zeroing it afterwards makes the same query fail. Bytes that are
// no database are refused at open.
func TestSQLiteImage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := CreateSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"CREATE TABLE t (a INTEGER)", "INSERT INTO t VALUES (1), (2), (40)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mem := append([]byte(nil), b...)
	e, err := OpenSQLiteImage(mem)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var sum int
	if err := e.DB().QueryRow("SELECT sum(a) FROM t").Scan(&sum); err != nil || sum != 43 {
		t.Fatalf("sum over the image's DB: %d, %v; want 43", sum, err)
	}
	c, err := e.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if sc, ok := c.(*sqliteConn); !ok || sc.c == nil {
		t.Fatal("no native SQLite connection over the image")
	}
	var got []any
	if err := c.Query(context.Background(), "SELECT max(a) FROM t", nil,
		func(v []any) error { got = append(got, v[0]); return nil }); err != nil || len(got) != 1 || got[0] != int64(40) {
		t.Fatalf("max over a stream's connection: %v, %v; want 40", got, err)
	}
	if err := c.Exec(context.Background(), "INSERT INTO t VALUES (5)"); err == nil {
		t.Error("a write to the read-only image succeeded")
	}
	if _, err := e.Bulk(context.Background(), "t", []string{"a"}); err == nil {
		t.Error("Bulk on an image did not refuse")
	}
	// The connection reads in place: the image's bytes are what it sees.
	clear(mem)
	if err := c.Query(context.Background(), "SELECT count(*) FROM t", nil, func([]any) error { return nil }); err == nil {
		t.Error("a query after the image was zeroed succeeded: the connection read a copy")
	}
	if _, err := OpenSQLiteImage([]byte(strings.Repeat("not a database ", 400))); err == nil ||
		!strings.Contains(err.Error(), "expected a SQLite database") {
		t.Errorf("bytes that are no database: %v, want a refusal", err)
	}
	if _, err := OpenSQLiteImage(nil); err == nil {
		t.Error("an empty image was not refused")
	}
}
