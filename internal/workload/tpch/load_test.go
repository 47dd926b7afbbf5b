package tpch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/engine"
)

// loadSum is what TestLoadCountsAndSplit's hash of every column of every
// table gives for SF 0.01 and seed 11: the sum of each table's row hashes,
// largest table first. DuckDB 1.5 hashes text differently from 1.2
// (numbers and dates alike), which changed it with the same rows: every
// table, exported sorted to CSV, read the same field for field from both
// (the value under 1.2 was the same through the text files and CSV
// reader, the row table function and the Appender before them).
const loadSum = "554461380148614358699025 139321624793753679968754 73732906471149207151870 18294020272344373216476 " +
	"14152936863753103389700 985329200761724232891 228305714771788371914 45128102733285655972"

// TestLoadCountsAndSplit loads SF 0.01 into DuckDB with one worker and
// with three, and checks the tables' row counts against CountsFor and
// LoadStats, that every column of every table hashes to loadSum both ways,
// and that nothing but the database is left beside it.
func TestLoadCountsAndSplit(t *testing.T) {
	ctx := context.Background()
	n, _ := CountsFor(0.01)
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
				t.Errorf("%d workers: %s has %d rows, stats say %d, want %d",
					workers, tb.name, got, st.Rows[tb.name], want[tb.name])
			}
			total += got
		}
		if st.Total != total || st.RowsPerSec() <= 0 {
			t.Errorf("stats: total %d (want %d), %.0f rows/s", st.Total, total, st.RowsPerSec())
		}
		var sum string
		err = eng.DB().QueryRowContext(ctx, `SELECT concat_ws(' ',
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
		if sum != loadSum {
			t.Errorf("%d workers: the tables hash to\n%s\nwant\n%s", workers, sum, loadSum)
		}
		assertOnlyDB(t, eng)
	}
}

// assertOnlyDB checks that nothing but eng's database file and its WAL is
// in the file's directory.
func assertOnlyDB(t *testing.T, eng engine.Engine) {
	t.Helper()
	left, err := os.ReadDir(filepath.Dir(eng.Path()))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		if e.Name() != filepath.Base(eng.Path()) && e.Name() != filepath.Base(eng.Path())+".wal" {
			t.Errorf("%s left beside the database", e.Name())
		}
	}
}

// TestLoadDuckDBFails checks that a DuckDB load that fails part way (its
// lineitem table is missing, so the last INSERT fails after the others
// ran) says which table, sets preserve_insertion_order back and leaves
// nothing beside the database.
func TestLoadDuckDBFails(t *testing.T) {
	ctx := context.Background()
	eng := openNew(t, dialectDuckDB, "")
	g, err := newGen(1, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables[:len(tables)-1] {
		if _, err := eng.DB().Exec(createTable(tb, specOf(dialectDuckDB))); err != nil {
			t.Fatal(err)
		}
	}
	// One connection, so that the setting read is the load's.
	eng.DB().SetMaxOpenConns(1)
	_, err = insertDuckDB(ctx, eng, g, chunks(g.n), 2)
	if err == nil || !strings.Contains(err.Error(), "loading lineitem") {
		t.Errorf("load without a lineitem table: %v", err)
	}
	var keep bool
	if err := eng.DB().QueryRowContext(ctx,
		"SELECT current_setting('preserve_insertion_order')").Scan(&keep); err != nil || !keep {
		t.Errorf("preserve_insertion_order after the load: %v, %v; want true", keep, err)
	}
	assertOnlyDB(t, eng)
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
	if _, err := eng.DB().ExecContext(ctx,
		"CREATE TABLE lineitem (x INTEGER); INSERT INTO lineitem VALUES (42)"); err != nil {
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
	if err := eng.DB().QueryRowContext(ctx,
		"SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()").Scan(&n); err != nil || n != 1 {
		t.Errorf("%d tables left in the schema (%v), want only lineitem", n, err)
	}
}

// TestLoadDuckDBTwice checks that two loads into one open DuckDB database
// both work (each registers table functions of its own) and that the
// functions are not stored in the file.
func TestLoadDuckDBTwice(t *testing.T) {
	ctx := context.Background()
	eng := openNew(t, dialectDuckDB, "")
	g, err := newGen(1, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		for _, tb := range tables {
			if _, err := eng.DB().Exec("DROP TABLE IF EXISTS " + tb.name + "; " +
				createTable(tb, specOf(dialectDuckDB))); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := insertDuckDB(ctx, eng, g, chunks(g.n), 2); err != nil {
			t.Fatalf("load %d: %v", i+1, err)
		}
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := engine.Open(ctx, dialectDuckDB, engine.Options{Path: eng.Path()})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	var n int
	if err := again.DB().QueryRowContext(ctx,
		"SELECT count(*) FROM duckdb_functions() WHERE function_name LIKE 'numalab_tpch_%'").Scan(&n); err != nil || n != 0 {
		t.Errorf("%d table functions in the reopened file (%v), want none", n, err)
	}
}

// warm reads each table's last column as the comment, the one column of
// text taken from the pool.
func TestEveryTableEndsWithItsComment(t *testing.T) {
	for _, tb := range tables {
		c := tb.cols[len(tb.cols)-1]
		if c.kind != kText || !strings.HasSuffix(c.name, "_comment") {
			t.Errorf("%s ends with %s, not its comment", tb.name, c.name)
		}
	}
}

// TestLoadPostgres loads SF 0.01 into PostgreSQL with one worker and with
// three (each table then arrives by several COPYs at once) and checks the
// row counts and that both hold the same rows, every column of every
// table hashed in key order.
func TestLoadPostgres(t *testing.T) {
	ctx := context.Background()
	n, _ := CountsFor(0.01)
	var sums []string
	for _, workers := range []int{1, 3} {
		eng := openNew(t, dialectPostgres, "tpch_load_"+strconv.Itoa(workers))
		st, err := Load(ctx, eng, Config{SF: 0.01, Seed: 11, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{"region": 5, "nation": 25, "supplier": n.Supplier, "part": n.Part,
			"partsupp": n.PartSupp, "customer": n.Customer, "orders": n.Orders, "lineitem": st.Rows["lineitem"]}
		var sum []string
		for _, tb := range tables {
			var got int64
			var md5 string
			q := "SELECT count(*), md5(string_agg(t::text, '|' ORDER BY " + tb.pkey + ")) FROM " + tb.name + " t"
			if err := eng.DB().QueryRowContext(ctx, q).Scan(&got, &md5); err != nil {
				t.Fatal(err)
			}
			if got != want[tb.name] || st.Rows[tb.name] != got {
				t.Errorf("%d workers: %s has %d rows, stats say %d, want %d",
					workers, tb.name, got, st.Rows[tb.name], want[tb.name])
			}
			sum = append(sum, tb.name+" "+md5)
		}
		sums = append(sums, strings.Join(sum, "\n"))
	}
	if sums[0] != sums[1] {
		t.Errorf("the tables differ between one worker and three:\n%s\nand\n%s", sums[0], sums[1])
	}
}

// TestLoadPostgresFails checks that a COPY the server refuses part way
// (lineitem's check rejects its seventh lines) fails the load promptly,
// the worker writing to it told why, and that a load cancelled part way
// (its workers give up their COPYs) returns and drops the tables it made.
func TestLoadPostgresFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	eng := openNew(t, dialectPostgres, "tpch_fails")
	g, err := newGen(1, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		if _, err := eng.DB().ExecContext(ctx, createTable(tb, specOf(dialectPostgres))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := eng.DB().ExecContext(ctx,
		"ALTER TABLE lineitem ADD CONSTRAINT six_lines CHECK (l_linenumber < 7)"); err != nil {
		t.Fatal(err)
	}
	_, err = insert(ctx, eng, g, 2)
	if err == nil || !strings.Contains(err.Error(), "loading lineitem") || !strings.Contains(err.Error(), "six_lines") {
		t.Errorf("load into a lineitem that refuses seventh lines: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the failed load waited until the test's deadline: %v", err)
	}
	for _, tb := range tables {
		if _, err := eng.DB().ExecContext(ctx, "DROP TABLE "+tb.name); err != nil {
			t.Fatal(err)
		}
	}

	// Cancel once a COPY has stored rows, whatever the machine's speed.
	lctx, lcancel := context.WithCancel(ctx)
	go func() {
		defer lcancel()
		for lctx.Err() == nil {
			var n int
			err := eng.DB().QueryRowContext(lctx,
				"SELECT count(*) FROM pg_stat_progress_copy WHERE tuples_processed > 0").Scan(&n)
			if err != nil || n > 0 {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	if _, err := Load(lctx, eng, Config{SF: 0.1, Seed: 1}); !errors.Is(err, context.Canceled) {
		t.Errorf("a load cancelled part way: %v", err)
	}
	var left int
	if err := eng.DB().QueryRowContext(ctx,
		"SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()").Scan(&left); err != nil || left != 0 {
		t.Errorf("%d tables left after the cancelled load (%v)", left, err)
	}
}

// TestPGSinkCloses checks a PostgreSQL sink's two ends: closed with nil
// its rows are kept, closed with an error none are, and the error is the
// server's refusal of the COPY, which names it.
func TestPGSinkCloses(t *testing.T) {
	ctx := context.Background()
	eng := openNew(t, dialectPostgres, "tpch_sink")
	if _, err := eng.DB().ExecContext(ctx, createTable(tRegion, specOf(dialectPostgres))); err != nil {
		t.Fatal(err)
	}
	g, err := newGen(1, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	b := newBatch()
	b.fill(g, chunk{group: groupFixed})
	w := &pgWorker{ctx: ctx, eng: eng}
	for _, abort := range []error{nil, errors.New("given up")} {
		s, err := w.sink(tRegion)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.write(ctx, b.bufs[iRegion][:b.ns[iRegion]*len(tRegion.cols)], b.ns[iRegion]); err != nil {
			t.Fatal(err)
		}
		err = s.close(abort)
		if (abort == nil) != (err == nil) || abort != nil && !strings.Contains(err.Error(), "given up") {
			t.Errorf("closed with %v: %v", abort, err)
		}
	}
	var n int
	if err := eng.DB().QueryRowContext(ctx, "SELECT count(*) FROM region").Scan(&n); err != nil || n != 5 {
		t.Errorf("region holds %d rows (%v), want the 5 of the sink closed with nil", n, err)
	}
}
