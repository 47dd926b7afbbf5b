package engine

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// openWithin opens the DuckDB file at path read-only, failing the test when
// the open has not returned after d: DuckDB's instance cache waiting for a
// database that something still holds never returns.
func openWithin(t *testing.T, path string, d time.Duration) (Engine, error) {
	t.Helper()
	type opened struct {
		eng Engine
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		eng, err := Open(context.Background(), "duckdb", Options{Path: path})
		ch <- opened{eng, err}
	}()
	select {
	case o := <-ch:
		return o.eng, o.err
	case <-time.After(d):
		t.Fatalf("opening %s did not return in %v (DuckDB's instance cache spins)", path, d)
		return nil, nil
	}
}

// parallelQuery takes milliseconds on 100,000 rows at 2 threads.
const parallelQuery = "SELECT grp, count(DISTINCT name), sum(price * id) FROM t GROUP BY grp ORDER BY 3 DESC"

// runCell runs streams that loop over parallelQuery for d, then cancels
// their calls in flight (as a cell's window closing does) and closes them.
func runCell(t *testing.T, eng Engine, streams int, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range streams {
		c, err := eng.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			for ctx.Err() == nil {
				c.Query(ctx, parallelQuery, nil, func([]any) error { return nil })
			}
		}()
	}
	time.Sleep(d)
	cancel()
	wg.Wait()
}

// TestDuckDBReopen opens, closes and reopens one file 200 times in one
// process, with no cell between and with a cell whose queries are still
// running when it is cut. Before the registry and the interrupt grace,
// the rounds with cells hung in the first few reopens at threads = 2.
func TestDuckDBReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.duckdb")
	eng, err := Open(context.Background(), "duckdb", Options{Path: path, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	loadNumbers(t, eng, 100000)
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	dop := min(2, runtime.NumCPU())
	for _, withCell := range []bool{false, true} {
		rounds := 200
		if withCell && testing.Short() {
			rounds = 20
		}
		start := time.Now()
		for i := range rounds {
			eng, err := openWithin(t, path, 30*time.Second)
			if err != nil {
				t.Fatalf("round %d (cell %v): %v", i, withCell, err)
			}
			if withCell {
				if err := eng.SetDOP(context.Background(), dop); err != nil {
					t.Fatal(err)
				}
				runCell(t, eng, 2, time.Duration(5+i%7*4)*time.Millisecond)
			}
			if err := eng.Close(); err != nil {
				t.Fatalf("round %d (cell %v): closing: %v", i, withCell, err)
			}
			if n := DuckFilesOpen(); n != 0 {
				t.Fatalf("round %d (cell %v): %d DuckDB files still open after Close", i, withCell, n)
			}
		}
		t.Logf("%d rounds (cell %v) in %v", rounds, withCell, time.Since(start).Round(time.Millisecond))
	}
}

// TestDuckDBRefusesFileHeld: a file this process has open is refused at
// once, naming who opened it.
func TestDuckDBRefusesFileHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.duckdb")
	eng, err := Open(context.Background(), "duckdb", Options{Path: path, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	loadNumbers(t, eng, 10)
	defer eng.Close()
	if why := DuckHeld(path); !strings.Contains(why, "open now") {
		t.Errorf("DuckHeld of an open file = %q, want it open now", why)
	}
	if why := DuckHeld(path + ".other"); why != "" {
		t.Errorf("DuckHeld of a file never opened = %q, want none", why)
	}
	_, err = openWithin(t, path, 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "already has it open") ||
		!strings.Contains(err.Error(), "opened by engine.TestDuckDBRefusesFileHeld") {
		t.Errorf("second open = %v, want a refusal naming the holder", err)
	}
	if _, _, err := OpenDuckDBReadOnly(path); err == nil {
		t.Error("OpenDuckDBReadOnly of a held file succeeded")
	}
}

// TestDuckDBInterruptsAfterGrace: a call still running when its context
// is cancelled is interrupted duckInterruptGrace later, not at once; a
// parallel one marks the file, whose next open is refused at once with
// the reason instead of waiting on DuckDB.
func TestDuckDBInterruptsAfterGrace(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs 2 CPUs: an interrupt marks the file only at more than one thread")
	}
	path := filepath.Join(t.TempDir(), "g.duckdb")
	eng, err := Open(context.Background(), "duckdb", Options{Path: path, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	loadNumbers(t, eng, 10)
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	eng, err = openWithin(t, path, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.SetDOP(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	c, err := eng.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	// Never ends by itself: 10^16 rows.
	err = c.Query(ctx, "SELECT count(*) FROM range(100000000) a, range(100000000) b WHERE a.range + b.range = -1",
		nil, func([]any) error { return nil })
	took := time.Since(start)
	if err == nil {
		t.Fatal("the endless query returned no error")
	}
	if took < duckInterruptGrace || took > duckInterruptGrace+20*time.Second {
		t.Errorf("the query ended %v after it started, cancelled at 200ms: want the interrupt %v after the cancel",
			took, duckInterruptGrace)
	}
	c.Close()
	eng.Close()
	if why := DuckHeld(path); !strings.Contains(why, "interrupted") {
		t.Errorf("DuckHeld after an interrupted parallel query = %q, want why", why)
	}
	start = time.Now()
	_, err = openWithin(t, path, 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "may still hold it") || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("reopen after an interrupted parallel query = %v, want a refusal saying why", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the refusal took %v, want it at once", d)
	}
}
