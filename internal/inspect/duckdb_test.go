package inspect

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duckdb/duckdb-go/v2"
)

// makeDuckDB creates a DuckDB file with the statements and closes it (which
// checkpoints it).
func makeDuckDB(t *testing.T, path string, stmts ...string) string {
	t.Helper()
	c, err := duckdb.NewConnector(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return path
}

func TestDuckDB(t *testing.T) {
	dir := t.TempDir()
	path := makeDuckDB(t, filepath.Join(dir, "d.duckdb"),
		"create table orders (id int primary key, customer int, code varchar unique, note varchar)",
		"insert into orders select i, i % 97, 'c' || i, repeat('n', (i % 50)::int) from range(100000) r(i)",
		"create index orders_cust on orders (customer desc, id)",
		"create schema s",
		"create table s.small (x int)",
		"insert into s.small values (1), (2), (3)",
		"create table s.empty (x int)",
	)
	before, names := fileState(t, path), dirNames(t, dir)
	in, err := DuckDB(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fileState(t, path) != before || dirNames(t, dir) != names {
		t.Error("inspect changed the file or its directory")
	}
	if in.Engine != "duckdb" || in.PageSize != 256<<10 || in.TotalBytes != fileSize(t, path) || in.FreeBytes == nil {
		t.Errorf("header: %q, block %d, total %d, free %v", in.Engine, in.PageSize, in.TotalBytes, in.FreeBytes)
	}
	if len(in.Tables) != 3 || in.Tables[0].Name != "orders" {
		t.Fatalf("tables: %+v, want orders first of 3", in.Tables)
	}
	o := in.Tables[0]
	if o.Rows != 100000 || o.Schema != "main" || o.Index != nil || o.Unused != nil || o.Reserved != o.Data {
		t.Errorf("orders: %+v", o)
	}
	// 100,000 rows of an int, an int, a ~6-byte code and a ~25-byte note:
	// compressed, well under the 4 MiB they take raw, but not nothing.
	if o.Data < 100<<10 || o.Data > 4<<20 {
		t.Errorf("orders: %d data bytes", o.Data)
	}
	var data int64
	for _, ts := range in.Tables {
		data += ts.Data
	}
	if data+*in.FreeBytes > in.TotalBytes {
		t.Errorf("tables' data %d + free %d > file %d", data, *in.FreeBytes, in.TotalBytes)
	}
	got := map[string]string{}
	for _, ix := range o.Indexes {
		got[ix.Name] = describeIndex(ix)
		if ix.Bytes != nil || ix.Usage != nil {
			t.Errorf("%s: size or usage DuckDB cannot know: %+v", ix.Name, ix)
		}
	}
	want := map[string]string{
		"orders_id_pkey":  "id|-|primary",
		"orders_code_key": "code|-|unique",
		"orders_cust":     "customer,id|-|",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("index %s: %q, want %q (all: %v)", k, got[k], w, got)
		}
	}
	if o.IndexCount != 3 || len(o.Indexes) != 3 {
		t.Errorf("orders: %d indexes (%d listed), want 3", o.IndexCount, len(o.Indexes))
	}
	if !strings.Contains(strings.Join(in.Notes, "\n"), "no size per index") {
		t.Errorf("notes do not say what DuckDB cannot tell: %q", in.Notes)
	}

	exact, err := DuckDB(context.Background(), path, Options{ExactRows: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range exact.Tables {
		want := map[string]int64{"orders": 100000, "small": 3, "empty": 0}[ts.Name]
		if !ts.RowsExact || ts.Rows != want {
			t.Errorf("%s.%s: %d rows (exact %v), want %d counted", ts.Schema, ts.Name, ts.Rows, ts.RowsExact, want)
		}
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func TestDuckDBBadInput(t *testing.T) {
	dir := t.TempDir()
	lite := filepath.Join(dir, "lite.db")
	makeSQLite(t, lite)
	for _, tc := range []struct{ name, path, want string }{
		{"missing", filepath.Join(dir, "nope.duckdb"), "no such database file"},
		{"sqlite", lite, "try --engine sqlite"},
		{"empty", filepath.Join(dir, "empty"), "file is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "empty" {
				if err := os.WriteFile(tc.path, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := DuckDB(context.Background(), tc.path, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) ||
				!strings.HasPrefix(err.Error(), "inspecting DuckDB database "+tc.path) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "nope.duckdb")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("inspecting a missing file created it: %v", err)
	}
}
