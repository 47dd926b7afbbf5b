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
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

// pageConn is tpcc's stream over one image, and how its cells open their
// counters (openCounters).
type pageConn struct {
	eng    engine.Engine
	stream *tpcc.Stream
	// draw draws each pair's seed; pcg, reseeded with it before each run,
	// gives the transaction's inputs through the stream's random numbers.
	draw     *rand.Rand
	pcg      *rand.PCG
	counters func() (cellCounters, string)
}

// openPageConn opens im as a SQLite engine and a tpcc stream on it,
// drawing from warehouse 1 alone.
func openPageConn(ctx context.Context, im *image) (*pageConn, error) {
	eng, err := engine.OpenSQLiteImage(im.mem)
	if err != nil {
		return nil, err
	}
	w, err := tpcc.Open(ctx, eng, tpcc.Options{Seed: 1})
	if err == nil {
		w, err = w.FirstWarehouses(1)
	}
	if err != nil {
		eng.Close()
		if errors.Is(err, tpcc.ErrNotTPCC) {
			return nil, fmt.Errorf("the database image: %w (is it a tpcc database?)", err)
		}
		return nil, fmt.Errorf("the database image: %w", err)
	}
	pcg := rand.NewPCG(1, 2)
	s, err := w.OpenStream(ctx, rand.New(pcg))
	if err != nil {
		eng.Close()
		return nil, err
	}
	return &pageConn{eng: eng, stream: s, draw: rand.New(rand.NewPCG(3, 4)), pcg: pcg, counters: openCounters}, nil
}

func (p *pageConn) close() {
	p.stream.Close()
	p.eng.Close()
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
func (p *pageConn) cell(ctx context.Context, cpu int, d time.Duration) (cellRun, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old, err := place.Affinity()
	if err != nil {
		return cellRun{}, fmt.Errorf("the page-size cell: %w", err)
	}
	if err := place.Pin([]int{cpu}); err != nil {
		return cellRun{}, fmt.Errorf("the page-size cell: %w", err)
	}
	// The thread goes back to the Go scheduler as it came, not pinned.
	defer place.Pin(old)
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
		seed := p.draw.Uint64()
		for kind := range 2 {
			p.pcg.Seed(seed, 0)
			t0 := time.Now()
			if _, err := p.stream.Next(bg); err != nil {
				return cellRun{}, fmt.Errorf("a tpcc-ro transaction on the image: %w", err)
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
