package insert

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/runconfig"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/topo"
)

// entries is a Recorder and a Progress that keep everything.
type entries struct {
	items []result.Entry
	notes []string
}

func (e *entries) Add(x result.Entry) error       { e.items = append(e.items, x); return nil }
func (e *entries) Say(string)                     {}
func (e *entries) Note(s string)                  { e.notes = append(e.notes, s) }
func (e *entries) Measured(sweep.Cell, *Measured) {}

func shortConfig(eng, db string) RunConfig {
	cfg := DefaultRunConfig()
	cfg.Engine, cfg.DB = eng, db
	cfg.Batch = 200
	cfg.Streams = []int{1, 2}
	cfg.Duration, cfg.Warmup = 1500*time.Millisecond, 300*time.Millisecond
	return cfg
}

// runSweep checks cfg, plans its cells on this machine and runs them.
func runSweep(t *testing.T, cfg RunConfig) ([]*Measured, *entries) {
	t.Helper()
	if err := cfg.Check("/"); err != nil {
		t.Fatal(err)
	}
	m, err := topo.FromSysfs("/")
	if err != nil {
		t.Fatal(err)
	}
	cells, _, err := sweep.Resolve(m, cfg.Spec(), cfg.Spread)
	if err != nil {
		t.Fatal(err)
	}
	rec := &entries{}
	got, err := sweep.Run(context.Background(), cfg.Plan(cells), NewSweep(cfg), rec, rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(cells) {
		t.Fatalf("%d cells measured, want %d", len(got), len(cells))
	}
	var rows int64
	for _, g := range got {
		st := g.Stats
		rows += st.Rows
		// A cell of a starved host may commit no batch in its window
		// (seen beside the emulated guests): none is no error, part of
		// one is.
		if st.Rows < 0 || st.Rows%int64(cfg.Batch) != 0 {
			t.Errorf("cell %d: %d rows, %.0f rows/s (%d errors: %s); want whole batches", st.Index, st.Rows, st.RowsPerSec,
				g.Cell.Total.Errors, g.Cell.Total.FirstError)
		}
		if st.Rows == 0 {
			t.Logf("cell %d committed no batch in its window", st.Index)
		}
		if want := st.RowsPerSec * RowBytes / 1e6; st.MBPerSec != want {
			t.Errorf("cell %d: %.3f MB/s, want %.3f", st.Index, st.MBPerSec, want)
		}
		if g.Cell.Usage == nil || st.CtxSwitchesPerSec <= 0 {
			t.Errorf("cell %d: no usage or context switches (%v)", st.Index, g.Cell.UsageError)
		}
		if len(g.Cell.Stopped) > 0 {
			t.Errorf("cell %d: streams stopped: %+v", st.Index, g.Cell.Stopped)
		}
	}
	if rows == 0 {
		t.Error("no cell committed a batch")
	}
	kinds := map[string]int{}
	for _, it := range rec.items {
		kinds[it.Kind()]++
	}
	if kinds[string(result.KindCell)] != len(cells) || kinds[string(KindCellStats)] != len(cells) ||
		kinds[string(engine.KindInfo)] != 1 {
		t.Errorf("stored %v; want a cell and its stats per cell and one engine info", kinds)
	}
	return got, rec
}

// tableRows counts the rows left in an embedded file's table.
func tableRows(t *testing.T, eng, path string) int64 {
	t.Helper()
	e, err := engine.Open(context.Background(), eng, engine.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var n int64
	if err := e.DB().QueryRow("SELECT count(*) FROM " + Table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSweepSQLiteShowsTheWriteLock(t *testing.T) {
	t.Parallel() // cells of fixed length on a file of its own
	path := filepath.Join(t.TempDir(), "ins.db")
	got, _ := runSweep(t, shortConfig("sqlite", path))
	two := got[1].Stats
	if two.Streams != 2 || two.LockWaitPct <= 0 {
		t.Errorf("2 SQLite writers waited %.1f%% of their time for the lock; want more than 0", two.LockWaitPct)
	}
	if !strings.Contains(two.Dominant, "write lock") {
		t.Errorf("dominant %q; want SQLite's write lock", two.Dominant)
	}
	// The last cell's rows are left; at least those of its window.
	if n := tableRows(t, "sqlite", path); n < two.Rows {
		t.Errorf("%d rows in the table, fewer than the last cell's %d", n, two.Rows)
	}
	// A second run reuses (empties and remakes) numalab's own file.
	runSweep(t, shortConfig("sqlite", path))
}

func TestSweepDuckDB(t *testing.T) {
	t.Parallel() // cells of fixed length on a file of its own
	path := filepath.Join(t.TempDir(), "ins.duckdb")
	got, _ := runSweep(t, shortConfig("duckdb", path))
	if n := tableRows(t, "duckdb", path); n < got[1].Stats.Rows {
		t.Errorf("%d rows in the table, fewer than the last cell's %d", n, got[1].Stats.Rows)
	}
	if got[0].Stats.Method != "appender" || got[0].Stats.Waits != nil {
		t.Errorf("duckdb cell: method %q, waits %v; want the appender and no wait samples",
			got[0].Stats.Method, got[0].Stats.Waits)
	}
}

func TestPostgres(t *testing.T) {
	t.Parallel() // cells of fixed length on a server of its own
	ctx := context.Background()
	srv, err := pgserver.Start(ctx, pgserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	// A table of that name that numalab's insert workload did not make.
	eng, err := engine.Open(ctx, "postgres", engine.Options{DSN: srv.DSN()})
	if err != nil {
		t.Fatal(err)
	}
	db := eng.DB()
	mustExec(t, db, "CREATE TABLE numalab."+Table+" (x int)", "INSERT INTO numalab."+Table+" VALUES (42)")
	cfg := shortConfig("postgres", "")
	cfg.DSN = srv.DSN()
	err = cfg.Check("/")
	if err == nil {
		_, err = NewSweep(cfg).Open(ctx, &entries{})
	}
	if !errors.Is(err, ErrNotOurs) {
		t.Fatalf("foreign table: got %v, want ErrNotOurs", err)
	}
	var x int
	if err := db.QueryRow("SELECT x FROM numalab." + Table).Scan(&x); err != nil || x != 42 {
		t.Fatalf("foreign table changed: %v, %d", err, x)
	}
	mustExec(t, db, "DROP TABLE numalab."+Table)

	for _, c := range []struct {
		method  string
		indexes bool
		key     string
		idx     int // indexes the table has
	}{{"copy", true, "none", 2}, {"insert", false, "none", 0}, {"copy", false, "shared", 1},
		{"insert", true, "shared", 2}, {"copy", false, "stream", 1}} {
		cfg.Method, cfg.Indexes, cfg.Key = c.method, c.indexes, c.key
		got, _ := runSweep(t, cfg)
		// A cell that committed no batch (a starved host: runSweep logs
		// it) may have no wait samples either; the sweep must have some.
		sampled := 0
		for _, g := range got {
			if g.Stats.Method != c.method || len(g.Stats.Waits) == 0 && g.Stats.Rows > 0 {
				t.Errorf("%s cell %d: method %q, %d rows, waits %v; want wait samples", c.method, g.Stats.Index, g.Stats.Method,
					g.Stats.Rows, g.Stats.Waits)
			}
			sampled += min(len(g.Stats.Waits), 1)
		}
		if sampled == 0 {
			t.Errorf("%s: no cell has wait samples", c.method)
		}
		var n int64
		if err := db.QueryRow("SELECT count(*) FROM numalab." + Table).Scan(&n); err != nil || n < got[1].Stats.Rows {
			t.Errorf("%s: %d rows left (%v), want at least %d", c.method, n, err, got[1].Stats.Rows)
		}
		var idx int
		db.QueryRow("SELECT count(*) FROM pg_indexes WHERE schemaname = 'numalab' AND tablename = $1", Table).Scan(&idx)
		if idx != c.idx {
			t.Errorf("%s, key %s: %d indexes, want %d", c.method, c.key, idx, c.idx)
		}
		n, distinct, lo, hi := keyIDs(t, db, "numalab."+Table)
		// An identity skips the values of batches rolled back when a window
		// closes mid-batch: distinct and from 1 up, not 1..n.
		if distinct != n || (c.key == "shared" && (lo < 1 || hi < n)) {
			t.Errorf("%s, key %s: %d rows, %d distinct ids %d..%d; want distinct ids from the identity (1 up) when shared",
				c.method, c.key, n, distinct, lo, hi)
		}
	}
	t.Run("orphan", func(t *testing.T) { checkEndSessions(t, eng) })
	eng.Close()
}

func mustExec(t *testing.T, db *sql.DB, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func TestRefusesFilesNotOurs(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ eng, name, content string }{
		{"sqlite", "text.db", "not a database"},
		{"duckdb", "text.duckdb", "not a database"},
	} {
		path := filepath.Join(dir, c.name)
		os.WriteFile(path, []byte(c.content), 0o644)
		cfg := shortConfig(c.eng, path)
		_, err := NewSweep(cfg).Open(context.Background(), &entries{})
		if !errors.Is(err, ErrNotOurs) {
			t.Errorf("%s %s: got %v, want ErrNotOurs", c.eng, c.name, err)
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, []byte(c.content)) {
			t.Errorf("%s: file changed", path)
		}
	}
	// An SQLite database that is not numalab's insert file.
	path := filepath.Join(dir, "other.db")
	db, err := engine.CreateSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "CREATE TABLE "+Table+" (x)", "INSERT INTO "+Table+" VALUES (7)")
	db.Close()
	before, _ := os.ReadFile(path)
	if _, err := NewSweep(shortConfig("sqlite", path)).Open(context.Background(),
		&entries{}); !errors.Is(err, ErrNotOurs) {
		t.Errorf("foreign SQLite file: got %v, want ErrNotOurs", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("foreign SQLite file changed")
	}
	// An SQLite file given as DuckDB's.
	if _, err := NewSweep(shortConfig("duckdb", path)).Open(context.Background(),
		&entries{}); !errors.Is(err, ErrNotOurs) {
		t.Errorf("SQLite file as duckdb: got %v, want ErrNotOurs", err)
	}
	// Stopped while looking (Ctrl-C): a cancellation, no verdict on the
	// file, nothing removed.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := claimFile(ctx, "sqlite", path); !errors.Is(err, context.Canceled) || errors.Is(err, ErrNotOurs) {
		t.Errorf("claiming a file, cancelled: got %v, want a cancellation, not a refusal", err)
	}
	// A file that cannot be read is named so, not called foreign.
	unreadable := filepath.Join(dir, "unreadable")
	if err := os.Mkdir(unreadable, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := claimFile(context.Background(), "sqlite", unreadable); err == nil || errors.Is(err, ErrNotOurs) {
		t.Errorf("claiming a directory: got %v, want it named as unreadable, not as foreign", err)
	}
}

func TestCheckRefusesBadBatches(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "proc"), 0o755)
	os.WriteFile(filepath.Join(root, "proc", "meminfo"), []byte("MemTotal: 8388608 kB\nMemAvailable: 4194304 kB\n"), 0o644)
	for _, c := range []struct {
		batch   int
		streams []int
		want    string
	}{
		{0, []int{1}, `-batch: "0" is not a positive row count`},
		{-5, []int{1}, `-batch: "-5" is not a positive row count`},
		// 4 GiB available: half of it over 4 streams of 256 bytes a row.
		{2<<20 + 1, []int{1, 4}, "larger than memory allows: 4 streams × 2097153 rows × 256 bytes is 2048 MiB, more " +
			"than half of the 4096 MiB available (try at most 2097152)"},
	} {
		cfg := shortConfig("sqlite", "")
		cfg.Batch, cfg.Streams = c.batch, c.streams
		if err := cfg.Check(root); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("batch %d: got %v, want %q", c.batch, err, c.want)
		}
	}
	cfg := shortConfig("sqlite", "")
	cfg.Batch, cfg.Streams = 2<<20, []int{4} // exactly half: allowed
	if err := cfg.Check(root); err != nil {
		t.Errorf("batch at the limit: %v", err)
	}
	cfg = shortConfig("duckdb", "")
	cfg.Method, cfg.Indexes = "insert", true
	err := cfg.Check(root)
	for _, want := range []string{`-method: "insert" is for --engine postgres`,
		`-indexes: "true" is for --engine postgres`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
}

func TestFindDrop(t *testing.T) {
	seen := []CellStats{
		{Index: 0, Streams: 1, RowsPerSec: 1000},
		{Index: 1, Streams: 2, RowsPerSec: 1800},
		{Index: 2, Streams: 1, Placement: "node=1", RowsPerSec: 5000},
		{Index: 3, Streams: 1, Repeat: 1, RowsPerSec: 9000},
	}
	for _, c := range []struct {
		cell CellStats
		want string
	}{
		{CellStats{Engine: "postgres", Index: 4, Streams: 4, RowsPerSec: 1700, Dominant: "LWLock:WALWrite (40% of samples)"},
			"postgres on all CPUs: 4 streams load 1700 rows/s, 6% less than 2 streams (1800 rows/s); dominant wait: " +
				"LWLock:WALWrite (40% of samples)"},
		{CellStats{Engine: "postgres", Index: 4, Streams: 4, RowsPerSec: 1720}, ""},                  // within 5%
		{CellStats{Engine: "sqlite", Index: 4, Streams: 2, Placement: "node=0", RowsPerSec: 10}, ""}, // no earlier cell there
		{CellStats{Engine: "sqlite", Index: 4, Streams: 1, RowsPerSec: 10}, ""},                      // no fewer streams
	} {
		f, ok := findDrop(seen, c.cell)
		if ok != (c.want != "") || f.Text != c.want {
			t.Errorf("cell %+v: got %q (%v), want %q", c.cell, f.Text, ok, c.want)
		}
	}
}

func TestWaitShares(t *testing.T) {
	got := waitShares(map[string]int{"CPU": 6, "LWLock:WALWrite": 3, "IO:DataFileExtend": 3})
	want := []WaitShare{{Event: "CPU", Samples: 6, Pct: 50}, {Event: "IO:DataFileExtend", Samples: 3, Pct: 25},
		{Event: "LWLock:WALWrite", Samples: 3, Pct: 25}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("share %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if waitEvent("", "", "active") != "CPU" || waitEvent("Client", "ClientRead", "idle") != "Client:ClientRead" ||
		waitEvent("", "", "idle") != "none (idle)" {
		t.Error("waitEvent names")
	}
}

// TestMaxRowsStopsStreams: --max-rows is the most a cell writes, over
// all its streams, in whole batches; a stream that wrote its share stops
// without an error, saying which limit stopped it.
func TestMaxRowsStopsStreams(t *testing.T) {
	t.Parallel() // files of its own
	m, err := topo.FromSysfs("/")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		streams, batch   int
		maxRows, written int64
	}{
		{2, 100, 1000, 1000},
		{2, 1000, 1500, 1000}, // one whole batch fits: stream 1 writes none
		{3, 100, 1000, 1000},  // 10 batches: 4, 3 and 3
		{3, 100, 1050, 1000},
	} {
		cfg := shortConfig("sqlite", filepath.Join(t.TempDir(), "ins.db"))
		cfg.Streams, cfg.Batch, cfg.MaxRows = []int{c.streams}, c.batch, c.maxRows
		// A stream's stop counts only inside the window: 4 s leaves a
		// starved host's last stream time to be scheduled (1.5 s did not,
		// beside two emulated guests).
		cfg.Warmup, cfg.Duration = 0, 4*time.Second
		if err := cfg.Check("/"); err != nil {
			t.Fatal(err)
		}
		cells, _, err := sweep.Resolve(m, cfg.Spec(), cfg.Spread)
		if err != nil {
			t.Fatal(err)
		}
		got, err := sweep.Run(context.Background(), cfg.Plan(cells), NewSweep(cfg), &entries{}, &entries{})
		if err != nil {
			t.Fatal(err)
		}
		cell := got[0].Cell
		if len(cell.Stopped) != c.streams || !strings.HasPrefix(cell.Stopped[0].Reason,
			fmt.Sprintf("wrote its share of --max-rows %d over %d streams", c.maxRows, c.streams)) {
			t.Errorf("%+v: stopped %+v; want every stream stopped at its share of --max-rows", c, cell.Stopped)
		}
		if cell.Total.Errors != 0 {
			t.Errorf("%+v: %d errors; a stream at its share is not one", c, cell.Total.Errors)
		}
		if n := tableRows(t, "sqlite", cfg.DB); n != c.written {
			t.Errorf("%+v: %d rows in the table; want %d", c, n, c.written)
		}
	}
	cfg := shortConfig("sqlite", filepath.Join(t.TempDir(), "ins.db"))
	cfg.Batch, cfg.MaxRows = 1000, 999
	if err := cfg.Check("/"); err == nil ||
		!strings.Contains(err.Error(), `-max-rows: "999" is less than one batch (--batch 1000)`) {
		t.Errorf("--max-rows below a batch: %v", err)
	}
}

func TestDominant(t *testing.T) {
	pg := &Sweep{cfg: RunConfig{Common: runconfig.Common{Engine: "postgres"}}}
	for _, c := range []struct {
		waits []WaitShare
		want  string
	}{
		{[]WaitShare{{Event: "CPU", Samples: 5, Pct: 50}, {Event: "LWLock:WALWrite", Samples: 3, Pct: 30},
			{Event: "Client:ClientRead", Samples: 2, Pct: 20}}, "LWLock:WALWrite (30% of samples)"},
		{[]WaitShare{{Event: "Client:ClientRead", Samples: 6, Pct: 60}, {Event: "CPU", Samples: 4, Pct: 40}},
			"Client:ClientRead (60% of samples): the backends waited for the client"},
		{[]WaitShare{{Event: "none (idle)", Samples: 6, Pct: 60}, {Event: "CPU", Samples: 4, Pct: 40}},
			"none (idle) (60% of samples): the backends waited for the client"},
		{[]WaitShare{{Event: "CPU", Samples: 4, Pct: 100}}, "none: the backends were running (CPU)"},
		{[]WaitShare{{Event: "CPU", Samples: 5, Pct: 50}, {Event: "LWLock:BufferContent", Samples: 3, Pct: 30}},
			"LWLock:BufferContent (30% of samples): the backends queued for one page's lock (a hot page)"},
		{nil, "no samples"},
	} {
		if got := pg.dominant(CellStats{Waits: c.waits}); got != c.want {
			t.Errorf("%v: got %q, want %q", c.waits, got, c.want)
		}
	}
}

// keyIDs reads what the ids of an embedded file's table say about the
// key: rows, distinct ids, the smallest and largest.
func keyIDs(t *testing.T, db *sql.DB, table string) (n, distinct, lo, hi int64) {
	t.Helper()
	if err := db.QueryRow("SELECT count(*), count(DISTINCT id), min(id), max(id) FROM "+table).Scan(&n, &distinct,
		&lo, &hi); err != nil {
		t.Fatal(err)
	}
	return n, distinct, lo, hi
}

// TestKeys loads with each key on the embedded engines: a shared key
// numbers the rows 1..n from the engine's one sequence, a per-stream key
// carries each stream's range, and both are the primary key (a second
// row with a taken id is refused).
func TestKeys(t *testing.T) {
	t.Parallel() // cells of fixed length on files of its own
	for _, eng := range []string{"sqlite", "duckdb"} {
		for _, key := range []string{"stream", "shared"} {
			t.Run(eng+"/"+key, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "ins."+eng)
				cfg := shortConfig(eng, path)
				cfg.Key, cfg.Streams = key, []int{2}
				got, _ := runSweep(t, cfg)
				if got[0].Stats.Key != key {
					t.Errorf("stats key %q, want %q", got[0].Stats.Key, key)
				}
				e, err := engine.Open(context.Background(), eng, engine.Options{Path: path})
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				n, distinct, lo, hi := keyIDs(t, e.DB(), Table)
				if n == 0 || distinct != n {
					t.Fatalf("%d rows, %d distinct ids; want every id once", n, distinct)
				}
				switch key {
				case "shared":
					if lo < 1 || hi-lo+1 != n {
						t.Errorf("ids %d..%d for %d rows; want one sequence without gaps", lo, hi, n)
					}
				case "stream":
					var streams int64
					if err := e.DB().QueryRow("SELECT count(DISTINCT id >> 40) FROM " +
						Table).Scan(&streams); err != nil || streams != 2 {
						t.Errorf("%d ranges of ids (%v); want one per stream, 2", streams, err)
					}
				}
				if _, err := e.DB().Exec("INSERT INTO "+Table+" (id, stream, k, v, pad) VALUES (?, 0, 0, 0, '')", lo); err == nil {
					t.Errorf("a second row with id %d was taken; want the primary key to refuse it", lo)
				}
			})
		}
	}
}
