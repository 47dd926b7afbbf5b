package transtats

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/numalab/numalab/internal/engine"
)

// TestOpenTwoLoaders: two loaders of the same new file at once take turns:
// one loads, the other waits, saying so, and opens the finished load; both
// end with the whole data set.
func TestOpenTwoLoaders(t *testing.T) {
	ctx := context.Background()
	const n = 20000
	path := filepath.Join(t.TempDir(), "t.sqlite")
	dbs := make([]*DB, 2)
	errs := make([]error, 2)
	waited := make([]bool, 2)
	var wg sync.WaitGroup
	for i := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			say := func(l string) {
				if strings.HasPrefix(l, "waiting for another numalab process that is loading or opening a database in ") {
					waited[i] = true
				}
			}
			dbs[i], errs[i] = Open(ctx, Config{EngineName: SQLite, Rows: n, Engine: engine.Options{Path: path}, Waiting: say})
		}()
	}
	wg.Wait()
	loaded, waits := 0, 0
	for i, db := range dbs {
		if errs[i] != nil {
			t.Fatalf("loader %d: %v", i, errs[i])
		}
		defer db.Close()
		if !db.Load.Reused {
			loaded++
		}
		if waited[i] {
			waits++
		}
		c, err := db.Engine().Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := db.Run(ctx, c, P1, 0); err != nil || r.Rows != n {
			t.Errorf("loader %d: P1 = %+v, %v; want %d rows", i, r, err, n)
		}
		c.Close()
	}
	if loaded != 1 || waits != 1 {
		t.Errorf("%d loaded and %d waited; want one of each", loaded, waits)
	}
}
