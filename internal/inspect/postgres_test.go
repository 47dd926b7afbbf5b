package inspect

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/pgserver/pgtest"
	"github.com/numalab/numalab/internal/result"
)

// pg is the managed PostgreSQL server the tests of this package share.
var pg = pgtest.New(pgserver.Config{SharedBuffers: 32 << 20})

func TestMain(m *testing.M) { os.Exit(pg.Main(m, func() { my.Stop() })) }

// pgExec runs statements on a new connection.
func pgExec(t *testing.T, dsn string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	c, err := engine.ConnectPG(ctx, dsn, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func TestPostgres(t *testing.T) {
	s := pg.Server(t)
	dsn := s.DSN()
	pgExec(t, dsn,
		"drop schema if exists shop cascade", // left by an earlier -count round
		"drop table if exists public.other",
		"create schema shop",
		`create table shop.orders (id int primary key, customer int not null, placed timestamptz not null,
			status text not null, note text)`,
		`insert into shop.orders select i, i % 97, timestamptz '2026-01-01' + i * interval '1 minute',
			case when i % 10 = 0 then 'open' else 'done' end, repeat('n', i % 300) from generate_series(1, 5000) i`,
		"create index orders_placed_desc on shop.orders (placed desc, customer)",
		"create index orders_open on shop.orders (customer) where status = 'open'",
		"create unique index orders_cust_incl on shop.orders (customer, id) include (status, placed)",
		"create table shop.empty (k text)",
		"create table public.other (x int)",
		"insert into public.other select generate_series(1, 10)",
		"analyze shop.orders",
		// Two scans of orders_open, which the planner must use.
		"set enable_seqscan = off",
		"select count(*) from shop.orders where status = 'open' and customer = 3",
		"select count(*) from shop.orders where status = 'open' and customer = 4",
	)
	// Statistics reach the shared counters when a backend ends or every
	// second or so; wait for them.
	deadline := time.Now().Add(10 * time.Second)
	var in *result.Inspection
	var err error
	for {
		in, err = Postgres(context.Background(), dsn, Options{Schema: "shop"})
		if err != nil {
			t.Fatal(err)
		}
		if ix := findIndex(in, "orders", "orders_open"); ix != nil && ix.Usage != nil && ix.Usage.Scans >= 2 ||
			time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if b, _ := json.MarshalIndent(in, "", " "); testing.Verbose() {
		t.Log(string(b))
	}
	if in.Engine != "postgres" || in.PageSize != 8192 || in.TotalBytes <= 0 || in.StatsAsOf == nil {
		t.Errorf("header: engine %q, page %d, total %d, as of %v", in.Engine, in.PageSize, in.TotalBytes, in.StatsAsOf)
	}
	if len(in.Tables) != 2 {
		t.Fatalf("--schema shop: got %d tables, want orders and empty", len(in.Tables))
	}
	o := in.Tables[0]
	if o.Name != "orders" || o.Schema != "shop" {
		t.Fatalf("largest table is %s.%s, want shop.orders", o.Schema, o.Name)
	}
	// Analyzed: reltuples is exact for a table this small.
	if o.Rows != 5000 || o.RowsExact {
		t.Errorf("orders: rows %d (exact %v), want the estimate 5000", o.Rows, o.RowsExact)
	}
	if o.LastAnalyze == nil {
		t.Error("orders: no last_analyze after ANALYZE")
	}
	if o.Index == nil || o.Data+*o.Index != o.Reserved {
		t.Errorf("orders: data %d + index %v != reserved %d", o.Data, o.Index, o.Reserved)
	}
	if o.Unused != nil {
		t.Errorf("orders: unused %d, want unknown", *o.Unused)
	}
	if o.IndexCount != 4 || len(o.Indexes) != 4 {
		t.Fatalf("orders: %d indexes, want 4: %+v", o.IndexCount, o.Indexes)
	}
	var sum int64
	for _, ix := range o.Indexes {
		sum += *ix.Bytes
	}
	if sum != *o.Index {
		t.Errorf("orders: index sizes sum to %d, pg_indexes_size is %d", sum, *o.Index)
	}
	want := map[string]string{
		"orders_pkey":        "id|-|primary",
		"orders_placed_desc": "placed DESC,customer|-|",
		"orders_open":        "customer|-|where status = 'open'::text",
		"orders_cust_incl":   "customer,id|status,placed|unique",
	}
	for _, ix := range o.Indexes {
		if got := describeIndex(ix); got != want[ix.Name] {
			t.Errorf("index %s: %s, want %s", ix.Name, got, want[ix.Name])
		}
	}
	if o.Indexes[0].Name != "orders_pkey" {
		t.Errorf("primary key listed first? got %s", o.Indexes[0].Name)
	}
	if ix := findIndex(in, "orders", "orders_open"); ix.Usage == nil || ix.Usage.Scans < 2 || ix.Usage.TupRead == 0 {
		t.Errorf("orders_open usage %+v, want at least 2 scans reading entries", ix.Usage)
	}
	if ix := findIndex(in, "orders", "orders_placed_desc"); ix.Usage == nil || ix.Usage.Scans != 0 {
		t.Errorf("orders_placed_desc usage %+v, want 0 scans", ix.Usage)
	}
	e := in.Tables[1]
	if e.Name != "empty" || e.Rows != 0 || !e.RowsExact || e.RowBytes != nil {
		t.Errorf("never-analyzed empty table: %+v, want 0 counted rows", e)
	}

	// Every schema, rows counted.
	all, err := Postgres(context.Background(), dsn, Options{ExactRows: true})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int64{}
	for _, tb := range all.Tables {
		names[tb.Schema+"."+tb.Name] = tb.Rows
		if !tb.RowsExact {
			t.Errorf("%s.%s: rows not exact with ExactRows", tb.Schema, tb.Name)
		}
	}
	if names["shop.orders"] != 5000 || names["public.other"] != 10 || len(names) != 3 {
		t.Errorf("every schema, exact rows: %v", names)
	}
}

// describeIndex is "key|include|kind" for comparing.
func describeIndex(ix result.IndexSpace) string {
	var key []string
	for _, c := range ix.Columns {
		k := c.Name
		if c.Desc {
			k += " DESC"
		}
		key = append(key, k)
	}
	inc := "-"
	if len(ix.Include) > 0 {
		inc = strings.Join(ix.Include, ",")
	}
	kind := ""
	switch {
	case ix.Primary:
		kind = "primary"
	case ix.Unique:
		kind = "unique"
	}
	if ix.Where != "" {
		kind += "where " + ix.Where
	}
	return strings.Join(key, ",") + "|" + inc + "|" + kind
}

func findIndex(in *result.Inspection, table, name string) *result.IndexSpace {
	for i := range in.Tables {
		if in.Tables[i].Name != table {
			continue
		}
		for j := range in.Tables[i].Indexes {
			if in.Tables[i].Indexes[j].Name == name {
				return &in.Tables[i].Indexes[j]
			}
		}
	}
	return nil
}

func TestPostgresNoSuchSchema(t *testing.T) {
	s := pg.Server(t)
	_, err := Postgres(context.Background(), s.DSN(), Options{Schema: "nope"})
	if err == nil || !strings.Contains(err.Error(), `no schema "nope"`) {
		t.Fatalf("got %v, want no schema \"nope\"", err)
	}
}

func TestPostgresUnreachableHidesPassword(t *testing.T) {
	// Port 1 on loopback: nothing listens there.
	for _, dsn := range []string{
		"postgres://alice:s3cretpw@127.0.0.1:1/shop?connect_timeout=5",
		"host=127.0.0.1 port=1 user=alice password=s3cretpw dbname=shop connect_timeout=5",
	} {
		_, err := Postgres(context.Background(), dsn, Options{})
		if err == nil {
			t.Fatalf("%s: no error", dsn)
		}
		msg := err.Error()
		if strings.Contains(msg, "s3cretpw") {
			t.Errorf("error shows the password: %s", msg)
		}
		if !strings.Contains(msg, "inspecting PostgreSQL") || !strings.Contains(msg, "127.0.0.1") {
			t.Errorf("error does not say what failed where: %s", msg)
		}
		var target interface{ Unwrap() error }
		if !errors.As(err, &target) {
			t.Errorf("error does not wrap the cause: %s", msg)
		}
	}
}
