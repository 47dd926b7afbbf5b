package null

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/mariaserver"
	"github.com/numalab/numalab/internal/mariaserver/mytest"
	"github.com/numalab/numalab/internal/sweep"
)

// my is the MariaDB server the stream tests share (the sweep test starts
// its own, as numalab does).
var my = mytest.New(mariaserver.Config{BufferPool: 32 << 20})

func TestMain(m *testing.M) {
	code := m.Run()
	if err := my.Stop(); err != nil {
		code = 1
	}
	os.Exit(code)
}

// TestSweepMariaDB runs the prepared call over both transports on a
// managed server, at every pairing this host offers, and checks that each
// server thread ran where its pairing put it.
func TestSweepMariaDB(t *testing.T) {
	my.Server(t) // skips the test when MariaDB is not installed
	cfg := DefaultRunConfig()
	cfg.Engine = "mariadb"
	cfg.Duration, cfg.Warmup, cfg.Repeat = 500*time.Millisecond, 200*time.Millisecond, 1
	cells, layout, m := cellsHere(t, cfg)
	t.Cleanup(func() { runtime.GOMAXPROCS(runtime.GOMAXPROCS(0)) })
	rec := &recorder{}
	w := NewSweep(cfg, layout, m)
	out, err := sweep.Run(context.Background(), cfg.Plan(cells),
		&affinityCheck{Sweep: w, t: t, procs: runtime.GOMAXPROCS(0)}, rec, rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(cells) {
		t.Fatalf("%d cells measured; want %d", len(out), len(cells))
	}
	for _, c := range out {
		t.Logf("%s %s %s: %.0f calls/s, p50 %.1f µs", c.Transport, c.Protocol, c.Pairing, c.Cell.TPS, c.Cell.Total.P50US)
		if c.Cell.Total.Count == 0 || c.Cell.Total.Errors != 0 || c.Protocol != Prepared {
			t.Errorf("cell %d: %+v", c.Cell.Index, c)
		}
	}
}

// TestMariaDBPointSelect makes numalab's sbtest1, then point-select calls
// on one connection, and checks through the server's own counter of the
// session's rows sent that each call's id found its row.
func TestMariaDBPointSelect(t *testing.T) {
	s := my.Server(t)
	ctx := context.Background()
	e, err := engine.Open(ctx, "mariadb", engine.Options{DSN: s.DSN(), Schema: "null_point", MariaDBCacheMetadata: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		e.DB().Exec("DROP DATABASE null_point")
		e.Close()
	}()
	for range 2 { // the second finds the table made
		if err := makeSbtest(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	c, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := openServer(ctx, c, Prepared, CallPointSelect, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sent := func() int {
		var n int
		q := "SELECT variable_value FROM information_schema.session_status WHERE variable_name = 'ROWS_SENT'"
		err := c.Query(ctx, q, nil, func(v []any) error {
			var err error
			n, err = strconv.Atoi(fmt.Sprint(v[0]))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	const calls = 200
	before := sent()
	for range calls {
		if _, err := st.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The counter counts the first reading's own row too.
	if got := sent() - before; got != calls+1 {
		t.Errorf("%d point selects sent %d rows (counter's own row included); want %d", calls, got, calls+1)
	}
}

// TestPointSelectIDs checks that the point select's ids stay in the
// table and cover it.
func TestPointSelectIDs(t *testing.T) {
	s := &serverStream{ids: 12345}
	seen := map[uint32]bool{}
	for range 20 * pointSelectRows {
		id := s.nextID()
		if id < 1 || id > pointSelectRows {
			t.Fatalf("id %d outside 1 to %d", id, pointSelectRows)
		}
		seen[id] = true
	}
	// 20 draws an id: each is missed with probability e^-20.
	if len(seen) != pointSelectRows {
		t.Errorf("%d of %d ids drawn in %d draws", len(seen), pointSelectRows, 20*pointSelectRows)
	}
}
