package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duckdb/duckdb-go/v2"
	_ "github.com/mattn/go-sqlite3"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
)

// inspectFixture builds the same small SQLite file every time (same
// statements, same library: same bytes): a primary key, a DESC index, a
// partial index, a text key, a WITHOUT ROWID table, rows, an overflowing
// payload and a freed range.
func inspectFixture(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shop.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, s := range []string{
		`create table orders (id integer primary key, customer int not null, status text, note blob)`,
		`with recursive n(i) as (select 1 union all select i + 1 from n where i < 2000)
		 insert into orders select i, i % 37, case when i % 10 = 0 then 'open' else 'done' end,
		   zeroblob(case when i = 7 then 6000 else i % 90 end) from n`,
		`create index orders_cust_desc on orders (customer desc, id)`,
		`create index orders_open on orders (customer) where status = 'open'`,
		`create table customers (code text primary key, name text)`,
		`with recursive n(i) as (select 0 union all select i + 1 from n where i < 36)
		 insert into customers select printf('C%03d', i), printf('customer %d', i) from n`,
		`create table totals (customer int, day int, amount int, primary key (customer, day)) without rowid`,
		`insert into totals select customer, id % 5, sum(id) from orders group by 1, 2`,
		`delete from orders where id between 1200 and 1500`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return path
}

func TestInspectSQLiteGolden(t *testing.T) {
	path := inspectFixture(t)
	dir := filepath.Dir(path)
	for _, tc := range []struct{ golden, format string }{
		{"inspect-sqlite.txt", ""},
		{"inspect-sqlite.json", "--json"},
		{"inspect-sqlite.csv", "--csv"},
	} {
		args := []string{"inspect", "--db", path}
		if tc.format != "" {
			args = append(args, tc.format)
		}
		out, _, err := runCLI(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, tc.golden, strings.ReplaceAll(out, dir, "$DIR"))
	}
}

func TestInspectTextSortsAndAddsUp(t *testing.T) {
	path := inspectFixture(t)
	out, _, err := runCLI(t, "inspect", "--engine", "sqlite", "--db", path, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var in result.Inspection
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatal(err)
	}
	if len(in.Tables) != 4 || in.Tables[0].Name != "orders" || in.Tables[0].Rows != 1699 {
		t.Fatalf("tables %+v, want orders (1699 rows) first of 4", in.Tables)
	}
	var sum int64
	for _, ts := range in.Tables {
		sum += ts.Reserved
		if ts.Data+*ts.Index+*ts.Unused != ts.Reserved {
			t.Errorf("%s: data + index + unused != reserved", ts.Name)
		}
	}
	if sum+*in.FreeBytes != in.TotalBytes {
		t.Errorf("tables %d + free %d != file %d", sum, *in.FreeBytes, in.TotalBytes)
	}
}

func TestInspectBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{}, []string{"give --db FILE"}},
		{[]string{"--db", "a.db", "--dsn", "postgres://x@y/z"}, []string{"one database"}},
		{[]string{"--engine", "oracle", "--db", "a.db", "--json", "--csv"},
			[]string{`-engine: "oracle"`, "choose one output format"}},
		{[]string{"--engine", "postgres", "--db", "a.db"}, []string{"give --dsn"}},
		{[]string{"--engine", "duckdb", "--dsn", "postgres://x@y/z"}, []string{"give --db"}},
		{[]string{"--db", "a.db", "--schema", "s"}, []string{"only PostgreSQL"}},
		{[]string{"--db", filepath.Join(dir, "missing.db")}, []string{"no such database file"}},
		{[]string{"--engine", "duckdb", "--db", filepath.Join(dir, "missing.duckdb")}, []string{"no such database file"}},
		{[]string{"--dsn", "postgres://alice:s3cretpw@127.0.0.1:1/shop?connect_timeout=5"},
			[]string{"inspecting PostgreSQL", "alice:xxxxx@"}},
	} {
		_, _, err := runCLI(t, append([]string{"inspect"}, tc.args...)...)
		if err == nil {
			t.Errorf("inspect %v: no error", tc.args)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("inspect %v: %v; want it to say %q", tc.args, err, w)
			}
		}
		if strings.Contains(err.Error(), "s3cretpw") {
			t.Errorf("inspect %v: error shows the password: %v", tc.args, err)
		}
	}
}

func TestInspectTellsEngineFromFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	out, _, err := runCLI(t, "inspect", "--db", inspectFixture(t))
	if err != nil || !strings.HasPrefix(out, "sqlite database ") {
		t.Errorf("SQLite file without --engine: %v\n%s", err, out)
	}
	if err := os.WriteFile(path, []byte("just some text, long enough to be read as a header by anyone\n"),
		0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = runCLI(t, "inspect", "--db", path)
	if err == nil || !strings.Contains(err.Error(), "neither SQLite nor DuckDB") {
		t.Errorf("text file without --engine: %v", err)
	}
}

func TestInspectPostgresText(t *testing.T) {
	ctx := context.Background()
	s := pg.Server(t)
	c, err := engine.ConnectPG(ctx, s.DSN(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		// In public by name: once a run has made numalab's schema, the
		// default search_path ("$user", public) would put them there.
		"drop table if exists public.items", // left by an earlier -count round
		"create table public.items (id int primary key, price numeric, name text)",
		"insert into public.items select i, i * 1.5, 'item ' || i from generate_series(1, 3000) i",
		"create index items_price on public.items (price desc) include (name) where price > 100",
		"analyze public.items",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	c.Close(ctx)
	out, _, err := runCLI(t, "inspect", "--dsn", s.DSN(), "--schema", "public")
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out)
	for _, w := range []string{
		"postgres database ", "usage counters since never (statistics reset), read at ",
		"LAST ANALYZE", "public.items", "~3000",
		"items_pkey", "primary", "items_price", "price DESC", "name", "price > 100::numeric",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q", w)
		}
	}
}

func TestInspectDuckDBText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.duckdb")
	c, err := duckdb.NewConnector(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	for _, q := range []string{
		"create table sales (id int primary key, region varchar, amount double)",
		"insert into sales select i, 'r' || (i % 7), i * 0.5 from range(50000) r(i)",
		"create index sales_region on sales (region)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	// No --engine: the file's magic bytes say DuckDB.
	out, _, err := runCLI(t, "inspect", "--db", path, "--exact-rows")
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out)
	for _, w := range []string{"duckdb database ", "main.sales", "50000", "sales_id_pkey", "sales_region",
		"no size per index"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q", w)
		}
	}
}
