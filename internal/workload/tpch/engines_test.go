package tpch

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/pgserver/pgtest"
)

// pg is the managed PostgreSQL server the tests of this package share.
var pg = pgtest.New(pgserver.Config{SharedBuffers: 256 << 20})

func TestMain(m *testing.M) { os.Exit(pg.Main(m, stopBenchServer)) }

// openNew opens a new, empty database of engine name: a file in a
// temporary directory, or the schema named schema on the shared server.
func openNew(tb testing.TB, name, schema string) engine.Engine {
	tb.Helper()
	switch name {
	case dialectPostgres:
		return openPG(tb, pg.Server(tb).DSN(), schema)
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

// TestQueriesAgreeAcrossEngines loads SF 0.01 into PostgreSQL, DuckDB and
// SQLite and checks that the 22 queries, with the same parameters, return
// the same rows on all three: in order where the query has an ORDER BY,
// numbers within relTol/absTol.
func TestQueriesAgreeAcrossEngines(t *testing.T) {
	ctx := context.Background()
	const sf, seed = 0.01, 7
	engs := map[string]engine.Engine{}
	for _, name := range []string{dialectPostgres, dialectDuckDB, dialectSQLite} {
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
		for _, name := range []string{dialectDuckDB, dialectSQLite} {
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
