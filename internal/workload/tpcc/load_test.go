package tpcc

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/engine"
)

// loadTime is the fixed load date of the tests, so loads are reproducible.
var loadTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

var (
	sharedOnce  sync.Once
	sharedDir   string
	sharedPath  string
	sharedStats LoadStats
	sharedErr   error
)

// loaded returns a W=1 database loaded once per test binary (seed 42).
func loaded(t testing.TB) string {
	t.Helper()
	sharedOnce.Do(func() {
		sharedDir, sharedErr = os.MkdirTemp("", "tpcc-test")
		if sharedErr != nil {
			return
		}
		sharedPath = filepath.Join(sharedDir, "w1.db")
		sharedStats, sharedErr = loadSQLite(context.Background(), sharedPath,
			LoadConfig{Warehouses: 1, Seed: 42, Now: loadTime})
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedPath
}

func TestMain(m *testing.M) {
	os.Exit(pg.Main(m, closeEngines, func() { my.Stop() }, func() {
		for _, d := range append(engineDirs, sharedDir) {
			if d != "" {
				os.RemoveAll(d)
			}
		}
	}))
}

// loadSQLite loads a new SQLite file at path as Prepare does (removing it
// on error).
func loadSQLite(ctx context.Context, path string, cfg LoadConfig) (LoadStats, error) {
	return loadFile(ctx, Source{Engine: "sqlite", Load: cfg}, engine.Options{Path: path})
}

// openFile opens the SQLite file at path for a run; the test closes it.
func openFile(t testing.TB, path string, opt Options) (*Workload, error) {
	t.Helper()
	eng, err := engine.Open(context.Background(), "sqlite", engine.Options{Path: path})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { eng.Close() })
	return Open(context.Background(), eng, opt)
}

// fileStream opens the SQLite file at path for a run and one stream on it
// (RNG seeded 1, 1); the test closes both.
func fileStream(tb testing.TB, path string, opt Options) (*Workload, *Stream) {
	tb.Helper()
	w, err := openFile(tb, path, opt)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := w.NewStream(rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return w, s
}

// checkFile runs Check on the SQLite file at path.
func checkFile(ctx context.Context, path string) error {
	eng, err := engine.Open(ctx, "sqlite", engine.Options{Path: path})
	if err != nil {
		return err
	}
	defer eng.Close()
	return Check(ctx, eng)
}

func openDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := engine.OpenSQLiteDB(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestLoadW1(t *testing.T) {
	path := loaded(t)
	t.Logf("W=1: %d rows in %v (%.0f rows/s), indexes %v, check %v, %d MB",
		sharedStats.Rows, sharedStats.Insert, sharedStats.RowsPerSecond(), sharedStats.Index, sharedStats.Check,
		sharedStats.Bytes>>20)
	db := openDB(t, path)
	want := map[string]int64{
		"item": 100000, "warehouse": 1, "stock": 100000, "district": 10, "customer": 30000,
		"history": 30000, "orders": 30000, "new_order": 9000,
	}
	for name, n := range want {
		var got int64
		if err := db.QueryRow("SELECT count(*) FROM " + name).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != n {
			t.Errorf("%s: %d rows, want %d", name, got, n)
		}
	}
	var ol, olSum int64
	if err := db.QueryRow(
		"SELECT count(*), (SELECT sum(o_ol_cnt) FROM orders) FROM order_line").Scan(&ol, &olSum); err != nil {
		t.Fatal(err)
	}
	// 30,000 orders of 5..15 lines: mean 300,000, sd ~ 548.
	if ol != olSum || ol < 295000 || ol > 305000 {
		t.Errorf("order_line: %d rows, sum(o_ol_cnt) %d, want equal and about 300,000", ol, olSum)
	}
	if sharedStats.Rows != ExpectedRows(1)-300000+ol {
		t.Errorf("stats say %d rows, tables hold %d", sharedStats.Rows, ExpectedRows(1)-300000+ol)
	}
	if err := check(context.Background(), db, specOf(t, "sqlite")); err != nil {
		t.Errorf("check after load: %v", err)
	}
	m, err := readMeta(context.Background(), db, specOf(t, "sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Warehouses != 1 || m.Seed != 42 || m.SchemaVersion != SchemaVersion {
		t.Errorf("meta %+v", m)
	}
}

// TestLoadValues checks value rules of Clause 4.3.3.1 on the loaded rows.
func TestLoadValues(t *testing.T) {
	db := openDB(t, loaded(t))
	checks := []struct {
		what  string
		query string
		want  int64
	}{
		{"items with ORIGINAL (exactly 10%)", "SELECT count(*) FROM item WHERE instr(i_data, 'ORIGINAL') > 0", 10000},
		{"stock with ORIGINAL (exactly 10%)", "SELECT count(*) FROM stock WHERE instr(s_data, 'ORIGINAL') > 0", 10000},
		{"customers with BC credit (exactly 10%)", "SELECT count(*) FROM customer WHERE c_credit = 'BC'", 3000},
		{"i_price out of [1, 100]", "SELECT count(*) FROM item WHERE i_price < 1 OR i_price > 100", 0},
		{"i_data length out of [26, 50]", "SELECT count(*) FROM item WHERE length(i_data) NOT BETWEEN 26 AND 50", 0},
		{"c_data length out of [300, 500]", "SELECT count(*) FROM customer WHERE length(c_data) NOT BETWEEN 300 AND 500", 0},
		{"s_quantity out of [10, 100]", "SELECT count(*) FROM stock WHERE s_quantity NOT BETWEEN 10 AND 100", 0},
		{"zips not 4 digits + 11111", "SELECT count(*) FROM customer WHERE c_zip NOT GLOB '[0-9][0-9][0-9][0-9]11111'", 0},
		{"phones not 16 digits", "SELECT count(*) FROM customer WHERE length(c_phone) != 16 OR c_phone GLOB '*[^0-9]*'", 0},
		{"first 1000 customers' names out of sequence",
			"SELECT count(*) FROM customer WHERE c_id <= 1000 AND c_last != (SELECT c_last FROM customer c2 " +
				"WHERE c2.c_w_id = customer.c_w_id AND c2.c_d_id = customer.c_d_id AND c2.c_id = customer.c_id)", 0},
		{"distinct last names per district (all 1000 present)",
			"SELECT min(n) FROM (SELECT count(DISTINCT c_last) AS n FROM customer GROUP BY c_w_id, c_d_id)", 1000},
		{"orders with carrier at o_id >= 2101",
			"SELECT count(*) FROM orders WHERE o_id >= 2101 AND o_carrier_id IS NOT NULL", 0},
		{"carrier out of [1, 10]", "SELECT count(*) FROM orders WHERE o_id < 2101 AND o_carrier_id NOT BETWEEN 1 AND 10", 0},
		{"distinct o_c_id per district (a permutation)",
			"SELECT min(n) FROM (SELECT count(DISTINCT o_c_id) AS n FROM orders GROUP BY o_w_id, o_d_id)", 3000},
		{"undelivered lines with amount out of [0.01, 9999.99]",
			"SELECT count(*) FROM order_line WHERE ol_o_id >= 2101 AND ol_amount NOT BETWEEN 0.01 AND 9999.99", 0},
		{"o_entry_d not the load time", "SELECT count(*) FROM orders WHERE o_entry_d != '2026-01-02 03:04:05'", 0},
	}
	for _, c := range checks {
		var got int64
		if err := db.QueryRow(c.query).Scan(&got); err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if got != c.want {
			t.Errorf("%s: %d, want %d", c.what, got, c.want)
		}
	}
	// Customer 1..1000 take names 0..999 in order (Clause 4.3.3.1).
	var last string
	if err := db.QueryRow(
		"SELECT c_last FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 372").Scan(&last); err != nil {
		t.Fatal(err)
	}
	if last != "PRICALLYOUGHT" {
		t.Errorf("customer 372's last name %q, want PRICALLYOUGHT (number 371)", last)
	}
}

func TestLoadRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, w := range []int{0, -3} {
		_, err := loadSQLite(context.Background(), filepath.Join(dir, "x.db"), LoadConfig{Warehouses: w})
		if err == nil || !strings.Contains(err.Error(), "is not a positive count") {
			t.Errorf("warehouses %d: %v", w, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.db")); err == nil {
		t.Error("a refused load left a file")
	}
	exists := filepath.Join(dir, "exists.db")
	os.WriteFile(exists, []byte("mine"), 0o644)
	_, err := loadSQLite(context.Background(), exists, LoadConfig{Warehouses: 1})
	if err == nil || !strings.Contains(err.Error(), "file exists") {
		t.Errorf("loading over an existing file: %v", err)
	}
	if b, _ := os.ReadFile(exists); string(b) != "mine" {
		t.Error("loading over an existing file changed it")
	}
}

// TestLoadDiskFull simulates a full disk with SQLite's max_page_count
// pragma (the database cannot grow past 2000 pages, 8 MB), which makes
// SQLite fail the write with SQLITE_FULL exactly as a full file system does.
func TestLoadDiskFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "full.db")
	eng, err := engine.Open(context.Background(), "sqlite", engine.Options{Path: path, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	// The load's one connection, kept open by the engine.
	if _, err := eng.DB().Exec("PRAGMA max_page_count=2000"); err != nil {
		t.Fatal(err)
	}
	_, err = Load(context.Background(), eng, LoadConfig{Warehouses: 1})
	if !errors.Is(err, engine.ErrDiskFull) {
		t.Fatalf("load into a full database: %v, want ErrDiskFull", err)
	}
	t.Log(err)
	if err := eng.Discard(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the half-loaded file is still there: %v", err)
	}
}

func TestLoadCancel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cut.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls int
	_, err := loadSQLite(ctx, path, LoadConfig{Warehouses: 1, Progress: func(done, total int64) {
		calls++
		if done > total/4 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled load: %v, want context.Canceled", err)
	}
	if calls < 2 {
		t.Errorf("progress called %d times", calls)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the half-loaded file is still there: %v", err)
	}
}

// fingerprint hashes every row of the tables, in key order.
func fingerprint(t *testing.T, path string) string {
	db := openDB(t, path)
	h := sha256.New()
	for _, tb := range tables {
		rows, err := db.Query("SELECT * FROM " + tb.name + " ORDER BY 1, 2, 3")
		if err != nil {
			t.Fatal(err)
		}
		v := make([]any, len(tb.cols))
		p := make([]any, len(v))
		for i := range v {
			p[i] = &v[i]
		}
		for rows.Next() {
			rows.Scan(p...)
			fmt.Fprintln(h, v...)
		}
		rows.Close()
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestLoadDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a second warehouse-sized database")
	}
	again := filepath.Join(t.TempDir(), "again.db")
	if _, err := loadSQLite(context.Background(), again, LoadConfig{Warehouses: 1, Seed: 42, Now: loadTime}); err != nil {
		t.Fatal(err)
	}
	if a, b := fingerprint(t, loaded(t)), fingerprint(t, again); a != b {
		t.Errorf("two loads with seed 42 differ: %s, %s", a, b)
	}
}

// TestGeneratorSeeds checks that the seed reaches the generated values.
func TestGeneratorSeeds(t *testing.T) {
	first := func(seed int64) string {
		g := newGen(seed, labelCustomer, 1, 1)
		return string(g.appendAString(nil, 300, 500))
	}
	if first(1) == first(2) {
		t.Error("seeds 1 and 2 generate the same c_data")
	}
	if first(1) != first(1) {
		t.Error("seed 1 generates different c_data twice")
	}
}

func TestInsertSQL(t *testing.T) {
	want := "INSERT INTO new_order VALUES (?3,?1,?2),(?4,?1,?2)"
	if got := insertSQL(tNewOrder, 2); got != want {
		t.Errorf("insertSQL(new_order, 2) = %q, want %q", got, want)
	}
	if n := strings.Count(insertSQL(tStock, batchRows(tStock)), "?"); n != batchRows(tStock)*len(tStock.cols) {
		t.Errorf("stock batch has %d parameters", n)
	}
}

// TestSharedColumnGuard: a shared column whose value changes within a chunk
// is a generator bug, reported rather than silently written wrong.
func TestSharedColumnGuard(t *testing.T) {
	p := &pipe{ctx: context.Background(), full: make(chan *chunk, 4), free: make(chan *chunk, 1)}
	p.free <- &chunk{}
	for _, supplyW := range []int{1, 2} {
		c, err := p.row(tNewOrder, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		c.int(1)
		c.int(1)
		c.int(supplyW)
	}
	if _, err := p.row(tNewOrder, 1, 1); err == nil || !strings.Contains(err.Error(), "shared column no_w_id changed") {
		t.Errorf("changed shared column: %v", err)
	}
}

// specOf is the registry's engine named name.
func specOf(t testing.TB, name string) engine.Spec {
	s, ok := engine.Lookup(name)
	if !ok {
		t.Fatalf("no engine %q", name)
	}
	return s
}
