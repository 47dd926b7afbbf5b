package tpch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/mariaserver"
	"github.com/numalab/numalab/internal/mariaserver/mytest"
	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/pgserver/pgtest"
)

// pg is the managed PostgreSQL server the tests of this package share; my
// the MariaDB one.
var (
	pg = pgtest.New(pgserver.Config{SharedBuffers: 256 << 20})
	my = mytest.New(mariaserver.Config{BufferPool: 128 << 20})
)

func TestMain(m *testing.M) { os.Exit(pg.Main(m, stopBenchServer, stopMariaDB)) }

// stopMariaDB stops the shared MariaDB server, if it started, and says on
// stderr if that failed.
func stopMariaDB() {
	if err := my.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the shared MariaDB server:", err)
	}
}

// openNew opens a new, empty database of engine name: a file in a
// temporary directory, or the schema named schema on the shared server.
func openNew(tb testing.TB, name, schema string) engine.Engine {
	tb.Helper()
	switch name {
	case dialectPostgres:
		return openPG(tb, pg.Server(tb).DSN(), schema)
	case dialectMariaDB:
		return openMy(tb, my.Server(tb).DSN(), schema)
	case dialectDuckDB:
		return openEngine(tb, name, engine.Options{Create: true, Path: filepath.Join(tb.TempDir(), "tpch.duckdb")})
	default:
		return openEngine(tb, name, engine.Options{Create: true, Path: filepath.Join(tb.TempDir(), "tpch.sqlite")})
	}
}

// openPG opens the schema named schema on the server at dsn; the tpch
// tables in it are dropped at the test's end.
func openPG(tb testing.TB, dsn, schema string) engine.Engine {
	tb.Helper()
	eng := openEngine(tb, dialectPostgres, engine.Options{DSN: dsn, Schema: schema})
	tb.Cleanup(func() {
		for _, t := range tables {
			eng.DB().Exec("DROP TABLE IF EXISTS " + t.name)
		}
	})
	return eng
}

// openMy opens the database named schema on the MariaDB server at dsn;
// the database is dropped at the test's end.
func openMy(tb testing.TB, dsn, schema string) engine.Engine {
	tb.Helper()
	eng := openEngine(tb, dialectMariaDB, engine.Options{DSN: dsn, Schema: schema})
	tb.Cleanup(func() { eng.DB().Exec("DROP DATABASE IF EXISTS " + schema) })
	return eng
}

// openEngine opens engine name with opt, closed at the test's end.
func openEngine(tb testing.TB, name string, opt engine.Options) engine.Engine {
	tb.Helper()
	eng, err := engine.Open(context.Background(), name, opt)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { eng.Close() })
	return eng
}

// answer runs query n on eng and returns its rows, each value as text: a
// number as a float64's %v, a date as 2006-01-02, NULL as "NULL".
func answer(ctx context.Context, tb testing.TB, eng engine.Engine, n int, seed int64, sf float64) (Query, [][]any) {
	tb.Helper()
	q, err := QueryFor(n, eng.Name(), seed, sf)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := eng.Connect(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	var rows [][]any
	err = c.Query(ctx, q.SQL, nil, func(vals []any) error {
		row := make([]any, len(vals))
		for i, v := range vals {
			switch x := v.(type) {
			case int64:
				row[i] = float64(x)
			case time.Time:
				row[i] = x.Format(time.DateOnly)
			default:
				row[i] = v
			}
		}
		rows = append(rows, row)
		return nil
	})
	if err != nil {
		tb.Fatalf("Q%d on %s: %v\n%s", n, eng.Name(), err, q.SQL)
	}
	return q, rows
}

// Numbers agree when they differ by at most a relative relTol or an
// absolute absTol (a cent): PostgreSQL and DuckDB sum exact decimals,
// SQLite doubles, and the averages and ratios of the three round
// differently in the last digits.
const (
	relTol = 1e-6
	absTol = 0.01
)

func sameValue(a, b any) bool {
	fa, oka := a.(float64)
	fb, okb := b.(float64)
	if oka && okb {
		return math.Abs(fa-fb) <= max(absTol, relTol*max(math.Abs(fa), math.Abs(fb)))
	}
	return a == b
}

// TestQueriesAgreeAcrossEngines loads SF 0.01 into PostgreSQL, DuckDB,
// SQLite and, where its server is installed, MariaDB, and checks that the
// 22 queries, with the same parameters, return the same rows on all: in
// order where the query has an ORDER BY, numbers within relTol/absTol.
// On MariaDB it also checks Q1's answer digit for digit against
// PostgreSQL's (q1Identical).
func TestQueriesAgreeAcrossEngines(t *testing.T) {
	ctx := context.Background()
	const sf, seed = 0.01, 7
	others := []string{dialectDuckDB, dialectSQLite}
	t.Run("mariadb installed", func(t *testing.T) {
		my.Server(t) // skips when MariaDB is not installed
		others = append(others, dialectMariaDB)
	})
	engs := map[string]engine.Engine{}
	for _, name := range append([]string{dialectPostgres}, others...) {
		eng := openNew(t, name, "tpch_answers")
		if _, err := Load(ctx, eng, Config{SF: sf, Seed: seed, Workers: 2}); err != nil {
			t.Fatal(err)
		}
		checkSizeEstimate(t, eng, sf)
		engs[name] = eng
	}
	nonEmpty := 0
	for n := 1; n <= Queries; n++ {
		q, want := answer(ctx, t, engs[dialectPostgres], n, seed, sf)
		if len(want) > 0 && want[0][0] != nil {
			nonEmpty++
		}
		t.Logf("Q%d: %d rows, %s", n, len(want), strings.Join(q.Params, " "))
		for _, name := range others {
			_, got := answer(ctx, t, engs[name], n, seed, sf)
			if !q.Ordered {
				sortRows(want)
				sortRows(got)
			}
			if diff := diffRows(want, got); diff != "" {
				t.Errorf("Q%d: %s differs from postgres: %s", n, name, diff)
			}
		}
	}
	// At SF 0.01 a few queries may find nothing for their parameters;
	// most must, or the comparison proves little.
	if nonEmpty < 18 {
		t.Errorf("%d of 22 queries returned rows; want at least 18", nonEmpty)
	}
	if engs[dialectMariaDB] != nil {
		t.Run("Q1 on mariadb identical to postgres", func(t *testing.T) {
			q1Identical(t, engs[dialectPostgres], engs[dialectMariaDB], seed, sf)
		})
	}
}

// q1Identical runs Q1 on PostgreSQL and on MariaDB, both loaded with the
// same seed and scale, reads every value as the server's own decimal
// text, and wants the same rows with: the group keys, counts and sums
// (exact decimals on both) equal exactly; each average equal to
// PostgreSQL's rounded to MariaDB's scale (MariaDB's AVG of a DECIMAL
// keeps 4 more digits than its argument, div_precision_increment;
// PostgreSQL's keeps 16 or more).
func q1Identical(t *testing.T, pg, my engine.Engine, seed int64, sf float64) {
	ctx := context.Background()
	text := func(eng engine.Engine) [][]string {
		q, err := QueryFor(1, eng.Name(), seed, sf)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := eng.DB().QueryContext(ctx, q.SQL)
		if err != nil {
			t.Fatalf("Q1 on %s: %v", eng.Name(), err)
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		var out [][]string
		for rows.Next() {
			row := make([]string, len(cols))
			ptrs := make([]any, len(cols))
			for i := range row {
				ptrs[i] = &row[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("Q1 on %s: %v", eng.Name(), err)
			}
			out = append(out, row)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("Q1 on %s: %v", eng.Name(), err)
		}
		return out
	}
	want, got := text(pg), text(my)
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("Q1: mariadb gave %d rows, postgres %d; want the same, at least one", len(got), len(want))
	}
	// Q1's columns: the two flags, sum_qty, sum_base_price,
	// sum_disc_price, sum_charge, avg_qty, avg_price, avg_disc,
	// count_order.
	avg := map[int]bool{6: true, 7: true, 8: true}
	for i := range want {
		t.Logf("Q1 row %d: postgres %v; mariadb %v", i, want[i], got[i])
		for j := range want[i] {
			w, g := want[i][j], got[i][j]
			if j < 2 {
				if w != g {
					t.Errorf("Q1 row %d column %d: mariadb %q, postgres %q", i, j, g, w)
				}
				continue
			}
			wr, ok1 := new(big.Rat).SetString(w)
			gr, ok2 := new(big.Rat).SetString(g)
			if !ok1 || !ok2 {
				t.Fatalf("Q1 row %d column %d: %q and %q are not both decimals", i, j, g, w)
			}
			if avg[j] {
				scale := 0
				if k := strings.IndexByte(g, '.'); k >= 0 {
					scale = len(g) - k - 1
				}
				wr = roundRat(wr, scale)
			}
			if wr.Cmp(gr) != 0 {
				t.Errorf("Q1 row %d column %d: mariadb %s, postgres %s", i, j, g, w)
			}
		}
	}
}

// roundRat rounds r to scale decimal digits, halves away from zero, as
// both servers round decimals.
func roundRat(r *big.Rat, scale int) *big.Rat {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
	x := new(big.Rat).Mul(r, new(big.Rat).SetInt(p))
	neg := x.Sign() < 0
	x.Abs(x)
	x.Add(x, big.NewRat(1, 2))
	q := new(big.Int).Quo(x.Num(), x.Denom())
	if neg {
		q.Neg(q)
	}
	return new(big.Rat).SetFrac(q, p)
}

// TestOpenMariaDB opens tpch on the shared MariaDB server: a database
// holding someone's orders table is refused and left as it was; then in
// numalab's own database a load at SF 0.01 is marked, and a second Open
// of the same SF and seed reuses it.
func TestOpenMariaDB(t *testing.T) {
	ctx := context.Background()
	dsn := my.Server(t).DSN()
	eng := openNew(t, dialectMariaDB, "tpch_foreign")
	if _, err := eng.DB().Exec("CREATE TABLE orders (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.DB().Exec("INSERT INTO orders VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctx,
		OpenConfig{Engine: dialectMariaDB, Options: engine.Options{DSN: dsn, Schema: "tpch_foreign"}, SF: 0.01, Seed: 1})
	if !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), "orders") {
		t.Fatalf("opening a database with someone's orders table: %v, want ErrForeign naming it", err)
	}
	var x int
	if err := eng.DB().QueryRow("SELECT x FROM orders").Scan(&x); err != nil || x != 7 {
		t.Errorf("the refused table changed: %v, %d", err, x)
	}
	openNew(t, dialectMariaDB, "tpch_open") // dropped at the end
	cfg := OpenConfig{Engine: dialectMariaDB, Options: engine.Options{DSN: dsn, Schema: "tpch_open"}, SF: 0.01, Seed: 1}
	for i, wantReused := range []bool{false, true} {
		db, err := Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		err = db.Eng.DB().QueryRow("SELECT count(*) FROM lineitem").Scan(&n)
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		if db.Reused != wantReused || n == 0 || (!wantReused && n != db.Stats.Rows["lineitem"]) {
			t.Errorf("open %d: reused %v (want %v), %d lineitems (loaded %d)",
				i+1, db.Reused, wantReused, n, db.Stats.Rows["lineitem"])
		}
	}
}

// checkSizeEstimate checks EstimatedBytes against the size of a load: at
// least it, at most twice.
func checkSizeEstimate(t *testing.T, eng engine.Engine, sf float64) {
	t.Helper()
	ctx := context.Background()
	var size int64
	switch eng.Name() {
	case dialectPostgres:
		err := eng.DB().QueryRowContext(ctx, `SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'`).Scan(&size)
		if err != nil {
			t.Fatal(err)
		}
	case dialectMariaDB:
		err := eng.DB().QueryRowContext(ctx, `SELECT sum(data_length + index_length) FROM information_schema.tables
			WHERE table_schema = database()`).Scan(&size)
		if err != nil {
			t.Fatal(err)
		}
	default:
		if eng.Name() == dialectDuckDB {
			if _, err := eng.DB().ExecContext(ctx, "CHECKPOINT"); err != nil {
				t.Fatal(err)
			}
		}
		fi, err := os.Stat(eng.Path())
		if err != nil {
			t.Fatal(err)
		}
		size = fi.Size()
	}
	est, err := EstimatedBytes(sf, eng.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s at SF %g: %d bytes loaded, estimated %d", eng.Name(), sf, size, est)
	if size > est || est > 2*size {
		t.Errorf("%s at SF %g: %d bytes loaded, estimated %d", eng.Name(), sf, size, est)
	}
}

func sortRows(rows [][]any) {
	sort.Slice(rows, func(i, j int) bool { return fmt.Sprint(rows[i]) < fmt.Sprint(rows[j]) })
}

func diffRows(want, got [][]any) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if len(want[i]) != len(got[i]) {
			return fmt.Sprintf("row %d: %d columns, want %d", i, len(got[i]), len(want[i]))
		}
		for j := range want[i] {
			if !sameValue(want[i][j], got[i][j]) {
				return fmt.Sprintf("row %d column %d: %v (%T), want %v (%T)", i, j, got[i][j], got[i][j], want[i][j], want[i][j])
			}
		}
	}
	return ""
}
