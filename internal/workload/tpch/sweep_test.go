package tpch

import (
	"bytes"
	"context"
	"errors"
	"github.com/numalab/numalab/internal/planest"
	"github.com/numalab/numalab/internal/runconfig"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/dop"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/topo"
)

// storeRec stores a run's items in a real results store.
type storeRec struct {
	st *store.Store
	id int64
}

func (r storeRec) Add(e result.Entry) error { _, err := r.st.Add(r.id, e); return err }

type quiet struct{ notes []string }

func (q *quiet) Say(string)                 {}
func (q *quiet) Note(l string)              { q.notes = append(q.notes, l) }
func (q *quiet) Measured(sweep.Cell, *Cell) {}

// runSweep runs cfg through sweep.Run into a new store and reads the
// cells back from it.
func runSweep(t *testing.T, cfg RunConfig, dsn string) ([]Cell, *quiet) {
	t.Helper()
	machine, err := topo.FromSysfs("/")
	if err != nil {
		t.Fatal(err)
	}
	cells, _, err := sweep.Resolve(machine, cfg.Spec(), false)
	if err != nil {
		t.Fatal(err)
	}
	more, _, err := sweep.Resolve(machine, cfg.ThroughputSpec(), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range more {
		c.Index = len(cells)
		cells = append(cells, c)
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "numalab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := &result.Run{Kind: RunKind, Command: "test", Started: time.Now()}
	if err := st.Begin(run); err != nil {
		t.Fatal(err)
	}
	prog := &quiet{}
	if _, err := sweep.Run(context.Background(), cfg.Plan(cells), NewSweep(cfg, dsn, -1),
		storeRec{st, run.ID}, prog); err != nil {
		t.Fatal(err)
	}
	back, err := st.Get(run.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := KindCell.All(back)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(cells) {
		t.Fatalf("stored %d cells, planned %d", len(got), len(cells))
	}
	return got, prog
}

// checkSweep checks what every engine's sweep must give.
func checkSweep(t *testing.T, cells []Cell, unit string) Analysis {
	t.Helper()
	for _, c := range cells {
		if c.Cell == nil || (c.Cell.Total.Count == 0 && !c.TimedByExplain) {
			t.Fatalf("cell %+v measured nothing", c)
		}
		if c.Mode == ModePower && c.Repeat == 0 {
			if c.Plan == nil || c.Plan.Shape == "" {
				t.Fatalf("%s at DOP %d: no plan (%s)", QueryName(c.Query), c.DOP, c.PlanError)
			}
			if unit != "" && (c.Plan.Cost <= 0 || c.Plan.CostUnit != unit) {
				t.Errorf("%s at DOP %d: cost %v %q, want a positive %q",
					QueryName(c.Query), c.DOP, c.Plan.Cost, c.Plan.CostUnit, unit)
			}
		}
		if c.Mode == ModePower && c.Query == 1 && c.Rows != 4 {
			t.Errorf("Q1 returned %d rows, want 4 (its four return flag and status groups)", c.Rows)
		}
		if c.Mode == ModeThroughput && (c.QueriesPerHour <= 0 || c.Slowest == 0) {
			t.Errorf("throughput cell %+v: no rate or slowest query", c)
		}
	}
	an := Analyze(cells, &RuleSpec{Threshold: dop.Threshold{Cost: 1000}, CoresPerSocket: 2, Sockets: 1})
	if len(an.Queries) != 3 || an.Advice == nil || len(an.Advice.PerStreams) != 1 {
		t.Fatalf("analysis: %d queries, advice %+v; want 3 and one stream count", len(an.Queries), an.Advice)
	}
	if unit != "" && (an.Cost == nil || an.Cost.SecondsPerUnit <= 0) {
		t.Errorf("no cost fit: %+v", an.Cost)
	}
	return an
}

func TestSweepDuckDB(t *testing.T) {
	if testing.Short() {
		t.Skip("loads SF 0.01 into DuckDB and runs a sweep")
	}
	// The data placed on node 0 (every machine has it) from a fresh open:
	// the sweep stops if the file's pages or the buffer pool are elsewhere.
	cfg := RunConfig{Common: runconfig.Common{Engine: dialectDuckDB, DB: filepath.Join(t.TempDir(), "tpch.duckdb"),
		Seed: 3, Repeat: 1, Duration: time.Second},
		SF: 0.01, DOP: []int{1, 2},
		Queries: []int{1, 6, 9}, Streams: []int{2}, DataNode: 0}
	cells, _ := runSweep(t, cfg, "")
	checkSweep(t, cells, planest.CostDuckDB)
	// A second run reuses numalab's load.
	db, err := Open(context.Background(),
		OpenConfig{Engine: dialectDuckDB, Options: engine.Options{Path: cfg.DB}, SF: 0.01, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !db.Reused {
		t.Error("the second open loaded again instead of reusing numalab's load")
	}
}

func TestSweepPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("loads SF 0.01 into PostgreSQL and runs a sweep")
	}
	dsn := pg.Server(t).DSN()
	t.Cleanup(func() { dropAll(t, dsn, "") })
	cfg := RunConfig{Common: runconfig.Common{Engine: dialectPostgres, Seed: 3, Repeat: 1, Duration: time.Second},
		SF: 0.01, DOP: []int{1, 2},
		Queries: []int{1, 6, 9}, Streams: []int{2}, DataNode: -1}
	cells, _ := runSweep(t, cfg, dsn)
	an := checkSweep(t, cells, planest.CostPostgres)
	for _, c := range cells {
		if c.Plan != nil && (c.Used < 1 || c.Used > c.DOP) {
			t.Errorf("%s at DOP %d: used %d, want 1 to the DOP (workers launched + 1)", QueryName(c.Query), c.DOP, c.Used)
		}
	}
	if an.Queries[0].Rule == nil {
		t.Error("no rule-of-thumb DOP beside Q1's measured best")
	}
}

// dropAll drops the tpch tables and marker from schema ("": numalab's) on
// the server at dsn.
func dropAll(t *testing.T, dsn, schema string) {
	eng, err := engine.Open(context.Background(), dialectPostgres, engine.Options{DSN: dsn, Schema: schema})
	if err != nil {
		t.Error(err)
		return
	}
	defer eng.Close()
	for _, n := range append(tableNames(), metaTable) {
		if _, err := eng.DB().Exec("DROP TABLE IF EXISTS " + n); err != nil {
			t.Error(err)
		}
	}
}

func TestOpenRefusesForeignFile(t *testing.T) {
	for _, name := range []string{dialectDuckDB, dialectSQLite} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "theirs."+name)
			eng, err := engine.Open(context.Background(), name, engine.Options{Path: path, Create: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := eng.DB().Exec("CREATE TABLE lineitem (x INTEGER)"); err != nil {
				t.Fatal(err)
			}
			if err := eng.Close(); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Open(context.Background(), OpenConfig{Engine: name, Options: engine.Options{Path: path}, SF: 0.01, Seed: 1})
			if !errors.Is(err, ErrForeign) {
				t.Fatalf("opening a file numalab did not make: %v, want ErrForeign", err)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Error("the refused file changed")
			}
		})
	}
}

func TestOpenRefusesForeignTables(t *testing.T) {
	dsn := pg.Server(t).DSN()
	eng := openNew(t, dialectPostgres, "tpch_foreign")
	if _, err := eng.DB().Exec("CREATE TABLE orders (x INTEGER); INSERT INTO orders VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(),
		OpenConfig{Engine: dialectPostgres, Options: engine.Options{DSN: dsn, Schema: "tpch_foreign"}, SF: 0.01, Seed: 1})
	if !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), "orders") {
		t.Fatalf("opening a schema with someone's orders table: %v, want ErrForeign naming it", err)
	}
	var x int
	if err := eng.DB().QueryRow("SELECT x FROM orders").Scan(&x); err != nil || x != 7 {
		t.Errorf("the refused table changed: %v, %d", err, x)
	}
}

func TestOpenReloadsInterruptedLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tpch.duckdb")
	eng, err := engine.Open(context.Background(), dialectDuckDB, engine.Options{Path: path, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"CREATE TABLE " + metaTable + " (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
		"INSERT INTO " + metaTable + " VALUES ('workload', 'tpch'), ('sf', '0.01'), ('seed', '1')",
		"CREATE TABLE lineitem (x INTEGER)"} {
		if _, err := eng.DB().Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	// The text files a killed load of an older numalab left, and a user's
	// file of a name near it.
	left := path + ".load-1234"
	if err := os.Mkdir(left, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(left, "lineitem-0.tsv"), path + ".loaded"} {
		if err := os.WriteFile(f, []byte("1\t2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var says []string
	db, err := Open(context.Background(),
		OpenConfig{Engine: dialectDuckDB, Options: engine.Options{Path: path}, SF: 0.01, Seed: 1,
			Say: func(s string) { says = append(says, s) }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Reused || db.Stats.Rows["lineitem"] == 0 {
		t.Errorf("an interrupted load was reused (%v) or not loaded again (%d lineitems)",
			db.Reused, db.Stats.Rows["lineitem"])
	}
	if len(says) == 0 || !strings.Contains(says[0], "complete: false") {
		t.Errorf("the reload was not explained: %q", says)
	}
	if _, err := os.Stat(left); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed load's %s is still there (%v)", left, err)
	}
	if _, err := os.Stat(path + ".loaded"); err != nil {
		t.Errorf("a file that is not a load's directory was touched: %v", err)
	}
}

func TestOpenRefusesBadSF(t *testing.T) {
	for _, sf := range []float64{0, -1} {
		_, err := Open(context.Background(), OpenConfig{Engine: dialectDuckDB,
			Options: engine.Options{Path: filepath.Join(t.TempDir(), "x.duckdb")}, SF: sf, Seed: 1})
		if err == nil {
			t.Errorf("SF %v was accepted", sf)
		}
	}
}
