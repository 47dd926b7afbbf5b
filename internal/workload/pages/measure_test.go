package pages

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/sentinel"
	"github.com/numalab/numalab/internal/workload/sqlscript"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

var (
	w1Once sync.Once
	w1Dir  string
	w1Err  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if w1Dir != "" {
		os.RemoveAll(w1Dir)
	}
	os.Exit(code)
}

// w1 is a one-warehouse tpcc database, loaded once for the package's
// tests (seconds).
func w1(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("loads a tpcc database (seconds)")
	}
	w1Once.Do(func() {
		if w1Dir, w1Err = os.MkdirTemp("", "pages-test-"); w1Err != nil {
			return
		}
		path := filepath.Join(w1Dir, "w1.db")
		var w *tpcc.Workload
		w, _, w1Err = tpcc.Prepare(context.Background(),
			tpcc.Source{Engine: "sqlite", Where: engine.Options{Path: path}, Load: tpcc.LoadConfig{Warehouses: 1, Seed: 1}})
		if w1Err == nil {
			w.Engine().Close()
		}
	})
	if w1Err != nil {
		t.Fatal(w1Err)
	}
	return filepath.Join(w1Dir, "w1.db")
}

// testConfig is cfg for the tests: pairs of short cells on CPU 0.
func testConfig(db string, pairs, repeats int, cell time.Duration) RunConfig {
	c := DefaultRunConfig()
	c.DB, c.CPU, c.Pairs, c.Repeats, c.Cell = db, 0, pairs, repeats, cell
	return c
}

// TestPagePoints runs the experiment's cells on a one-warehouse tpcc
// database: the two images are backed as advised (checked in
// proc/self/smaps where the kernel gives huge pages at all), every cell
// ran as many hot transactions as cold ones, at the latency of its memory
// or of the caches, and the cells the sentinel kept are what the fit saw.
// It asserts what numalab controls, not the machine's speed.
func TestPagePoints(t *testing.T) {
	path := w1(t)
	mem, err := sentinel.NewMemory(sentinel.MemoryBytes(0))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Free()
	var heard []string
	pp, err := Measure(context.Background(), testConfig(path, 3, 1, 200*time.Millisecond), 3, 256<<10,
		mem, func(c calib.FitCell) { heard = append(heard, c.Label) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(heard) != len(pp.Cells) || heard[0] != "pair 1, 4 KiB pages, cold" {
		t.Errorf("progress heard of %q; want every one of the %d cells in order", heard, len(pp.Cells))
	}
	if len(pp.Memory) != 3 || !pp.Memory[hotMemory].Hot || pp.Memory[hotMemory].ChainBytes != 256<<10 {
		t.Fatalf("memory %+v, want 4 KiB and 2 MiB pages, then the caches with a chain of 256 KiB", pp.Memory)
	}
	if m := pp.Memory[0]; m.DataHuge != 0 || m.ChainHuge != 0 {
		t.Errorf("the 4 KiB image is %.0f%% and its chain %.0f%% huge pages, want none (MADV_NOHUGEPAGE)",
			100*m.DataHuge, 100*m.ChainHuge)
	}
	thp, _ := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if strings.Contains(string(thp), "[never]") || len(thp) == 0 {
		t.Logf("transparent huge pages are off here (%q): the 2 MiB image cannot get any", thp)
	} else if m := pp.Memory[1]; m.DataHuge < 0.5 || m.ChainHuge < 0.5 {
		t.Errorf("the 2 MiB image is %.0f%% and its chain %.0f%% huge pages with THP %q, want most (MADV_HUGEPAGE)",
			100*m.DataHuge, 100*m.ChainHuge, thp)
	}
	for i, m := range pp.Memory {
		cells := 0
		for _, c := range pp.Cells {
			if c.Memory == i && c.ChainNS > 0 {
				cells++
			}
		}
		if len(m.SamplesNS) != 2+cells || m.Hot != (cells == 0) || !(m.LatencyNS > 0) || !m.Hot && m.ChainBytes < 80<<20 {
			t.Errorf("%s: chain latency %v ns from %d samples over %d bytes, %d cells timed; want two samples "+
				"(before and after) and one after each cold cell, as large as the image", m.Name, m.LatencyNS, len(m.SamplesNS),
				m.ChainBytes, cells)
		}
	}
	// 3 pairs of cells, each stored as its cold and its hot runs, and at
	// most one repeat: a sentinel sample at the start, after every cell
	// and before the repeat.
	first := 0
	for k, c := range pp.Cells {
		if !c.Repeat {
			first++
		}
		if hot := k%2 == 1; hot != (c.Memory == hotMemory) ||
			hot && (c.Txns != pp.Cells[k-1].Txns || c.Before != pp.Cells[k-1].Before) {
			t.Errorf("cell %d (%s) in memory %d with %d transactions: want cold and hot alternating, a hot cell as "+
				"many transactions as its cold one", k+1, c.Label, c.Memory, c.Txns)
		}
	}
	if first != 12 || len(pp.Cells) > 14 || len(pp.Sentinel.Samples) != 7+2*(len(pp.Cells)-12)/2 {
		t.Fatalf("%d cells (%d first runs), %d sentinel samples; want 12 first runs, at most one repeat, and a sample "+
			"more than cold cells", len(pp.Cells), first, len(pp.Sentinel.Samples))
	}
	if len(pp.Verdict.MemDeviation) != len(pp.Sentinel.Samples) {
		t.Errorf("the memory reference judged in %d of %d sentinel samples, want all", len(pp.Verdict.MemDeviation),
			len(pp.Sentinel.Samples))
	}
	kept := 0
	for k, c := range pp.Cells {
		if !(c.TPSPerCore > 0) || c.Txns == 0 {
			t.Errorf("cell %d (%s) ran no transactions", k+1, c.Label)
		}
		want := pp.Memory[c.Memory].LatencyNS
		if c.Memory != hotMemory {
			want = c.ChainNS // its own chain, timed right after it
		}
		if !(want > 0) || c.LatencyNS != want || c.GHz != 3 {
			t.Errorf("cell %s at %v ns, %v GHz; want %v ns (its chain's when cold, the caches' when hot) and 3 GHz", c.Label,
				c.LatencyNS, c.GHz, want)
		}
		coreOff := func(k int) bool { return math.Abs(pp.Verdict.Deviation[k]) > pp.Verdict.Tolerance }
		if c.After != c.Before+1 || c.Off != (coreOff(c.Before) || coreOff(c.After)) {
			t.Errorf("cell %s bracketed by samples %d and %d, off %v, verdict %+v", c.Label, c.Before,
				c.After, c.Off, pp.Verdict)
		}
		if !c.Off {
			kept++
		}
		if (c.Counters == nil) == (pp.CountersReason == "" && c.NoCounters == "") {
			t.Errorf("cell %s: counters %v with reasons %q and %q: want one or the other", c.Label, c.Counters,
				pp.CountersReason, c.NoCounters)
		}
	}
	switch {
	case pp.Fit != nil && pp.Fit.Points != kept:
		t.Errorf("fit of %d points, %d cells kept", pp.Fit.Points, kept)
	case pp.Fit == nil && pp.FitError == "":
		t.Error("no fit and no reason")
	}
	t.Logf("%s", strings.Join(pp.Lines(), "\n"))
	if l := pp.Lines(); len(l) < 5 || !strings.Contains(strings.Join(l, "\n"), "hardware counters") {
		t.Errorf("summary lines %q", l)
	}
}

// TestMeasureStopped: a run stopped part way (Ctrl-C) returns the cells
// it measured, fitted, with ctx's error; one stopped before its first
// cell returns nothing to store.
func TestMeasureStopped(t *testing.T) {
	path := w1(t)
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	f, err := Measure(ctx, testConfig(path, 50, 0, 100*time.Millisecond), 3, 256<<10, nil, func(calib.FitCell) {
		if n++; n == 4 { // two cells, each cold and hot
			cancel()
		}
	}, nil)
	if !errors.Is(err, context.Canceled) || f == nil || len(f.Cells) != 4 || f.Fit == nil && f.FitError == "" {
		t.Fatalf("stopped after two cells: %v, fit %+v; want context.Canceled and the two cells, fitted", err, f)
	}
	f, err = Measure(ctx, testConfig(path, 2, 0, 100*time.Millisecond), 3, 256<<10, nil, nil, nil)
	if !errors.Is(err, context.Canceled) || f != nil && len(f.Cells) > 0 {
		t.Errorf("stopped before the start: %v, %+v; want context.Canceled and no cells", err, f)
	}
}

// failingCounters are open counters whose read number fail fails (1: the
// read at the cell's start, 2: the one after its first cold run, 3: after
// its first hot run, 0: none); each read counts 1000 instructions and 10
// misses more.
type failingCounters struct{ reads, fail int }

func (c *failingCounters) Read() ([]uint64, error) {
	c.reads++
	if c.reads == c.fail {
		return nil, errors.New("reading the instructions counter: bad file descriptor")
	}
	return []uint64{uint64(1000 * c.reads), uint64(10 * c.reads)}, nil
}

func (c *failingCounters) Close() {}

// TestCellCounterReadFails: a cell whose counters opened but could not be
// read at its start or between its runs is kept, uncounted, with the
// reason, and the experiment goes on to the next cell (a failed read
// aborted it); a cell whose reads succeed stores the counts of its cold
// runs on its cold cell and of its hot runs on its hot one.
func TestCellCounterReadFails(t *testing.T) {
	b, err := os.ReadFile(w1(t))
	if err != nil {
		t.Fatal(err)
	}
	im, err := newImage("/", b, false)
	if err != nil {
		t.Fatal(err)
	}
	defer im.free()
	conn, err := openImageConn(context.Background(), im, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.close()
	f := &calib.MeasuredFit{GHz: 3, Memory: []calib.FitMemory{{Name: "4 KiB pages"}}}
	chain, err := memlat.NewChase(1<<20, memlat.Pages4K)
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Free()
	r := &pageRun{ctx: context.Background(), conns: [2]*pageConn{conn}, chains: [3]*memlat.DRAMChase{chain}, f: f}
	f.Memory = append(f.Memory, calib.FitMemory{}, calib.FitMemory{Name: "the caches", Hot: true})
	f.Sentinel.Take("start")
	for _, fail := range []int{1, 2, 3, 0} {
		conn.counters = func() (cellCounters, string) { return &failingCounters{fail: fail}, "" }
		if err := r.cell(0, fmt.Sprintf("read %d fails", fail), 20*time.Millisecond, false); err != nil {
			t.Fatalf("read %d fails: %v", fail, err)
		}
	}
	if len(f.Cells) != 8 {
		t.Fatalf("%d cells, want 8: each cell's cold and hot runs", len(f.Cells))
	}
	for _, c := range f.Cells[:6] {
		if c.Counters != nil || !strings.Contains(c.NoCounters, "bad file descriptor") || c.Txns == 0 {
			t.Errorf("%s: counters %+v, reason %q, %d transactions; want none, the read's error, and the cell run", c.Label,
				c.Counters, c.NoCounters, c.Txns)
		}
	}
	for _, c := range f.Cells[6:] {
		if n := uint64(c.Txns); c.NoCounters != "" || c.Counters == nil || c.Counters.Instructions != 1000*n ||
			c.Counters.LLCMisses != 10*n {
			t.Errorf("%s: counters %+v over %d transactions, reason %q; want 1000 instructions and 10 misses a run", c.Label,
				c.Counters, n, c.NoCounters)
		}
	}
	if l := f.CounterLine(); !strings.Contains(l, "6 kept cell(s) not counted") ||
		!strings.Contains(l, "bad file descriptor") {
		t.Errorf("counter line %q does not name the uncounted cells", l)
	}
}

// TestColdHotSameInputs: the stream over an image, reseeded alike, runs
// the same transactions: a pair's hot run repeats its cold run's.
func TestColdHotSameInputs(t *testing.T) {
	b, err := os.ReadFile(w1(t))
	if err != nil {
		t.Fatal(err)
	}
	im, err := newImage("/", b, false)
	if err != nil {
		t.Fatal(err)
	}
	defer im.free()
	conn, err := openImageConn(context.Background(), im, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.close()
	tx := conn.tx.(*tpccTwice)
	var kinds [2][]int
	for range 20 {
		for i := range 2 {
			tx.ready(i == 1)
			k, err := tx.stream.Next(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			kinds[i] = append(kinds[i], k)
		}
	}
	if fmt.Sprint(kinds[0]) != fmt.Sprint(kinds[1]) {
		t.Errorf("cold and hot, the stream ran %v then %v", kinds[0], kinds[1])
	}
}

// TestScriptOnSQLiteImage runs a script of the user's that reads, on an
// image of its SQLite database, and stores the fit as SQLite's of the
// script; a script that writes fails at its write, naming the statement
// and why (the image is read-only), and the file is unchanged.
func TestScriptOnSQLiteImage(t *testing.T) {
	dir := t.TempDir()
	db, read, write := filepath.Join(dir, "kv.db"), filepath.Join(dir, "read.sql"), filepath.Join(dir, "write.sql")
	eng, err := engine.Open(context.Background(), "sqlite", engine.Options{Path: db, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"CREATE TABLE kv (k INTEGER PRIMARY KEY, v INTEGER NOT NULL)",
		"WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < 5000) INSERT INTO kv SELECT k, k FROM n"} {
		if _, err := eng.DB().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	for file, text := range map[string]string{
		read:  "\\set k random(1, 5000)\nSELECT v FROM kv WHERE k = :k;\n",
		write: "\\set k random(1, 5000)\nSELECT v FROM kv WHERE k = :k;\nUPDATE kv SET v = v + 1 WHERE k = :k;\n",
	} {
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(db, 1, 0, 30*time.Millisecond)
	sc := sqlscript.DefaultRunConfig()
	sc.Scripts = []string{read}
	cfg.Script = &sc
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	f, err := Measure(context.Background(), cfg, 3, 256<<10, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.FitEngine() != "sqlite" || f.FitWorkload() != "read.sql" || len(f.Cells) != 4 ||
		!strings.HasPrefix(f.What, "your scripts (read.sql, read-only) on SQLite") {
		t.Errorf("fit of %s's %s, %d cells, what %q; want SQLite's read.sql, two cells cold and hot", f.FitEngine(),
			f.FitWorkload(), len(f.Cells), f.What)
	}
	for _, c := range f.Cells {
		if c.Txns == 0 {
			t.Errorf("%s ran no transaction", c.Label)
		}
	}
	sc.Scripts = []string{write}
	_, err = Measure(context.Background(), cfg, 3, 256<<10, nil, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "write.sql:3: UPDATE kv SET v = v + 1 WHERE k = :k") ||
		!strings.Contains(err.Error(), "read-only") {
		t.Errorf("a script that writes, on the image: %v; want its UPDATE named and the image said to be read-only", err)
	}
	if after, err := os.ReadFile(db); err != nil || string(after) != string(before) {
		t.Errorf("the database file changed (%v)", err)
	}
	sc.Init = read
	if err := cfg.Check(); err == nil ||
		!strings.Contains(err.Error(), `-init: "`+read+`" is for --engine postgres or mariadb`) {
		t.Errorf("--init on SQLite: %v; want it refused", err)
	}
}
