package pages

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/perfctr"
	"github.com/numalab/numalab/internal/pgscript"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/workload/sqlscript"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

// pageConn is a stream of transactions over one copy of the data, each
// run twice with the same inputs (twice), and how its cells open their
// counters (openCounters).
type pageConn struct {
	tx       twice
	closer   func() error // the engine's, or the server's
	counters func() (cellCounters, string)
}

// twice is a stream whose transactions run twice with the same inputs:
// ready(false) draws a transaction's inputs afresh, ready(true) takes the
// last one's again, and run runs it. ready is not timed.
type twice interface {
	ready(again bool)
	run(ctx context.Context) error
	close() error
}

// tpccTwice is tpcc's stream: draw draws each transaction's seed; pcg,
// reseeded with it before each run, gives the transaction's inputs
// through the stream's random numbers.
type tpccTwice struct {
	stream *tpcc.Stream
	draw   *rand.Rand
	pcg    *rand.PCG
	seed   uint64
}

func (t *tpccTwice) ready(again bool) {
	if !again {
		t.seed = t.draw.Uint64()
	}
	t.pcg.Seed(t.seed, 0)
}

func (t *tpccTwice) run(ctx context.Context) error {
	if _, err := t.stream.Next(ctx); err != nil {
		return fmt.Errorf("a tpcc-ro transaction: %w", err)
	}
	return nil
}

func (t *tpccTwice) close() error { return t.stream.Close() }

// scriptTwice is the user's scripts on one connection: a transaction is a
// script chosen by weight and run whole, again from the client's mark.
type scriptTwice struct {
	client   *pgscript.Client
	conn     engine.Conn
	mark     pgscript.Mark
	readOnly bool // SQLite's image: a write fails
}

func (t *scriptTwice) ready(again bool) {
	if again {
		t.client.Rewind(&t.mark)
	} else {
		t.client.Mark(&t.mark)
	}
}

func (t *scriptTwice) run(ctx context.Context) error {
	if _, err := t.client.Run(ctx, t.conn, t.client.Choose()); err != nil {
		if t.readOnly {
			return fmt.Errorf("a transaction of your scripts: %w (on SQLite the cells read the database image, "+
				"which is read-only: run pages runs scripts that only read there)", err)
		}
		return fmt.Errorf("a transaction of your scripts: %w", err)
	}
	return nil
}

func (t *scriptTwice) close() error { return t.conn.Close() }

// openImageConn opens im as a SQLite engine and a tpcc stream on it
// (newPageConn).
func openImageConn(ctx context.Context, im *image, cpu int) (*pageConn, error) {
	eng, err := engine.OpenSQLiteImage(im.mem)
	if err != nil {
		return nil, err
	}
	w, err := tpcc.Open(ctx, eng, tpcc.Options{Seed: 1})
	if err != nil {
		eng.Close()
		if errors.Is(err, tpcc.ErrNotTPCC) {
			return nil, fmt.Errorf("the database image: %w (is it a tpcc database?)", err)
		}
		return nil, fmt.Errorf("the database image: %w", err)
	}
	return newPageConn(ctx, w, cpu, eng.Close)
}

// scriptImageConn opens an image as a SQLite engine with a client of
// sc's scripts (sqlscript.Sweep's Client) on a connection of its own,
// opened on cpu. The image is read-only: a script that writes fails at
// its first write, naming the statement.
func scriptImageConn(sc sqlscript.RunConfig) (func(ctx context.Context, im *image, cpu int) (*pageConn, error), error) {
	sc.Engine = "sqlite"
	scripts, stored, err := sc.ParseScripts()
	if err != nil {
		return nil, err
	}
	sw := sqlscript.NewSweep(sc, scripts, stored, nil)
	return func(ctx context.Context, im *image, cpu int) (*pageConn, error) {
		eng, err := engine.OpenSQLiteImage(im.mem)
		if err != nil {
			return nil, err
		}
		return scriptConn(ctx, sw, eng, cpu, eng.Close, true)
	}, nil
}

// scriptConn is a cell's stream of sw's scripts: a client of them
// (sqlscript.Sweep's Client) on a connection of its own to eng, opened on
// cpu; closer ends what the stream runs on, and is called when the
// stream cannot be opened.
func scriptConn(ctx context.Context, sw *sqlscript.Sweep, eng engine.Engine, cpu int, closer func() error,
	readOnly bool) (*pageConn, error) {
	client, err := sw.Client(0)
	if err != nil {
		closer()
		return nil, err
	}
	var conn engine.Conn
	if err := pinned(cpu, func() (err error) { conn, err = eng.Connect(ctx); return err }); err != nil {
		closer()
		return nil, err
	}
	return &pageConn{tx: &scriptTwice{client: client, conn: conn, readOnly: readOnly}, closer: closer,
		counters: openCounters}, nil
}

// newPageConn is a tpcc stream on w drawing from warehouse 1 alone,
// opened on cpu (a server's backend is pinned beside it there); closer
// closes w's engine, also when the stream cannot be opened.
func newPageConn(ctx context.Context, w *tpcc.Workload, cpu int, closer func() error) (*pageConn, error) {
	w, err := w.FirstWarehouses(1)
	if err != nil {
		closer()
		return nil, fmt.Errorf("the database: %w", err)
	}
	pcg := rand.NewPCG(1, 2)
	var s *tpcc.Stream
	err = pinned(cpu, func() (err error) {
		s, err = w.OpenStream(ctx, rand.New(pcg))
		return err
	})
	if err != nil {
		closer()
		return nil, err
	}
	tx := &tpccTwice{stream: s, draw: rand.New(rand.NewPCG(3, 4)), pcg: pcg}
	return &pageConn{tx: tx, closer: closer, counters: openCounters}, nil
}

// pinned runs f on the calling goroutine's thread pinned to cpu
// (place.Pin), and gives the thread back to the Go scheduler as it came.
func pinned(cpu int, f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old, err := place.Affinity()
	if err != nil {
		return fmt.Errorf("pinning to CPU %d: %w", cpu, err)
	}
	if err := place.Pin([]int{cpu}); err != nil {
		return fmt.Errorf("pinning to CPU %d: %w", cpu, err)
	}
	defer place.Pin(old)
	return f()
}

func (p *pageConn) close() {
	p.tx.close()
	p.closer()
}

// cellRun is what one cell measured: its cold runs (index 0) and its hot
// ones (1), each run once per pair.
type cellRun struct {
	pairs    int64
	seconds  [2]float64
	counters [2]*calib.CellCounters
	// noCounters says why counters are nil: none could be opened here;
	// readFailed, that they opened but a read of them failed.
	noCounters, readFailed string
}

// tps is the rate of the cell's cold (0) or hot (1) runs.
func (r cellRun) tps(kind int) float64 { return float64(r.pairs) / r.seconds[kind] }

// cellCounters are a cell's open counters (*perfctr.Counters).
type cellCounters interface {
	Read() ([]uint64, error)
	Close()
}

// counterSets are the hardware counters a cell tries, most first.
var counterSets = [][]perfctr.Event{
	{perfctr.Instructions, perfctr.LLCMisses, perfctr.Cycles},
	{perfctr.Instructions, perfctr.LLCMisses},
}

// openCounters opens the first of counterSets the kernel gives this
// thread; nil and why not when none.
func openCounters() (cellCounters, string) {
	var why string
	for _, set := range counterSets {
		c, err := perfctr.Open(set...)
		if err == nil {
			return c, ""
		}
		if why == "" {
			why = err.Error()
			if pe, ok := err.(*perfctr.Error); ok {
				why = pe.Reason()
			}
		}
	}
	return nil, why
}

// cell runs pairs of transactions for d on the calling thread, pinned to
// cpu (place.Pin): each pair a transaction with fresh inputs (cold), then
// the same again (hot), timed apart. Where the kernel lets it, it counts
// instructions and last-level misses of each run, reading the counters
// between the runs, outside their times. A failed read of the counters
// leaves the cell uncounted, saying why (readFailed), and does not fail
// it. It runs at least one pair, then until d or ctx is done.
func (p *pageConn) cell(ctx context.Context, cpu int, d time.Duration) (r cellRun, err error) {
	err = pinned(cpu, func() error {
		r, err = p.pinnedCell(ctx, d)
		return err
	})
	return r, err
}

// pinnedCell is cell on the calling thread, already pinned.
func (p *pageConn) pinnedCell(ctx context.Context, d time.Duration) (cellRun, error) {
	ctr, why := p.counters()
	r := cellRun{noCounters: why}
	var sums [2][]uint64
	var last []uint64
	if ctr != nil {
		defer ctr.Close()
		var err error
		if last, err = ctr.Read(); err != nil {
			ctr, r.readFailed = nil, err.Error()
		}
	}
	// count adds the counts since the last read to run kind's sums.
	count := func(kind int) {
		if ctr == nil {
			return
		}
		now, err := ctr.Read()
		if err != nil {
			ctr, r.readFailed = nil, err.Error()
			return
		}
		if sums[kind] == nil {
			sums[kind] = make([]uint64, len(now))
		}
		for i := range now {
			sums[kind][i] += now[i] - last[i]
		}
		last = now
	}
	// The stream is given no context to check: a cell stops between
	// pairs, after at least one (a thread preempted for the whole of a
	// short cell would otherwise give a point of 0 tps).
	bg := context.Background()
	start := time.Now()
	for r.pairs == 0 || time.Since(start) < d && ctx.Err() == nil {
		for kind := range 2 {
			p.tx.ready(kind == 1)
			t0 := time.Now()
			if err := p.tx.run(bg); err != nil {
				return cellRun{}, err
			}
			r.seconds[kind] += time.Since(t0).Seconds()
			count(kind)
		}
		r.pairs++
	}
	if ctr == nil {
		return r, nil
	}
	for kind, sum := range sums {
		c := &calib.CellCounters{Instructions: sum[0], LLCMisses: sum[1]}
		if len(sum) > 2 {
			c.Cycles = sum[2]
		}
		r.counters[kind] = c
	}
	return r, nil
}
