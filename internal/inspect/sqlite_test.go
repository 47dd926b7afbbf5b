package inspect

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/numalab/numalab/internal/result"
)

// sqliteSchema builds a small database with every kind of b-tree: a rowid
// table with INTEGER PRIMARY KEY, a DESC index, a partial index, an
// expression index, a text primary key (an automatic index), a WITHOUT
// ROWID table with a secondary index, rows and index keys long enough to
// overflow, and a deleted range that leaves pages on the freelist.
var sqliteSchema = []string{
	`create table t (id integer primary key, grp int, name text, payload blob)`,
	`with recursive n(i) as (select 1 union all select i + 1 from n where i < 3000)
	 insert into t select i, i % 13, printf('name%05d', i),
	   case when i % 100 = 0 then zeroblob(9000) else zeroblob(i % 200) end from n`,
	`create index t_grp_desc on t (grp desc, name)`,
	`create index t_partial on t (name) where grp = 0`,
	`create index t_lower on t (lower(name))`,
	`create table kv (k text primary key, v text)`,
	`with recursive n(i) as (select 1 union all select i + 1 from n where i < 500)
	 insert into kv select printf('key-%d', i), printf('%.*c', i % 50, 'v') from n`,
	`create table wr (a int, b text, c int, primary key (a, b)) without rowid`,
	`with recursive n(i) as (select 1 union all select i + 1 from n where i < 800)
	 insert into wr select i / 3, printf('%.*c', 1 + i % 40, 'b'), i % 17 from n`,
	`create index wr_c on wr (c)`,
	`create table docs (title text)`,
	`with recursive n(i) as (select 1 union all select i + 1 from n where i < 40)
	 insert into docs select printf('%d-%.*c', i, 500 * (i % 8), 'T') from n`,
	`create index docs_title on docs (title)`,
	`delete from t where id between 1500 and 2600`,
}

// makeSQLite creates dir/name with the pragmas, then the schema.
func makeSQLite(t *testing.T, path string, pragmas ...string) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, s := range append(append([]string(nil), pragmas...), sqliteSchema...) {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func TestSQLiteInspect(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pragmas []string
	}{
		{"default", nil},
		{"autovacuum-1k", []string{"PRAGMA page_size=1024", "PRAGMA auto_vacuum=FULL"}},
		{"incremental-64k", []string{"PRAGMA page_size=65536", "PRAGMA auto_vacuum=INCREMENTAL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.db")
			makeSQLite(t, path, tc.pragmas...)
			in, err := SQLite(context.Background(), path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkSQLite(t, path, in)
			compareDbstat(t, path)
		})
	}
}

// checkSQLite checks the figures against each other and against SQL.
func checkSQLite(t *testing.T, path string, in *result.Inspection) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func(q string) int64 {
		var n int64
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	for _, n := range in.Notes {
		if strings.Contains(n, "belong to no") {
			t.Errorf("unaccounted pages: %s", n)
		}
	}
	st, _ := os.Stat(path)
	if in.TotalBytes != st.Size() || in.PageSize != count("pragma page_size") {
		t.Errorf("total %d, page %d; file %d, page_size %d", in.TotalBytes, in.PageSize, st.Size(), count("pragma page_size"))
	}
	// The deleted range leaves pages on the freelist, unless full
	// auto-vacuum returned them.
	if *in.FreeBytes != count("pragma freelist_count")*in.PageSize ||
		(*in.FreeBytes == 0) != (count("pragma auto_vacuum") == 1) {
		t.Errorf("free %d bytes, freelist_count %d pages, auto_vacuum %d",
			*in.FreeBytes, count("pragma freelist_count"), count("pragma auto_vacuum"))
	}
	var reserved int64
	tables := map[string]result.TableSpace{}
	for i, ts := range in.Tables {
		tables[ts.Name] = ts
		reserved += ts.Reserved
		if ts.Data+*ts.Index+*ts.Unused != ts.Reserved {
			t.Errorf("%s: data %d + index %d + unused %d != reserved %d", ts.Name, ts.Data, *ts.Index, *ts.Unused, ts.Reserved)
		}
		if ts.Reserved%in.PageSize != 0 || ts.Data <= 0 {
			t.Errorf("%s: reserved %d not whole pages, or data %d", ts.Name, ts.Reserved, ts.Data)
		}
		if i > 0 && ts.Reserved > in.Tables[i-1].Reserved {
			t.Errorf("%s listed after the smaller %s", ts.Name, in.Tables[i-1].Name)
		}
		if ts.Name != "sqlite_schema" && ts.Rows != count("select count(*) from "+ts.Name) {
			t.Errorf("%s: %d rows, count(*) says %d", ts.Name, ts.Rows, count("select count(*) from "+ts.Name))
		}
		var ixBytes int64
		for _, ix := range ts.Indexes {
			if ix.Bytes != nil {
				ixBytes += *ix.Bytes
			}
		}
		if ixBytes > ts.Reserved-ts.Data || ixBytes < *ts.Index {
			t.Errorf("%s: index sizes %d outside [index %d, reserved-data %d]", ts.Name, ixBytes, *ts.Index, ts.Reserved-ts.Data)
		}
	}
	// Every page is a table's, an index's or free, but for pointer-map pages.
	ptrmap := int64(0)
	if count("pragma auto_vacuum") != 0 {
		u := in.PageSize
		ptrmap = ((in.TotalBytes/in.PageSize-2)/(u/5+1) + 1) * in.PageSize
	}
	if reserved+*in.FreeBytes+ptrmap != in.TotalBytes {
		t.Errorf("reserved %d + free %d + pointer maps %d != file %d", reserved, *in.FreeBytes, ptrmap, in.TotalBytes)
	}
	if len(in.Tables) != 5 {
		t.Errorf("%d tables, want t, kv, wr, docs, sqlite_schema", len(in.Tables))
	}

	want := map[string]string{
		"t/(rowid)":    "id|-|primary,clustered|-",
		"t/t_grp_desc": "grp DESC,name|-||" + strconv.FormatInt(count("select count(*) from t"), 10),
		"t/t_partial": "name|-|where grp = 0|" +
			strconv.FormatInt(count("select count(*) from t where grp = 0"), 10),
		"t/t_lower":                "(expression)|-||" + strconv.FormatInt(count("select count(*) from t"), 10),
		"kv/sqlite_autoindex_kv_1": "k|-|primary|500",
		"wr/sqlite_autoindex_wr_1": "a,b|c|primary,clustered|-",
		"wr/wr_c":                  "c|a,b||800",
		"docs/docs_title":          "title|-||40",
	}
	got := map[string]string{}
	for _, ts := range in.Tables {
		for _, ix := range ts.Indexes {
			kind := describeIndex(ix)
			k := strings.SplitN(kind, "|", 3)
			kk := k[2]
			if ix.Clustered {
				kk += ",clustered"
			}
			entries := "-"
			if ix.Entries != nil {
				entries = strconv.FormatInt(*ix.Entries, 10)
			}
			got[ts.Name+"/"+ix.Name] = k[0] + "|" + k[1] + "|" + kk + "|" + entries
		}
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("index %s: %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("indexes %v, want %d", got, len(want))
	}
	if n := tables["t"].IndexCount; n != 3 {
		t.Errorf("t: %d indexes, want 3 (the rowid is the table)", n)
	}
	if n := tables["wr"].IndexCount; n != 1 {
		t.Errorf("wr: %d indexes, want 1 (the primary key is the table)", n)
	}
}

// compareDbstat compares the page walk of every b-tree with SQLite's own
// dbstat virtual table, through the sqlite3 program (which has it).
func compareDbstat(t *testing.T, path string) {
	t.Helper()
	cli, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Log("no sqlite3 program: the page walk is not compared with dbstat")
		return
	}
	out, err := exec.Command(cli, "-readonly", path,
		"select s.name, m.rootpage, count(*), sum(s.unused), sum(s.ncell) from dbstat s join "+
			"(select name, rootpage from sqlite_schema union all select 'sqlite_schema', 1) m using (name) "+
			"group by s.name").CombinedOutput()
	if err != nil {
		if bytes.Contains(out, []byte("no such table: dbstat")) {
			t.Logf("sqlite3 program lacks dbstat: the page walk is not compared with it")
			return
		}
		t.Fatalf("sqlite3: %v: %s", err, out)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	sf, err := newSQLiteFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	t.Logf("comparing %d b-trees with dbstat", len(lines))
	if len(lines) < 10 {
		t.Fatalf("dbstat listed only %d b-trees:\n%s", len(lines), out)
	}
	for _, l := range lines {
		var name string
		var root uint32
		var pages, unused, cells int64
		if _, err := fmt.Sscanf(strings.ReplaceAll(l, "|", " "), "%s %d %d %d %d", &name, &root, &pages, &unused,
			&cells); err != nil {
			t.Fatalf("dbstat line %q: %v", l, err)
		}
		s, err := sf.btree(root)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.pages != pages || s.unused != unused || s.cells != cells {
			t.Errorf("%s: walk found %d pages, %d unused bytes, %d cells; dbstat %d, %d, %d",
				name, s.pages, s.unused, s.cells, pages, unused, cells)
		}
	}
}

// fileState is a file's bytes and modification time.
func fileState(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	return fmt.Sprintf("%x %d %s", sha256.Sum256(b), st.Size(), st.ModTime().Format(time.RFC3339Nano))
}

func dirNames(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, e := range es {
		n = append(n, e.Name())
	}
	return strings.Join(n, ",")
}

func TestSQLiteNeverWrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.db")
	makeSQLite(t, path)
	// Neither the file changes (bytes, mtime) nor does the directory gain
	// a journal, -wal or -shm file.
	before, names := fileState(t, path), dirNames(t, dir)
	time.Sleep(10 * time.Millisecond) // so that a write would show in the mtime
	if _, err := SQLite(context.Background(), path, Options{}); err != nil {
		t.Fatal(err)
	}
	if after := fileState(t, path); after != before {
		t.Errorf("file changed:\n before %s\n after  %s", before, after)
	}
	if n := dirNames(t, dir); n != names {
		t.Errorf("directory changed: %s, was %s", n, names)
	}
}

func TestSQLiteWALNoted(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, s := range []string{"pragma journal_mode=wal", "pragma wal_autocheckpoint=0",
		"create table a (x)", "insert into a values (1), (2)"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	before, wal := fileState(t, path), fileState(t, path+"-wal")
	in, err := SQLite(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(in.Notes, "\n"), "-wal holds") {
		t.Errorf("no note of the WAL: %q", in.Notes)
	}
	if fileState(t, path) != before || fileState(t, path+"-wal") != wal {
		t.Error("inspect changed the database or its WAL")
	}
}

func TestSQLiteBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := filepath.Join(dir, "good.db")
	makeSQLite(t, good)
	corrupt, _ := os.ReadFile(good)
	corrupt[4096] = 0x07 // page 2: not a b-tree page type
	duck := makeDuckDB(t, filepath.Join(dir, "d.duckdb"), "create table x (a int)")

	for _, tc := range []struct {
		name, path, want string
		sentinel         error
	}{
		{"missing", filepath.Join(dir, "nope.db"), "no such database file", nil},
		{"directory", dir, "is a directory", nil},
		{"empty", write("empty.db", nil), "file is empty", nil},
		{"text", write("notes.txt", []byte("hello, this is not a database at all; it is a text file of some length\n")),
			"not an SQLite database", ErrNotSQLite},
		{"short", write("short.db", []byte("SQLite format 3\x00")), "not an SQLite database", ErrNotSQLite},
		{"duckdb", duck, "try --engine duckdb", ErrNotSQLite},
		{"corrupt", write("corrupt.db", corrupt), "corrupt", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := SQLite(context.Background(), tc.path, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) ||
				!strings.HasPrefix(err.Error(), "inspecting SQLite database "+tc.path) {
				t.Fatalf("got %v, want an error about %s saying %q", err, tc.path, tc.want)
			}
			if tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
				t.Errorf("%v does not wrap %v", err, tc.sentinel)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "nope.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("inspecting a missing file created it: %v", err)
	}
}

func TestPartialWhere(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		{"CREATE INDEX a ON t(x) WHERE x > 0", "x > 0"},
		{"create index a on t (x, (y + 1)) where (x) is not null and y in (1, 2)", "(x) is not null and y in (1, 2)"},
		{`CREATE INDEX "a(" ON "t)" (x) where x = ')'`, "x = ')'"},
		{"CREATE INDEX a ON [t(] (x)WHERE x", "x"},
		{"CREATE INDEX a ON t(x)", ""},
		{"CREATE INDEX a ON t(x) wherever", ""},
	} {
		if got := partialWhere(tc.sql); got != tc.want {
			t.Errorf("partialWhere(%q) = %q, want %q", tc.sql, got, tc.want)
		}
	}
}

func TestUvarint(t *testing.T) {
	for _, tc := range []struct {
		b []byte
		v uint64
		n int
	}{
		{[]byte{0x00}, 0, 1},
		{[]byte{0x7f}, 127, 1},
		{[]byte{0x81, 0x00}, 128, 2},
		{[]byte{0x82, 0x80, 0x01}, 0x8001, 3},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, ^uint64(0), 9},
		{[]byte{0x81}, 0, 0},
	} {
		if v, n := uvarint(tc.b); v != tc.v || n != tc.n {
			t.Errorf("uvarint(%x) = %d, %d; want %d, %d", tc.b, v, n, tc.v, tc.n)
		}
	}
}
