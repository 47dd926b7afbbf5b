package tpch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/numalab/numalab/internal/engine"
)

// TestLoadCountsAndSplit loads SF 0.01 into DuckDB with one worker, with
// three, and with two in segments of at most 1 MiB of text where a chunk allows (four),
// and checks the tables' row counts against CountsFor and LoadStats, that
// the splits of the key ranges give the same data, and that the load's
// text files are gone.
func TestLoadCountsAndSplit(t *testing.T) {
	ctx := context.Background()
	n, _ := CountsFor(0.01)
	var sums []string
	for _, c := range []struct{ workers, segBytes int }{{1, 0}, {3, 0}, {2, 1 << 20}} {
		eng := openNew(t, dialectDuckDB, "")
		var st LoadStats
		if c.segBytes == 0 {
			var err error
			if st, err = Load(ctx, eng, Config{SF: 0.01, Seed: 11, Workers: c.workers}); err != nil {
				t.Fatal(err)
			}
		} else {
			st = loadSegmented(t, eng, 11, c.workers, int64(c.segBytes))
		}
		if st.Workers != c.workers {
			t.Errorf("LoadStats.Workers %d, want %d", st.Workers, c.workers)
		}
		want := map[string]int64{"region": 5, "nation": 25, "supplier": n.Supplier, "part": n.Part,
			"partsupp": n.PartSupp, "customer": n.Customer, "orders": n.Orders, "lineitem": st.Rows["lineitem"]}
		var total int64
		for _, tb := range tables {
			var got int64
			if err := eng.DB().QueryRowContext(ctx, "SELECT count(*) FROM "+tb.name).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != want[tb.name] || st.Rows[tb.name] != got {
				t.Errorf("%+v: %s has %d rows, stats say %d, want %d", c, tb.name, got, st.Rows[tb.name], want[tb.name])
			}
			total += got
		}
		if st.Total != total || (c.segBytes == 0 && st.RowsPerSec() <= 0) {
			t.Errorf("stats: total %d (want %d), %.0f rows/s", st.Total, total, st.RowsPerSec())
		}
		var sum string
		err := eng.DB().QueryRowContext(ctx, `SELECT concat_ws(' ',
			(SELECT sum(hash(l_orderkey, l_linenumber, l_partkey, l_suppkey, l_quantity, l_extendedprice, l_discount, l_tax, l_returnflag, l_linestatus, l_shipdate, l_commitdate, l_receiptdate, l_shipinstruct, l_shipmode, l_comment)) FROM lineitem),
			(SELECT sum(hash(o_orderkey, o_custkey, o_totalprice, o_orderstatus, o_orderdate, o_orderpriority, o_clerk, o_shippriority, o_comment)) FROM orders),
			(SELECT sum(hash(ps_partkey, ps_suppkey, ps_availqty, ps_supplycost, ps_comment)) FROM partsupp),
			(SELECT sum(hash(p_partkey, p_name, p_mfgr, p_brand, p_type, p_size, p_container, p_retailprice, p_comment)) FROM part),
			(SELECT sum(hash(c_custkey, c_name, c_address, c_nationkey, c_phone, c_acctbal, c_mktsegment, c_comment)) FROM customer),
			(SELECT sum(hash(s_suppkey, s_name, s_address, s_nationkey, s_phone, s_acctbal, s_comment)) FROM supplier),
			(SELECT sum(hash(n_nationkey, n_name, n_regionkey, n_comment)) FROM nation),
			(SELECT sum(hash(r_regionkey, r_name, r_comment)) FROM region))`).Scan(&sum)
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, sum)
		left, err := os.ReadDir(filepath.Dir(eng.Path()))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range left {
			if e.Name() != filepath.Base(eng.Path()) && e.Name() != filepath.Base(eng.Path())+".wal" {
				t.Errorf("%+v: %s left beside the database", c, e.Name())
			}
		}
	}
	for i := 1; i < len(sums); i++ {
		if sums[i] != sums[0] {
			t.Errorf("loads differ:\n%s\n%s", sums[0], sums[i])
		}
	}
}

// loadSegmented creates the tables in eng (DuckDB) and loads SF 0.01 of
// seed in segments of segBytes of text, checking that there are several.
func loadSegmented(t *testing.T, eng engine.Engine, seed int64, workers int, segBytes int64) LoadStats {
	t.Helper()
	g, err := newGen(seed, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	if segs := duckSegments(chunks(g.n), segBytes); len(segs) < 4 {
		t.Fatalf("%d segments of %d bytes, want 4 or more", len(segs), segBytes)
	}
	for _, tb := range tables {
		if _, err := eng.DB().Exec(createTable(tb, dialectDuckDB)); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := insertDuckDB(context.Background(), eng, g, chunks(g.n), workers, segBytes)
	if err != nil {
		t.Fatal(err)
	}
	st := LoadStats{Rows: map[string]int64{}, Workers: workers}
	for i, tb := range tables {
		st.Rows[tb.name] = rows[i]
		st.Total += rows[i]
	}
	return st
}

// TestTextBytesEstimate checks textBytesPerKey, which sizes DuckDB's
// segments and their room check, against the text SF 0.01 and 0.1 write:
// at least it, at most a fifth more.
func TestTextBytesEstimate(t *testing.T) {
	for _, sf := range []float64{0.01, 0.1} {
		g, err := newGen(2, sf)
		if err != nil {
			t.Fatal(err)
		}
		var got atomic.Int64
		_, err = generate(context.Background(), g, chunks(g.n), 2, func(context.Context) (worker, error) {
			return &discardWorker{enc: appendText, bytes: func(n int) { got.Add(int64(n)) }}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		est := segmentBytes([][]chunk{chunks(g.n)})
		if est < got.Load() || float64(est) > 1.2*float64(got.Load()) {
			t.Errorf("SF %g: %d bytes of text, estimated %d", sf, got.Load(), est)
		}
	}
}

// TestLoadDuckDBFails checks that a DuckDB load that fails part way (its
// lineitem table is missing, so the first segment's INSERT into it fails
// after its files are written) says which table and removes its text
// files and their directory.
func TestLoadDuckDBFails(t *testing.T) {
	eng := openNew(t, dialectDuckDB, "")
	g, err := newGen(1, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables[:len(tables)-1] {
		if _, err := eng.DB().Exec(createTable(tb, dialectDuckDB)); err != nil {
			t.Fatal(err)
		}
	}
	_, err = insertDuckDB(context.Background(), eng, g, chunks(g.n), 2, 1<<20)
	if err == nil || !strings.Contains(err.Error(), "loading lineitem") {
		t.Errorf("load without a lineitem table: %v", err)
	}
	left, err := os.ReadDir(filepath.Dir(eng.Path()))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		if !strings.HasPrefix(e.Name(), filepath.Base(eng.Path())) || strings.Contains(e.Name(), ".load-") {
			t.Errorf("%s left beside the database", e.Name())
		}
	}
}

// TestLoadRefuses checks the bad inputs: a scale factor that is not
// positive, and tables that exist already (left untouched).
func TestLoadRefuses(t *testing.T) {
	ctx := context.Background()
	eng := openNew(t, dialectSQLite, "")
	for _, sf := range []float64{0, -0.5} {
		_, err := Load(ctx, eng, Config{SF: sf})
		if !errors.Is(err, ErrScale) || !strings.Contains(err.Error(), "not a positive scale factor") {
			t.Errorf("Load at SF %g: %v", sf, err)
		}
	}
	if _, err := eng.DB().ExecContext(ctx, "CREATE TABLE region (x INTEGER); INSERT INTO region VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(ctx, eng, Config{SF: 0.01}); err == nil || !strings.Contains(err.Error(), "creating region") {
		t.Errorf("Load over an existing region table: %v", err)
	}
	var x int
	if err := eng.DB().QueryRowContext(ctx, "SELECT x FROM region").Scan(&x); err != nil || x != 42 {
		t.Errorf("the existing table changed: %d, %v", x, err)
	}
}

// TestLoadRefusesPostgres checks that a load into a schema holding a
// lineitem table of someone else's fails, leaves that table as it was,
// and drops the tables it had created before.
func TestLoadRefusesPostgres(t *testing.T) {
	ctx := context.Background()
	eng := openNew(t, dialectPostgres, "tpch_refuse")
	if _, err := eng.DB().ExecContext(ctx, "CREATE TABLE lineitem (x INTEGER); INSERT INTO lineitem VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(ctx, eng, Config{SF: 0.01}); err == nil || !strings.Contains(err.Error(), "creating lineitem") {
		t.Errorf("Load over an existing lineitem table: %v", err)
	}
	var x int
	if err := eng.DB().QueryRowContext(ctx, "SELECT x FROM lineitem").Scan(&x); err != nil || x != 42 {
		t.Errorf("the existing table changed: %d, %v", x, err)
	}
	var n int
	if err := eng.DB().QueryRowContext(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()").Scan(&n); err != nil || n != 1 {
		t.Errorf("%d tables left in the schema (%v), want only lineitem", n, err)
	}
}
