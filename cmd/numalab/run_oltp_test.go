package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/memlat"
	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/pgserver/pgtest"
	"github.com/numalab/numalab/internal/result"
)

var (
	tpccOnce sync.Once
	tpccDir  string
	tpccErr  error
)

// tpccDB returns the path of a W=1 database loaded once per test binary by
// the command itself (which also exercises the load path).
func tpccDB(t testing.TB) string {
	t.Helper()
	tpccOnce.Do(func() {
		tpccDir, tpccErr = os.MkdirTemp("", "numalab-oltp-test-")
		if tpccErr != nil {
			return
		}
		_, stderr, err := runCLI(t, "run", "oltp", "--db", filepath.Join(tpccDir, "w1.db"), "--store",
			filepath.Join(tpccDir, "s.db"),
			"--streams", "1", "--duration", "200ms", "--warmup", "0s")
		if err != nil {
			tpccErr = err
			t.Log(stderr)
		}
	})
	if tpccErr != nil {
		t.Fatalf("loading the shared TPC-C database: %v", tpccErr)
	}
	return filepath.Join(tpccDir, "w1.db")
}

// pg is the managed PostgreSQL server the tests of this package share
// (those that run against a server of their own start it themselves).
var pg = pgtest.New(pgserver.Config{SharedBuffers: 32 << 20})

func TestMain(m *testing.M) {
	// Go's runtime opens its poller (an epoll and an eventfd descriptor)
	// the first time the process makes a pollable file, and keeps it. A
	// pipe makes it now, so that runChecked does not take the runtime's
	// descriptors for the first command's leak when a test runs alone.
	if r, w, err := os.Pipe(); err == nil {
		r.Close()
		w.Close()
	}
	waitChildren := startChildren() // the README's main job and the busy eval, beside the other tests
	os.Exit(pg.Main(m, func() {
		waitChildren()
		my.Stop()
		if tpccDir != "" {
			os.RemoveAll(tpccDir)
		}
	}))
}

func TestRunOLTPStoresEveryCell(t *testing.T) {
	db := tpccDB(t)
	st := filepath.Join(t.TempDir(), "s.db")
	out, _, err := runCLI(t, "run", "oltp", "--db", db, "--store", st, "--streams", "1,2",
		"--placement", "cpus=0;", "--duration", "1s", "--warmup", "300ms", "--trace", "50")
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 5 {
		t.Errorf("want a header and 4 rows, got:\n%s", out)
	}
	r := storedRun(t, st, 1)
	if r.Kind != "oltp" || r.Status != result.StatusComplete || r.Machine == nil || !strings.Contains(r.Headline, "tps") {
		t.Errorf("run = %s %s %q", r.Kind, r.Status, r.Headline)
	}
	checkStored(t, r)
	var cells []result.Cell
	for _, it := range r.Results {
		if it.Kind != "drive.Cell" {
			continue
		}
		var c result.Cell
		if err := json.Unmarshal(it.Body, &c); err != nil {
			t.Fatal(err)
		}
		cells = append(cells, c)
	}
	if len(cells) != 4 {
		t.Fatalf("%d cells stored, want 4", len(cells))
	}
	for _, c := range cells {
		if c.Total.Count == 0 || c.Total.Errors != 0 || c.TPS <= 0 || len(c.Types) != 2 || c.Usage == nil {
			t.Errorf("cell %d: count %d errors %d tps %.0f", c.Index, c.Total.Count, c.Total.Errors, c.TPS)
		}
		// Whether a cell reads from disk after the prewarm is the
		// machine's doing: another process's memory can evict the file's
		// pages in between (CI read 72 KiB so beside the emulated machines;
		// a loop dropping the page cache every 200 ms made cells read 5 MB).
		// What numalab controls is that the flag says what the counters do.
		if u := c.Usage; u != nil {
			if u.ReadFromDisk != (u.ProcReadBytes > u.OwnCodeReadBytes) {
				t.Errorf("cell %d: read_from_disk %v with %d bytes read, %d of them the binary's",
					c.Index, u.ReadFromDisk, u.ProcReadBytes, u.OwnCodeReadBytes)
			}
			if u.ReadFromDisk {
				t.Logf("cell %d read %d bytes from disk after the prewarm (%d of them the binary's); devices %v",
					c.Index, u.ProcReadBytes, u.OwnCodeReadBytes, u.Devices)
			}
		}
		if len(c.Trace) == 0 {
			t.Errorf("cell %d: no trace", c.Index)
		}
	}
	if got := cells[0].CPUs; len(got) != 1 || got[0] != 0 {
		t.Errorf("cell 0 CPUs = %v, want [0]", got)
	}
}

func TestRunOLTPSweepFile(t *testing.T) {
	db := tpccDB(t)
	dir := t.TempDir()
	f := filepath.Join(dir, "sweep.toml")
	os.WriteFile(f, []byte(`streams = [1]
duration = "200ms"
warmup = "0s"
repeat = 2
`), 0o644)
	out, _, err := runCLI(t, "run", "oltp", "-f", f, "--db", db, "--store", filepath.Join(dir, "s.db"), "--json")
	if err != nil {
		t.Fatal(err)
	}
	var cells []result.Cell
	if err := json.Unmarshal([]byte(out), &cells); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, out)
	}
	if len(cells) != 2 || cells[1].Repeat != 1 {
		t.Errorf("want 2 repeats, got %d cells", len(cells))
	}
	os.WriteFile(f, []byte("streamz = [1]\n"), 0o644)
	if _, _, err := runCLI(t, "run", "oltp", "-f", f, "--db", db, "--store", filepath.Join(dir, "s.db")); err == nil ||
		!strings.Contains(err.Error(), "streamz") {
		t.Errorf("unknown setting: %v", err)
	}
}

func TestRunOLTPInterrupted(t *testing.T) {
	db := tpccDB(t)
	st := filepath.Join(t.TempDir(), "s.db")
	// Ctrl-C comes 300 ms after the first cell is stored, so the second
	// (1 s long) is cut short however slow the machine is.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
			if storedCells(st) > 0 {
				time.Sleep(300 * time.Millisecond)
				cancel()
			}
		}
	}()
	var out, errb strings.Builder
	err := runChecked(t, ctx, []string{"run", "oltp", "--db", db, "--store", st, "--streams", "1,2", "--duration",
		"1s", "--warmup", "0s"}, &out, &errb)
	if err == nil {
		t.Fatal("an interrupted run returned no error")
	}
	r := storedRun(t, st, 1)
	if r.Status != result.StatusInterrupted {
		t.Errorf("status %s, want interrupted", r.Status)
	}
	var cut, full int
	for _, it := range r.Results {
		if it.Kind == "drive.Cell" {
			var c result.Cell
			json.Unmarshal(it.Body, &c)
			if c.Interrupted {
				cut++
			} else {
				full++
			}
		}
	}
	if full != 1 || cut != 1 {
		t.Errorf("%d full and %d cut-short cells kept, want 1 and 1\n%s", full, cut, errb.String())
	}
}

func TestRunOLTPBadInput(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("keep me\n"), 0o644)
	st := filepath.Join(dir, "s.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--warehouses", "0"}, "-warehouses: \"0\" is not valid: want a whole number from 1 to 2147483647"},
		{[]string{"--streams", "1,0"}, "at least 1"},
		{[]string{"--streams", "100000"}, "per logical CPU"},
		{[]string{"--placement", "node=3"}, "no NUMA node 3"},
		{[]string{"--placement", "cores=64"}, "only"},
		{[]string{"--data-node", "7"}, "is not a NUMA node"},
		{[]string{"--engine", "oracle"}, "-engine"},
		{[]string{"--db", notes}, "not a numalab TPC-C database"},
		{[]string{"--db", st}, "not a numalab TPC-C database"},
		{[]string{"--duration", "0s"}, "-duration"},
	} {
		args := append([]string{"run", "oltp", "--store", st, "--duration", "100ms"}, c.args...)
		_, _, err := runCLI(t, args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want it to say %q", c.args, err, c.want)
		}
	}
	if b, _ := os.ReadFile(notes); string(b) != "keep me\n" {
		t.Error("a file that is not a TPC-C database was changed")
	}
}

func TestCheckCommand(t *testing.T) {
	db := tpccDB(t)
	out, _, err := runCLI(t, "check", "--db", db)
	if err != nil || !strings.Contains(out, "consistent") {
		t.Errorf("check: %v %q", err, out)
	}
	if _, _, err := runCLI(t, "check", "--db", filepath.Join(t.TempDir(), "none.db")); err == nil {
		t.Error("check of a missing file succeeded")
	}
	junk := filepath.Join(t.TempDir(), "junk.db")
	os.WriteFile(junk, []byte("neither engine's file"), 0o644)
	if _, _, err := runCLI(t, "check", "--db", junk); err == nil || !strings.Contains(err.Error(), "give --engine") {
		t.Errorf("check of a file of no engine: %v, want it to ask for --engine", err)
	}
	if _, _, err := runCLI(t, "check", "--engine", "postgres", "--db", db); err == nil ||
		!strings.Contains(err.Error(), "give --dsn") {
		t.Errorf("check --engine postgres without --dsn: %v", err)
	}
}

// TestRunOLTPEngines runs tpcc-ro through the same driver on DuckDB and on
// a managed PostgreSQL server (which it starts and stops), loading W=1 into
// each, and checks the cells measured transactions without errors. The
// windows are 2 s: beside this package's other tests (the main job's eval
// in its child above all), tpcc-ro's Stock-Level call to a PostgreSQL
// server, 0.4 ms on a quiet machine, took up to 1.2 s from pgbench and
// 1.4 s from numalab here, and a cell of 500 ms once completed none.
func TestRunOLTPEngines(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: loads TPC-C into DuckDB and PostgreSQL (about a minute)")
	}
	for _, eng := range []string{"duckdb", "postgres"} {
		t.Run(eng, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"run", "oltp", "--engine", eng, "--store", filepath.Join(dir, "s.db"),
				"--streams", "1,2", "--duration", "2s", "--warmup", "200ms", "--json"}
			if eng == "duckdb" {
				args = append(args, "--db", filepath.Join(dir, "w1.duckdb"))
			}
			out, stderr, err := runCLI(t, args...)
			if err != nil && strings.Contains(err.Error(), "no call completed") {
				// A cell whose every call was still waiting at the end of
				// its window: the server not run for 2 s on an overloaded
				// machine (once in CI, beside the emulated guests, which
				// run at a higher priority). Measured again, once, with a
				// window three times as long, into a new store.
				t.Logf("%v; measuring again with --duration 6s", err)
				args[slices.Index(args, "--store")+1] = filepath.Join(dir, "s6.db")
				args[slices.Index(args, "--duration")+1] = "6s"
				out, stderr, err = runCLI(t, args...)
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			if eng == "duckdb" {
				// check tells the file's engine and finds the load consistent.
				if out, _, err := runCLI(t, "check", "--db", filepath.Join(dir, "w1.duckdb")); err != nil ||
					!strings.Contains(out, "consistent") {
					t.Errorf("check of the DuckDB load: %v %q", err, out)
				}
			}
			var cells []result.Cell
			if err := json.Unmarshal([]byte(out), &cells); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if len(cells) != 2 {
				t.Fatalf("%d cells, want 2", len(cells))
			}
			for _, c := range cells {
				if c.Engine != eng || c.Total.Count == 0 || c.Total.Errors != 0 {
					t.Errorf("cell %d on %s: %d calls, %d errors (%s)",
						c.Index, c.Engine, c.Total.Count, c.Total.Errors, c.Total.FirstError)
				}
			}
		})
	}
	_, _, err := runCLI(t, "run", "oltp", "--engine", "sqlite", "--dsn", "postgres://u:s3cret@h/db", "--store",
		filepath.Join(t.TempDir(), "s.db"))
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("--dsn with sqlite: %v", err)
	}
}

// TestNeighbourNotWithRate: --neighbour measures a tps ratio, which a
// fixed arrival rate makes 1 by construction: refused with why, before
// anything is stored.
func TestNeighbourNotWithRate(t *testing.T) {
	st := filepath.Join(t.TempDir(), "s.db")
	_, _, err := runCLI(t, "run", "oltp", "--neighbour", "--rate", "100", "--store", st)
	if err == nil || !strings.Contains(err.Error(), "-neighbour: not with --rate") ||
		!strings.Contains(err.Error(), "1 by construction") {
		t.Errorf("run oltp --neighbour --rate 100: %v, want it refused with why", err)
	}
	if _, err := os.Stat(st); err == nil {
		t.Error("a refused command made the store")
	}
}

// TestRunOLTPNeighbourHeadline: with --neighbour, the headline is the
// plain cells' alone: the pair at one stream (beside a bandwidth and a
// control neighbour) was once counted as two more repeats of the plain
// cell ("320 tps ... (median of 3 repeats)" where the plain cell did
// 6488).
func TestRunOLTPNeighbourHeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three tpcc cells beside neighbours (seconds)")
	}
	if runtime.NumCPU() < 2 {
		t.Skip("a neighbour needs a CPU beside the stream's")
	}
	st := filepath.Join(t.TempDir(), "s.db")
	_, _, err := runCLI(t, "run", "oltp", "--engine", "sqlite", "--db", tpccDB(t), "--streams", "1", "--neighbour",
		"--duration", "300ms", "--warmup", "0s", "--store", st)
	if err != nil {
		t.Fatal(err)
	}
	r := onlyRun(t, st)
	var plain []float64
	neighbours := 0
	for _, it := range r.Results {
		switch it.Kind {
		case string(result.KindCell):
			var c result.Cell
			if err := json.Unmarshal(it.Body, &c); err != nil {
				t.Fatal(err)
			}
			plain = append(plain, c.TPS)
		case string(memlat.KindNeighbourCell):
			neighbours++
		}
	}
	if len(plain) != 1 || neighbours != 2 {
		t.Fatalf("stored %d plain cells and %d neighbour cells, want 1 and 2", len(plain), neighbours)
	}
	if want := fmt.Sprintf("%.0f tps ", plain[0]); !strings.HasPrefix(r.Headline, want) ||
		strings.Contains(r.Headline, "median of") {
		t.Errorf("headline %q, want the plain cell's %q alone", r.Headline, want)
	}
}
