package tpch

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestLoadCountsAndSplit loads SF 0.01 into DuckDB with one worker and
// with three, and checks the tables' row counts against CountsFor and
// LoadStats, and that the two splits of the key ranges give the same data.
func TestLoadCountsAndSplit(t *testing.T) {
	ctx := context.Background()
	n, _ := CountsFor(0.01)
	var sums []string
	for _, workers := range []int{1, 3} {
		eng := openNew(t, dialectDuckDB, "")
		st, err := Load(ctx, eng, Config{SF: 0.01, Seed: 11, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if st.Workers != workers {
			t.Errorf("LoadStats.Workers %d, want %d", st.Workers, workers)
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
				t.Errorf("%d workers: %s has %d rows, stats say %d, want %d", workers, tb.name, got, st.Rows[tb.name], want[tb.name])
			}
			total += got
		}
		if st.Total != total || st.RowsPerSec() <= 0 {
			t.Errorf("stats: total %d (want %d), %.0f rows/s", st.Total, total, st.RowsPerSec())
		}
		var sum string
		err = eng.DB().QueryRowContext(ctx, `SELECT concat_ws(' ',
			(SELECT sum(hash(l_orderkey, l_linenumber, l_partkey, l_suppkey, l_extendedprice, l_shipdate, l_comment)) FROM lineitem),
			(SELECT sum(hash(o_orderkey, o_custkey, o_totalprice, o_orderstatus, o_comment)) FROM orders),
			(SELECT sum(hash(ps_partkey, ps_suppkey, ps_supplycost, ps_comment)) FROM partsupp),
			(SELECT sum(hash(c_custkey, c_phone, c_acctbal, c_comment)) FROM customer),
			(SELECT sum(hash(s_suppkey, s_address, s_comment)) FROM supplier))`).Scan(&sum)
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, sum)
	}
	if sums[0] != sums[1] {
		t.Errorf("1 and 3 workers load different data:\n%s\n%s", sums[0], sums[1])
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
