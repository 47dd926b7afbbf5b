package tpcc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/mariaserver"
	"github.com/numalab/numalab/internal/mariaserver/mytest"
	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/pgserver/pgtest"
	"github.com/numalab/numalab/internal/place"
)

// engineDB is a W=1 database (seed 42, loadTime, as loaded(t)) in another
// engine, loaded once per test binary.
type engineDB struct {
	once  sync.Once
	eng   engine.Engine
	stats LoadStats
	err   error
}

var (
	duckDB, pgDB, myDB engineDB
	// pgDataNode is the node the managed server's memory is bound to, -1
	// when memory policies are not available here.
	pgDataNode = -1
	// pg is the managed server the PostgreSQL database is loaded into.
	pg = pgtest.New(
		pgserver.Config{SharedBuffers: pgserver.SharedBuffersFor(EstimatedBytes(1)), MemPolicy: dataNodePolicy()})
	// my is the managed MariaDB server the MariaDB database is loaded into.
	my = mytest.New(mariaserver.Config{BufferPool: mariaserver.BufferPoolFor(EstimatedBytes(1))})
)

// closeEngines closes the shared engines (from TestMain, before the
// server stops).
func closeEngines() {
	for _, e := range []*engineDB{&duckDB, &pgDB, &myDB} {
		if e.eng != nil {
			e.eng.Close()
		}
	}
}

// loadedEngine returns the shared database of the named engine.
func loadedEngine(t testing.TB, name string) (engine.Engine, LoadStats) {
	t.Helper()
	e, dsn := &duckDB, ""
	switch name {
	case "postgres":
		// Outside the Once: Server may end the test (skip or fail).
		e, dsn = &pgDB, pg.Server(t).DSN()
	case "mariadb":
		e, dsn = &myDB, my.Server(t).DSN()
	}
	e.once.Do(func() {
		ctx := context.Background()
		opt := engine.Options{DataBytes: EstimatedBytes(1)}
		switch name {
		case "duckdb":
			dir, err := os.MkdirTemp("", "tpcc-duckdb")
			if err != nil {
				e.err = err
				return
			}
			engineDirs = append(engineDirs, dir)
			opt.Path, opt.Create = filepath.Join(dir, "w1.duckdb"), true
		case "postgres", "mariadb":
			opt.DSN, opt.PinBackends = dsn, true
		}
		e.eng, e.err = engine.Open(ctx, name, opt)
		if e.err != nil {
			return
		}
		e.stats, e.err = Load(ctx, e.eng, LoadConfig{Warehouses: 1, Seed: 42, Now: loadTime})
	})
	if e.err != nil {
		t.Fatal(e.err)
	}
	return e.eng, e.stats
}

var engineDirs []string

// dataNodePolicy is the --data-node policy of the managed server: its
// memory bound to node 0 when the machine lets us set memory policies (and
// pgDataNode 0), none otherwise.
func dataNodePolicy() place.Policy {
	if _, err := os.Stat("/sys/devices/system/node/node0"); err != nil {
		return place.Policy{}
	}
	bind := place.Policy{Mode: place.Bind, Nodes: []int{0}}
	done := make(chan error)
	go func() {
		runtime.LockOSThread() // the thread (and its policy) ends with the goroutine
		done <- place.SetMemPolicy(bind)
	}()
	if <-done != nil {
		return place.Policy{}
	}
	pgDataNode = 0
	return bind
}

var otherEngines = []string{"duckdb", "postgres", "mariadb"}

func TestLoadEngines(t *testing.T) {
	for _, name := range otherEngines {
		t.Run(name, func(t *testing.T) {
			eng, st := loadedEngine(t, name)
			if st.Rows != sharedStatsRows(t) {
				t.Errorf("loaded %d rows, SQLite %d", st.Rows, sharedStatsRows(t))
			}
			t.Logf("%s: %d rows, %d bytes (%.0f MiB); insert %v (%.0f rows/s), index %v, check %v",
				name, st.Rows, st.Bytes, float64(st.Bytes)/(1<<20), st.Insert, st.RowsPerSecond(), st.Index, st.Check)
			if name == "postgres" && st.Bytes > pgBytesPerWarehouse {
				t.Errorf("one warehouse takes %d bytes on PostgreSQL, more than pgBytesPerWarehouse %d: raise it",
					st.Bytes, pgBytesPerWarehouse)
			}
			if name == "mariadb" && st.Bytes > myBytesPerWarehouse {
				t.Errorf("one warehouse takes %d bytes on MariaDB, more than myBytesPerWarehouse %d: raise it",
					st.Bytes, myBytesPerWarehouse)
			}
			if err := Check(context.Background(), eng); err != nil {
				t.Error(err)
			}
			w, err := Open(context.Background(), eng, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if m := w.Meta(); m.Warehouses != 1 || m.Seed != 42 || m.LoadTime != loadTime.Format(dateFormat) {
				t.Errorf("meta %+v", m)
			}
		})
	}
}

func sharedStatsRows(t testing.TB) int64 {
	loaded(t)
	return sharedStats.Rows
}

// TestEnginesAgree runs the same inputs on SQLite, DuckDB and PostgreSQL
// (the same rows: same seed and load time) and wants the same answers.
func TestEnginesAgree(t *testing.T) {
	ctx := context.Background()
	for _, aug := range []bool{false, true} {
		ref, err := openFile(t, loaded(t), Options{Augmented: aug})
		if err != nil {
			t.Fatal(err)
		}
		in := makeInputs(ref, 200)
		want := runInputs(t, ref, in)
		for _, name := range otherEngines {
			eng, _ := loadedEngine(t, name)
			w, err := Open(ctx, eng, Options{Augmented: aug})
			if err != nil {
				t.Fatal(err)
			}
			got := runInputs(t, w, in)
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("%s augmented=%v call %d:\n got %s\nwant %s", name, aug, i, got[i], want[i])
					break
				}
			}
		}
	}
}

// runInputs runs every input once on a new stream and describes the results.
func runInputs(t *testing.T, w *Workload, in inputs) []string {
	t.Helper()
	s, err := w.NewStream(rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []string
	for i := range in.os {
		r, err := s.OrderStatus(in.os[i])
		if err != nil {
			t.Fatalf("%s: %v", w.Engine().Name(), err)
		}
		// avg(i_price) sums in each engine's order: the last bits differ.
		rr := *r
		rr.AvgPrice = math.Round(rr.AvgPrice*1e9) / 1e9
		out = append(out, fmt.Sprintf("%+v", rr))
		x := in.sl[i]
		low, err := s.StockLevel(x[0], x[1], x[2])
		if err != nil {
			t.Fatalf("%s: %v", w.Engine().Name(), err)
		}
		out = append(out, fmt.Sprint("stock-level ", x, " ", low))
	}
	return out
}

func TestNextOnEngines(t *testing.T) {
	for _, name := range otherEngines {
		eng, _ := loadedEngine(t, name)
		w, err := Open(context.Background(), eng, Options{Seed: 9, Augmented: true})
		if err != nil {
			t.Fatal(err)
		}
		a, b := trace(t, w, 5, 100), trace(t, w, 5, 100)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two streams with the same seed differ", name)
		}
	}
}

func TestStreamsConcurrentOnEngines(t *testing.T) {
	for _, name := range otherEngines {
		eng, _ := loadedEngine(t, name)
		w, err := Open(context.Background(), eng, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := w.NewStream(rand.New(rand.NewPCG(uint64(i), 1)))
				if err != nil {
					errs <- err
					return
				}
				defer s.Close()
				for j := 0; j < 50; j++ {
					if _, err := s.Next(context.Background()); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestPostgresDataNodeHost: the managed server's memory is bound to node 0
// (when this machine allows memory policies), prewarmed, and its shared
// buffers found on that node.
func TestPostgresDataNodeHost(t *testing.T) {
	eng, _ := loadedEngine(t, "postgres")
	if pgDataNode < 0 {
		t.Skip("memory policies are not available here")
	}
	w, err := Open(context.Background(), eng, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := w.Prewarm(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("prewarm: %+v, placement %+v", st, st.Placement)
	if st.Method != "pg_prewarm, scans" && !strings.HasPrefix(st.Method, "scans (pg_prewarm not used: ") {
		t.Errorf("prewarm method %q", st.Method)
	}
	if st.Objects < 9 {
		t.Errorf("prewarmed %d relations, want the 9 tables and their indexes", st.Objects)
	}
	if st.Placement == nil {
		t.Fatal("no placement reported")
	}
	if f := st.Placement.Local(pgDataNode); f != 1 {
		t.Errorf("%.3f of the shared memory is on node %d, want all: %+v", f, pgDataNode, st.Placement)
	}
	// The buffers hold at least the data just prewarmed.
	var b int64
	for _, x := range st.Placement.Bytes {
		b += x
	}
	if b < st.FileBytes*9/10 {
		t.Errorf("the prewarming backend maps %d bytes of shared memory for %d bytes of data", b, st.FileBytes)
	}
}

// TestPostgresLoadCancelDropsTables cancels a load into a second schema
// and wants nothing of it left.
func TestPostgresLoadCancelDropsTables(t *testing.T) {
	srv := pg.Server(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	other, err := engine.Open(ctx, "postgres", engine.Options{DSN: srv.DSN(), Schema: "tpcc_cancel"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = Load(ctx, other, LoadConfig{Warehouses: 1, Progress: func(done, total int64) {
		if done > 150000 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled load: %v, want context.Canceled", err)
	}
	var n int
	if err := other.DB().QueryRowContext(context.Background(),
		`SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'tpcc_cancel'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d relations left in the schema after a cancelled load", n)
	}
}

// TestSQLiteThroughEngine loads and runs SQLite through the engine
// interface, as `numalab run oltp --engine sqlite` does.
func TestSQLiteThroughEngine(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "e.sqlite")
	eng, err := engine.Open(ctx, "sqlite", engine.Options{Path: path, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err := Load(ctx, eng, LoadConfig{Warehouses: 1, Seed: 42, Now: loadTime})
	if err != nil {
		eng.Discard()
		t.Fatal(err)
	}
	eng.Close()
	if fi, _ := os.Stat(path); st.Bytes != fi.Size() || st.Rows != sharedStatsRows(t) {
		t.Errorf("stats %+v for a %d-byte file", st, fi.Size())
	}
	eng, err = engine.Open(ctx, "sqlite", engine.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	w, err := Open(ctx, eng, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := openFile(t, loaded(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := makeInputs(ref, 50)
	if got, want := runInputs(t, w, in), runInputs(t, ref, in); !reflect.DeepEqual(got, want) {
		t.Error("the engine's SQLite answers differ from the file's")
	}
	if err := eng.SetDOP(ctx, 2); err == nil || !strings.Contains(err.Error(), "one thread") {
		t.Errorf("SetDOP(2) on SQLite: %v", err)
	}
}

func TestLoadEngineRefusesBadInput(t *testing.T) {
	eng, err := engine.Open(context.Background(), "duckdb",
		engine.Options{Path: filepath.Join(t.TempDir(), "x.duckdb"), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Discard()
	if _, err := Load(context.Background(), eng, LoadConfig{Warehouses: 0}); err == nil ||
		!strings.Contains(err.Error(), "not a positive count") {
		t.Errorf("W=0: %v", err)
	}
	if _, err := Open(context.Background(), eng, Options{}); !errors.Is(err, ErrNotTPCC) {
		t.Errorf("opening an empty DuckDB database: %v, want ErrNotTPCC", err)
	}
}

// BenchmarkEngineNext is the 50/50 mix on DuckDB and PostgreSQL, one
// stream, with the client process's CPU per call (on PostgreSQL the
// server's is not counted).
func BenchmarkEngineNext(b *testing.B) {
	for _, name := range otherEngines {
		b.Run(name, func(b *testing.B) {
			eng, _ := loadedEngine(b, name)
			w, err := Open(context.Background(), eng, Options{})
			if err != nil {
				b.Fatal(err)
			}
			s, err := w.NewStream(rand.New(rand.NewPCG(1, 1)))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			defer reportCPU(b, cpuSeconds())
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.Next(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSessionStatements: a PostgreSQL or MariaDB stream runs its session
// statements first, and a bad one stops it opening with the statement
// named; DuckDB refuses them.
func TestSessionStatements(t *testing.T) {
	ctx := context.Background()
	pgEng, _ := loadedEngine(t, "postgres")
	w, err := Open(ctx, pgEng,
		Options{Seed: 9, Session: []string{"SET track_io_timing = on", "SET log_min_duration_statement = -1"}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.OpenStream(ctx, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(ctx); err != nil {
		t.Error(err)
	}
	s.Close()
	w.opt.Session = []string{"SET no_such_setting_here = 1"}
	if _, err := w.OpenStream(ctx, rand.New(rand.NewPCG(1, 2))); err == nil ||
		!strings.Contains(err.Error(), `setting up the session with "SET no_such_setting_here = 1"`) {
		t.Errorf("a bad session statement: %v", err)
	}
	myEng, _ := loadedEngine(t, "mariadb")
	w, err = Open(ctx, myEng,
		Options{Seed: 9, Session: []string{"SET SESSION sql_log_off = 1", "SET SESSION long_query_time = 7"}})
	if err != nil {
		t.Fatal(err)
	}
	s, err = w.OpenStream(ctx, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	var lqt any
	err = s.x.(*callRunner).c.Query(ctx, "SELECT @@session.long_query_time",
		nil, func(v []any) error { lqt = v[0]; return nil })
	if err != nil || lqt != float64(7) {
		t.Errorf("mariadb stream's long_query_time %v (%v); want the session statement's 7", lqt, err)
	}
	if _, err := s.Next(ctx); err != nil {
		t.Error(err)
	}
	s.Close()
	duck, _ := loadedEngine(t, "duckdb")
	w, err = Open(ctx, duck, Options{Seed: 9, Session: []string{"SET threads = 1"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.OpenStream(ctx, rand.New(rand.NewPCG(1, 2))); err == nil ||
		!strings.Contains(err.Error(), "session statements are for PostgreSQL and MariaDB, not duckdb") {
		t.Errorf("duckdb with session statements: %v", err)
	}
}

// TestMariaDBLoadMatchesPostgres: the same seed and scale load the same
// rows into MariaDB as into PostgreSQL (per table: the row count, the sum
// of every integer column, of every money column in cents and of every
// text column's length), and the consistency check finds the same (no
// violation) on both.
func TestMariaDBLoadMatchesPostgres(t *testing.T) {
	ctx := context.Background()
	pgEng, _ := loadedEngine(t, "postgres")
	myEng, _ := loadedEngine(t, "mariadb")
	for _, tb := range tables {
		types := map[string]string{}
		for _, m := range colRE.FindAllStringSubmatch(tb.ddl, -1) {
			types[m[1]] = m[2]
		}
		aggs := []string{"count(*)"}
		for _, c := range tb.cols {
			switch types[c] {
			case "INTEGER":
				aggs = append(aggs, "CAST(coalesce(sum("+c+"), 0) AS BIGINT)")
			case "REAL":
				aggs = append(aggs, cents("coalesce(sum("+c+"), 0)"))
			case "TEXT":
				aggs = append(aggs, "CAST(coalesce(sum(char_length("+c+")), 0) AS BIGINT)")
			}
		}
		q := "SELECT " + strings.Join(aggs, ", ") + " FROM " + tb.name
		var got [2][]int64
		for i, eng := range []engine.Engine{pgEng, myEng} {
			got[i] = make([]int64, len(aggs))
			ptrs := make([]any, len(aggs))
			for j := range ptrs {
				ptrs[j] = &got[i][j]
			}
			if err := eng.DB().QueryRowContext(ctx, engine.SQLOf(eng.Name()).IntCasts(q)).Scan(ptrs...); err != nil {
				t.Fatalf("%s: %s: %v", eng.Name(), tb.name, err)
			}
		}
		if !reflect.DeepEqual(got[0], got[1]) {
			t.Errorf("%s: postgres %v, mariadb %v", tb.name, got[0], got[1])
		}
	}
	for _, eng := range []engine.Engine{pgEng, myEng} {
		if err := Check(ctx, eng); err != nil {
			t.Errorf("%s: %v", eng.Name(), err)
		}
	}
}
