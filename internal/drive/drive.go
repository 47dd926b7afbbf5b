// Package drive runs streams in a closed loop for timed cells and measures
// them: per-type latency histograms, a per-second throughput series, an
// optional per-call trace and, through a monitor, what the machine did.
//
// A stream is a goroutine locked to its own OS thread, pinned to the
// cell's CPUs, that owns its connection (opened on that thread, so the
// connection's memory is allocated there), its RNG and its histograms.
// Nothing in the hot path takes a shared lock or allocates: each stream
// counts into its own histograms and per-second slots, and the results are
// merged once when the cell ends (a closed stream yields to the scheduler
// once every 5 ms, not per call: yieldEvery). Stop is a context cancel.
//
// A cell's clock starts when every stream is open. A call counts in the
// phase in which it completes: warm-up (run, not counted), the measured
// window (counted, into the second of the window it completed in), or
// after (discarded; the stream stops). Latency is the call's duration on
// the monotonic clock, two clock reads per call (about 50 ns each on these
// guests). Calls still running when the window closes are cancelled
// through their context and not counted. Every wait is bounded: streams
// still in a call Config.CutGrace after the window closed (a stuck engine
// call, a server that stopped answering) are left behind and the cell is
// cut, marked with why (result.Cell.Cut).
//
// drive knows no SQL and no engine: a workload hands it an Opener and the
// names of its transaction types. By default every stream calls Next again
// as soon as it returns; Config.Pace adds a think time after each call or
// an open-loop arrival schedule (see Pace): a pacing step in the same
// loop, which a closed stream does not have, so that its hot path is
// the loop alone.
package drive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

// Stream is one worker's connection and workload state. Next runs one
// transaction and says which type it was (an index into Config.Types).
// A Stream is used by one goroutine only.
type Stream interface {
	Next(ctx context.Context) (txType int, err error)
	Close() error
}

// Counter is a Stream told which of its calls counted: Run calls Counted
// after each call that completed in the measured window (ok: it
// succeeded), before the next call, and for no other call. A workload
// keeps figures of its own of those calls alone with it (run sql's
// per-statement latencies), in the stream, as drive keeps its histograms.
type Counter interface {
	Counted(ok bool)
}

// Opener opens stream number stream (from 0). Run calls it on the stream's
// own locked and pinned OS thread.
type Opener func(ctx context.Context, stream int) (Stream, error)

// StartMonitor starts watching the machine when the measured window
// begins; the stop it returns ends the watch and says what happened.
type StartMonitor func() (stop func() (*result.Usage, error), err error)

// DefaultCutGrace is Config.CutGrace when it is 0: longer than an engine
// takes to stop a call whose context was cancelled (DuckDB interrupts one
// 5 s after; PostgreSQL's cancel request and pgx's deadline are quicker).
const DefaultCutGrace = 15 * time.Second

// Done is the error a Stream's Next returns when the stream has done all
// it was to do (written its share of a cell's rows, say): the stream ends
// there, the call is not counted, as a failure or otherwise, and the
// cell's Stopped gives the error's text as the reason.
type Done string

func (d Done) Error() string { return string(d) }

// doneStop is stream id's stop at when err is a Done, else nil. A call
// that succeeded costs a comparison: errors.As would allocate its target.
func doneStop(id int, at time.Duration, err error) *result.StreamStop {
	if err == nil {
		return nil
	}
	var d Done
	if !errors.As(err, &d) {
		return nil
	}
	return &result.StreamStop{Stream: id, At: at, Reason: d.Error()}
}

// DefaultMaxConsecutiveErrors is how many failed calls in a row stop a
// stream when Config.MaxConsecutiveErrors is 0.
const DefaultMaxConsecutiveErrors = 1000

// Config describes one cell.
type Config struct {
	Types   []string // transaction type names; Next returns indexes into it
	Streams int      // concurrent streams, ≥ 1
	// CPUs are the logical CPUs of the placement; empty means not pinned.
	// Every stream may run on all of them, unless Spread pins stream i to
	// CPUs[i mod len(CPUs)] alone.
	CPUs   []int
	Spread bool
	// Cores is the number of physical cores the streams run on, the
	// divisor of tps per core (the caller knows the topology: see
	// result.Topology.CoresUsed).
	Cores    int
	Warmup   time.Duration // run but not counted; may be 0
	Duration time.Duration // measured window, > 0
	// TraceLimit is how many calls each stream records in the trace
	// (memory is reserved up front, 40 bytes a call); 0 = no trace.
	TraceLimit int
	// MaxConsecutiveErrors stops a stream after that many failed calls in
	// a row; 0 means DefaultMaxConsecutiveErrors.
	MaxConsecutiveErrors int
	Monitor              StartMonitor // optional
	// NoSeries leaves out the per-second series (Cell.PerSecond is nil):
	// to measure what counting it costs.
	NoSeries bool
	// Point labels the cell with its place in a sweep (optional).
	Point Point
	// Pace spaces the calls (think time, arrival rate); the zero value
	// is the closed loop with no think time.
	Pace Pace
	// CutGrace is how long the streams have to return from their calls
	// after the window closes (or Ctrl-C) before the cell is cut without
	// them; 0 means DefaultCutGrace.
	CutGrace time.Duration
	// Procs sets GOMAXPROCS during the cell (0 leaves it), restoring it
	// afterwards. Streams are locked threads, and how many Ps suit them
	// depends on where their calls wait:
	//   - in cgo (SQLite, DuckDB), ProcsForCgo: when the runtime takes a P
	//     from a thread in a long cgo call and hands it to other work, the
	//     thread waits for a P when the call returns; with a P to spare it
	//     never does. On this 2-vCPU guest 2 SQLite streams gave 1.69x one
	//     stream without spare Ps, 1.92x with them (two processes: 2.0x);
	//   - in system calls (PostgreSQL's socket reads): leave it. Against
	//     pgbench, one P per stream gave 1.01 and 0.92 in two runs, the
	//     default 0.95: within this machine's noise.
	Procs int
}

func (c *Config) validate() error {
	switch {
	case len(c.Types) == 0:
		return errors.New("checking cell: no transaction types (a workload names at least one)")
	case c.Streams < 1:
		return fmt.Errorf("checking cell: %d streams is not a positive count", c.Streams)
	case c.Duration <= 0:
		return fmt.Errorf("checking cell: duration %v is not positive (try 30s)", c.Duration)
	case c.Warmup < 0:
		return fmt.Errorf("checking cell: warm-up %v is negative (try 5s, or 0)", c.Warmup)
	case c.TraceLimit < 0:
		return fmt.Errorf("checking cell: trace limit %d is negative", c.TraceLimit)
	case c.Cores < 0:
		return fmt.Errorf("checking cell: %d cores is negative", c.Cores)
	}
	return c.Pace.validate()
}

// Point is one cell of a sweep before it runs: how many streams, on which
// placement selector, which repetition.
type Point struct {
	Index     int    // position in the sweep, from 0
	Streams   int    // concurrent streams
	Placement string // selector as the user wrote it; "" = not pinned
	Repeat    int    // repetition, from 0
}

// streamState is everything one stream measures. Only its own goroutine
// touches it until the cell ends.
type streamState struct {
	id       int
	hists    []*stats.Histogram // per type
	errs     []int64            // per type
	firstErr []string           // per type
	perSec   []int64
	trace    []result.TraceEvent
	dropped  int64
	stop     *result.StreamStop
	closeErr error
	paced    *pacedState // nil in a closed-loop cell
}

// ProcsForCgo is Config.Procs for streams whose calls wait in cgo: a P
// for every stream, one for the driver, one for the monitor and the
// garbage collector.
func ProcsForCgo(streams int) int { return streams + 2 }

// Run runs one cell: it opens every stream on its pinned thread, runs the
// warm-up and the measured window, and merges what the streams measured.
//
// When ctx is cancelled (Ctrl-C) Run ends the cell at once, discards calls
// in flight and returns the cell marked Interrupted with everything
// measured so far. It returns a nil cell and an error when the cell could
// not start (bad config, a stream that failed to pin or open); a non-nil
// cell with an error when streams failed to close.
func Run(ctx context.Context, cfg Config, open Opener) (*result.Cell, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cfg.Procs))
	}
	maxErrs := cfg.MaxConsecutiveErrors
	if maxErrs <= 0 {
		maxErrs = DefaultMaxConsecutiveErrors
	}
	nslots := slotCount(cfg.Duration)

	// Calls get a context that only Run cancels, after it has raised
	// interrupted, so that a stream never counts a call cut short by Ctrl-C
	// as a failure.
	runCtx, cancelRun := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRun()
	var interrupted atomic.Bool

	states := make([]*streamState, cfg.Streams)
	ready := make(chan error, cfg.Streams)
	start := make(chan struct{})
	var abort bool   // written before close(start)
	var t0 time.Time // written before close(start)
	var wg sync.WaitGroup
	returned := make(chan int, cfg.Streams) // streams whose goroutine has ended
	for i := range states {
		st := &streamState{id: i}
		states[i] = st
		wg.Add(1)
		go func() {
			defer func() { returned <- i }()
			defer wg.Done()
			runStream(runCtx, &cfg, i, st, open, nslots, maxErrs, &interrupted, ready, start, &abort, &t0)
		}()
	}

	// Wait until every stream is open, or one failed, or Ctrl-C.
	var setupErr error
	for range cfg.Streams {
		var err error
		select {
		case err = <-ready:
		case <-ctx.Done():
			err = ctx.Err()
		}
		if err != nil {
			setupErr = err
			break
		}
	}
	if setupErr != nil {
		abort = true
		close(start)
		cancelRun()
		wg.Wait()
		if ctx.Err() != nil && errors.Is(setupErr, ctx.Err()) {
			return nil, fmt.Errorf("opening %d streams: %w", cfg.Streams, setupErr)
		}
		return nil, setupErr
	}

	cell := &result.Cell{
		Index:      cfg.Point.Index,
		Streams:    cfg.Streams,
		Placement:  cfg.Point.Placement,
		CPUs:       slices.Clone(cfg.CPUs),
		SpreadCPUs: cfg.Spread,
		Cores:      cfg.Cores,
		DataNode:   -1,
		Repeat:     cfg.Point.Repeat,
		Warmup:     cfg.Warmup,
		Duration:   cfg.Duration,
		Started:    time.Now(),
	}
	t0 = time.Now()
	close(start)

	// The controller: start the monitor when the window opens, stop it and
	// the streams when it closes or on Ctrl-C.
	cut := cfg.Warmup + cfg.Duration
	var stopMonitor func() (*result.Usage, error)
	if wait(ctx, t0, cfg.Warmup) && cfg.Monitor != nil {
		stop, err := cfg.Monitor()
		if err != nil {
			cell.UsageError = err.Error()
		} else {
			stopMonitor = stop
		}
	}
	if !wait(ctx, t0, cfg.Warmup+cfg.Duration) {
		cut = time.Since(t0)
		interrupted.Store(true)
		cell.Interrupted = true
	}
	if stopMonitor != nil {
		u, err := stopMonitor()
		if err != nil {
			cell.UsageError = err.Error()
		} else {
			cell.Usage = u
		}
	}
	cancelRun()
	done, stuck := awaitStreams(returned, states, cmp.Or(cfg.CutGrace, DefaultCutGrace))
	if len(stuck) > 0 {
		interrupted.Store(true)
		cell.Interrupted = true
		cell.Cut = fmt.Sprintf("%s still in a call %v after the window closed (streams %v): cut without them, their "+
			"calls not counted (a stuck engine call, or a server that stopped answering)",
			plural(len(stuck), "stream"), cmp.Or(cfg.CutGrace, DefaultCutGrace), stuck)
	}

	cell.Measured = measuredAt(cut, cfg.Warmup, cfg.Duration)
	var closeErrs []error
	for _, st := range done {
		if st.closeErr != nil {
			closeErrs = append(closeErrs, st.closeErr)
		}
	}
	merge(cell, &cfg, done)
	return cell, errors.Join(closeErrs...)
}

// awaitStreams waits up to grace for every stream's goroutine to end. It
// returns the states of those that did, safe to read, and the ids of those
// still running (stuck in a call), whose states must not be read: their
// goroutines may still write them.
func awaitStreams(returned <-chan int, states []*streamState, grace time.Duration) (done []*streamState, stuck []int) {
	t := time.NewTimer(grace)
	defer t.Stop()
	ended := make([]bool, len(states))
	for n := 0; n < len(states); n++ {
		select {
		case i := <-returned:
			ended[i] = true
		case <-t.C:
			n = len(states)
		}
	}
	for i, st := range states {
		if ended[i] {
			done = append(done, st)
		} else {
			stuck = append(stuck, i)
		}
	}
	return done, stuck
}

// plural is "1 stream", "2 streams".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// wait sleeps until elapsed d since t0; false if ctx was cancelled first.
func wait(ctx context.Context, t0 time.Time, d time.Duration) bool {
	left := time.Until(t0.Add(d))
	if left <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// yieldEvery is how often a closed stream yields its P between calls. The
// runtime's monitor takes the P of a goroutine that has run for 10 ms
// without being rescheduled when it finds it in a system or cgo call, and
// then wakes every 20 µs again: a closed SQLite stream, in cgo most of the
// time, had its P taken every 10 ms and the monitor busy, 1.7-1.9 µs of
// CPU a transaction on other threads (4% of it; a C loop pays none);
// yielding every 5 ms, 0.3-0.6 µs. A yield costs a few µs.
const yieldEvery = 5 * time.Millisecond

// runStream is one stream's goroutine, from pinning to closing.
func runStream(ctx context.Context, cfg *Config, id int, st *streamState, open Opener, nslots, maxErrs int,
	interrupted *atomic.Bool, ready chan<- error, start <-chan struct{}, abort *bool, t0p *time.Time) {
	runtime.LockOSThread()
	pinned := len(cfg.CPUs) > 0
	// A pinned thread is never handed back to the runtime: the goroutine
	// exits locked and the thread ends with it, affinity and all.
	if !pinned {
		defer runtime.UnlockOSThread()
	}
	if pinned {
		cpus := cfg.CPUs
		if cfg.Spread {
			cpus = cfg.CPUs[id%len(cfg.CPUs) : id%len(cfg.CPUs)+1]
		}
		if err := place.Pin(cpus); err != nil {
			ready <- fmt.Errorf("starting stream %d: %w", id, err)
			return
		}
	}
	s, err := open(ctx, id)
	if err != nil {
		ready <- fmt.Errorf("opening stream %d: %w", id, err)
		return
	}
	if s == nil {
		ready <- fmt.Errorf("opening stream %d: opener returned no stream", id)
		return
	}
	defer func() {
		if err := s.Close(); err != nil {
			st.closeErr = fmt.Errorf("closing stream %d: %w", id, err)
		}
	}()

	ntypes := len(cfg.Types)
	st.hists = make([]*stats.Histogram, ntypes)
	for i := range st.hists {
		st.hists[i] = stats.NewHistogram()
	}
	st.errs = make([]int64, ntypes)
	st.firstErr = make([]string, ntypes)
	if !cfg.NoSeries {
		st.perSec = make([]int64, nslots)
	}
	if cfg.TraceLimit > 0 {
		st.trace = make([]result.TraceEvent, 0, cfg.TraceLimit)
	}
	ready <- nil
	<-start
	if *abort {
		return
	}
	t0 := *t0p
	var pc *pacer // nil: a closed stream, which has no pacing step
	if !cfg.Pace.Closed() {
		pc = newPacer(ctx, cfg, st, t0)
		defer pc.close()
	}
	warmup, dur := cfg.Warmup, cfg.Duration
	consecutive := 0
	counter, _ := s.(Counter)
	var yielded time.Duration // when the stream last yielded, since t0
	// The clock is elapsed time since t0: time.Since reads only the
	// monotonic clock, half the cost of time.Now.
	for {
		if pc != nil && !pc.wait(interrupted) {
			return
		}
		begin := time.Since(t0)
		typ, err := s.Next(ctx)
		e := time.Since(t0)
		if interrupted.Load() {
			return // Ctrl-C: the call in flight is not counted
		}
		ph := phaseAt(e, warmup, dur)
		if ph == finished {
			if pc != nil {
				pc.countBacklog()
			}
			return
		}
		if typ < 0 || typ >= ntypes {
			st.stop = &result.StreamStop{Stream: id, At: e,
				Reason: fmt.Sprintf("transaction type %d out of range: the workload has %d types", typ, ntypes)}
			return
		}
		if st.stop = doneStop(id, e, err); st.stop != nil {
			return
		}
		if pc == nil && e-yielded >= yieldEvery {
			runtime.Gosched() // a paced stream's waits reschedule it
			yielded = e
		}
		from := begin // where the call's latency runs from
		if pc != nil {
			from = pc.called(ph, begin, e, err == nil)
		}
		if err != nil {
			consecutive++
			if ph == measuring {
				if counter != nil {
					counter.Counted(false)
				}
				st.errs[typ]++
				if st.firstErr[typ] == "" {
					st.firstErr[typ] = err.Error()
				}
				st.addTrace(begin, e, warmup, typ, false)
			}
			if consecutive >= maxErrs {
				st.stop = &result.StreamStop{Stream: id, At: e,
					Reason: fmt.Sprintf("%d consecutive errors, the last: %v", consecutive, err)}
				return
			}
			continue
		}
		consecutive = 0
		if ph == measuring {
			if counter != nil {
				counter.Counted(true)
			}
			st.hists[typ].Record(int64(e - from))
			if st.perSec != nil {
				st.perSec[secondOf(e, warmup, nslots)]++
			}
			if st.trace != nil {
				st.addTrace(begin, e, warmup, typ, true)
			}
		}
	}
}

// addTrace records a call that ran from begin to end (elapsed since t0).
func (st *streamState) addTrace(begin, end, warmup time.Duration, typ int, ok bool) {
	if cap(st.trace) == 0 {
		return
	}
	if len(st.trace) == cap(st.trace) {
		st.dropped++
		return
	}
	st.trace = append(st.trace, result.TraceEvent{
		StartNS: int64(begin - warmup), EndNS: int64(end - warmup), Type: typ, Stream: st.id, OK: ok})
}
