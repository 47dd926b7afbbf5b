package transtats

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/mariaserver"
	"github.com/numalab/numalab/internal/mariaserver/mytest"
	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/pgserver/pgtest"
)

// pg is the managed PostgreSQL server the tests of this package share; my
// the MariaDB one.
var (
	pg = pgtest.New(pgserver.Config{SharedBuffers: 128 << 20})
	my = mytest.New(mariaserver.Config{BufferPool: 128 << 20})
)

func TestMain(m *testing.M) { os.Exit(pg.Main(m, stopMariaDB)) }

// stopMariaDB stops the shared MariaDB server, if it started, and says on
// stderr if that failed.
func stopMariaDB() {
	if err := my.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the shared MariaDB server:", err)
	}
}

// oracle computes P1 and P2 from RowAt alone, with no SQL.
type oracle struct {
	n, rate    int64
	total, cnt map[string]int64 // per server_config
}

func newOracle(n, rate int64) *oracle {
	o := &oracle{n: n, rate: rate, total: map[string]int64{}, cnt: map[string]int64{}}
	for i := int64(1); i <= n; i++ {
		r := RowAt(i, rate)
		o.total[r.ServerConfig] += r.ResultsetSize
		o.cnt[r.ServerConfig]++
	}
	return o
}

func (o *oracle) p1() Result {
	groups := map[string]bool{}
	for i := int64(1); i <= o.n; i++ {
		r := RowAt(i, o.rate)
		groups[fmt.Sprint(r.ServerConfig, r.ThreadName, r.TranType, r.TranStatus, r.Users, r.CPUs)] = true
	}
	return Result{Groups: int64(len(groups)), Rows: o.n}
}

func (o *oracle) p2(sec int64) Result {
	groups := map[string]bool{}
	var rows int64
	for i := int64(1); i <= o.n; i++ {
		r := RowAt(i, o.rate)
		if r.Begin != sec {
			continue
		}
		// resultset_size ≤ avg(resultset_size of its server_config)
		if float64(r.ResultsetSize) <= float64(o.total[r.ServerConfig])/float64(o.cnt[r.ServerConfig]) {
			rows++
			groups[fmt.Sprint(r.ServerConfig, r.ThreadName, r.TranType, r.TranStatus, r.Users, r.CPUs)] = true
		}
	}
	return Result{Groups: int64(len(groups)), Rows: rows}
}

// openTest loads (or reuses) n rows on an engine.
func openTest(t *testing.T, d string, dir string, n int64) *DB {
	t.Helper()
	cfg := Config{EngineName: d, Rows: n}
	switch d {
	case Postgres:
		cfg.Engine.DSN = pg.Server(t).DSN()
	case MariaDB:
		cfg.Engine.DSN = my.Server(t).DSN()
	default:
		cfg.Engine.Path = filepath.Join(dir, DefaultPath(d, n))
	}
	db, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%s: %v", d, err)
	}
	t.Cleanup(func() { db.Close() })
	t.Logf("%s: %d rows loaded by %s in %v (%v with the rest): %.0f rows/s (reused %v)",
		d, db.Load.Rows, db.Load.Method, db.Load.Insert, db.Load.Total, db.Load.RowsPerSecond, db.Load.Reused)
	return db
}

// TestEnginesAgree loads N = 100,000 on SQLite, DuckDB and PostgreSQL and
// checks that P1 and P2 at several t give the same results everywhere, and
// the results an independent Go computation gives.
func TestEnginesAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 100,000 rows into three engines")
	}
	const n = 100_000
	ctx := context.Background()
	dir := t.TempDir()
	o := newOracle(n, DefaultRate)
	secs := []int64{0, 1, 7, 13, 19, 20} // 20 is the last second: row 100,000 alone
	want := map[string]Result{P1: o.p1()}
	for _, s := range secs {
		want[fmt.Sprintf("P2(%d)", s)] = o.p2(s)
	}
	if want[P1] != (Result{Groups: 600, Rows: n}) {
		t.Fatalf("oracle P1 = %+v, want 600 groups of %d rows", want[P1], n)
	}
	for _, d := range []string{SQLite, DuckDB, Postgres} {
		t.Run(string(d), func(t *testing.T) {
			db := openTest(t, d, dir, n)
			if first, last := db.Seconds(); first != 0 || last != 20 {
				t.Errorf("Seconds() = %d, %d, want 0, 20", first, last)
			}
			c, err := db.Engine().Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			got, err := db.Run(ctx, c, P1, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got != want[P1] {
				t.Errorf("P1 = %+v, want %+v", got, want[P1])
			}
			for _, s := range secs {
				got, err := db.Run(ctx, c, P2, s)
				if err != nil {
					t.Fatal(err)
				}
				if w := want[fmt.Sprintf("P2(%d)", s)]; got != w {
					t.Errorf("P2(%d) = %+v, want %+v", s, got, w)
				}
			}
			for _, q := range Queries {
				plan, err := db.Explain(ctx, q, 7)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(strings.ToLower(plan), "scan") {
					t.Errorf("%s plan has no scan:\n%s", q, plan)
				}
				t.Logf("%s plan:\n%s", q, plan)
			}
		})
	}
	// Not a vacuous check: the windows hold rows that pass and rows that
	// do not.
	if r := want["P2(7)"]; r.Rows == 0 || r.Rows >= DefaultRate {
		t.Errorf("oracle P2(7) = %+v: want some but not all of the window's %d rows", r, DefaultRate)
	}
}

// TestMariaDBAgrees loads 20,000 rows on the shared MariaDB server and on
// DuckDB and checks that P1 and P2 at every second give the same results
// on both, and the results an independent Go computation gives; then that
// a second open reuses the load, and that MariaDB refuses DOP 2.
func TestMariaDBAgrees(t *testing.T) {
	const n = 20_000
	ctx := context.Background()
	my.Server(t) // skips when MariaDB is not installed
	o := newOracle(n, DefaultRate)
	engs := map[string]*DB{}
	for _, d := range []string{DuckDB, MariaDB} {
		engs[d] = openTest(t, d, t.TempDir(), n)
	}
	first, last := engs[MariaDB].Seconds()
	if first != 0 || last != 4 {
		t.Fatalf("Seconds() = %d, %d, want 0, 4", first, last)
	}
	run := func(d string, q string, sec int64) Result {
		t.Helper()
		c, err := engs[d].Engine().Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		r, err := engs[d].Run(ctx, c, q, sec)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		return r
	}
	if got, want := run(MariaDB, P1, 0), o.p1(); got != want || got != run(DuckDB, P1, 0) {
		t.Errorf("P1 on mariadb = %+v, want %+v (the oracle's) and DuckDB's", got, want)
	}
	for sec := first; sec <= last; sec++ {
		if got, want := run(MariaDB, P2, sec), o.p2(sec); got != want || got != run(DuckDB, P2, sec) {
			t.Errorf("P2(%d) on mariadb = %+v, want %+v (the oracle's) and DuckDB's", sec, got, want)
		}
	}
	for _, q := range Queries {
		plan, err := engs[MariaDB].Explain(ctx, q, 2)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s plan on mariadb:\n%s", q, plan)
		// MariaDB 10 gives no cost; MariaDB 11 and MySQL do.
		p, err := engs[MariaDB].Cost(ctx, q, 2)
		if err != nil || p.Shape == "" || (p.CostUnit == "") != (p.Cost == 0) {
			t.Errorf("%s cost on mariadb: %+v, %v; want a shape, and a cost with its unit or neither", q, p, err)
		}
		t.Logf("%s cost on mariadb: %v (%q)", q, p.Cost, p.CostUnit)
	}
	if err := engs[MariaDB].SetDOP(ctx, 2); err == nil {
		t.Errorf("SetDOP(2) on mariadb: no error, want a refusal")
	}
	engs[MariaDB].Close()
	again := openTest(t, MariaDB, "", n)
	if !again.Load.Reused || again.Load.Rows != n {
		t.Errorf("second open on mariadb: %+v, want the first load, reused", again.Load)
	}
}

// TestReuse checks that a complete file is reused, a file of another size
// is loaded again, and a foreign file is refused and left alone.
func TestReuse(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "t.sqlite")
	open := func(n int64) (*DB, error) {
		return Open(ctx, Config{EngineName: SQLite, Rows: n, Engine: engine.Options{Path: path}})
	}
	db, err := open(2000)
	if err != nil {
		t.Fatal(err)
	}
	if db.Load.Reused || db.Load.Rows != 2000 || db.Load.RowsPerSecond <= 0 {
		t.Errorf("first open: %+v, want a fresh load of 2000 rows with a rate", db.Load)
	}
	db.Close()
	db, err = open(2000)
	if err != nil {
		t.Fatal(err)
	}
	if !db.Load.Reused || db.Load.Rows != 2000 || db.Load.RowsPerSecond <= 0 {
		t.Errorf("second open: %+v, want the first load's figures, reused", db.Load)
	}
	db.Close()
	db, err = open(3000)
	if err != nil {
		t.Fatal(err)
	}
	if db.Load.Reused || db.Load.Rows != 3000 {
		t.Errorf("open with another N: %+v, want a new load of 3000 rows", db.Load)
	}
	c, err := db.Engine().Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := db.Run(ctx, c, P1, 0); err != nil || r.Rows != 3000 {
		t.Errorf("P1 after reload = %+v, %v, want 3000 rows", r, err)
	}
	c.Close()
	db.Close()

	foreign := filepath.Join(dir, "mine.sqlite")
	if err := os.WriteFile(foreign, []byte("not a database, and not numalab's"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, Config{EngineName: SQLite, Rows: 1000, Engine: engine.Options{Path: foreign}})
	if err == nil ||
		!strings.Contains(err.Error(), "refusing to overwrite") && !strings.Contains(err.Error(), "cannot open") {
		t.Errorf("opening a foreign file: err = %v, want a refusal", err)
	}
	if b, _ := os.ReadFile(foreign); string(b) != "not a database, and not numalab's" {
		t.Errorf("the foreign file was changed")
	}
}

// TestOpenBadInput checks the errors for sizes and engines.
func TestOpenBadInput(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{EngineName: SQLite, Rows: -1, Engine: engine.Options{Path: "x"}}, "not between 1 and 200000000"},
		{Config{EngineName: "oracle", Engine: engine.Options{Path: "x"}}, `unknown engine "oracle"`},
		{Config{EngineName: DuckDB}, "no duckdb database file given"},
	} {
		_, err := Open(ctx, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%+v) = %v, want an error with %q", c.cfg, err, c.want)
		}
	}
}
