package drive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

// spinsPerUS is how many spin iterations take a microsecond of this
// thread's CPU time (CPU time, not wall time: the machine is shared).
var spinsPerUS = sync.OnceValue(func() float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const n = 2_000_000
	t := threadCPU()
	sink += spin(n)
	return n / float64((threadCPU()-t).Microseconds()+1)
})

// threadCPU is the calling thread's CPU time.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic(err)
	}
	return time.Duration(ts.Nano())
}

var sink uint64

// spin is CPU-bound work with no memory traffic.
func spin(n int) uint64 {
	x := uint64(88172645463325252)
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// spinStream is a synthetic workload shaped like tpcc-ro on SQLite: two
// transaction types chosen 50/50 by the stream's own RNG, about 5 µs and
// 15 µs of CPU work.
type spinStream struct {
	rng         *rand.Rand
	short, long int
	calls       int64
	acc         uint64 // the work's result, kept per stream: a shared sink would be written by every thread
	closed      *atomic.Int32
}

func (s *spinStream) Next(ctx context.Context) (int, error) {
	s.calls++
	if s.rng.IntN(2) == 0 {
		s.acc += spin(s.short)
		return 0, nil
	}
	s.acc += spin(s.long)
	return 1, nil
}

func (s *spinStream) Close() error {
	if s.closed != nil {
		s.closed.Add(1)
	}
	return nil
}

var spinTypes = []string{"short", "long"}

func spinOpener(closed *atomic.Int32) Opener {
	per := spinsPerUS()
	return func(ctx context.Context, stream int) (Stream, error) {
		return &spinStream{rng: rand.New(rand.NewPCG(uint64(stream), 1)),
			short: int(5 * per), long: int(15 * per), closed: closed}, nil
	}
}

func allCPUs(t testing.TB) []int {
	cpus, err := place.Affinity()
	if err != nil {
		t.Fatal(err)
	}
	return cpus
}

func TestRunCell(t *testing.T) {
	cpus := allCPUs(t)
	var closed atomic.Int32
	var mu sync.Mutex
	tids := map[int]bool{}
	affinity := map[int][]int{}
	open := spinOpener(&closed)
	opener := func(ctx context.Context, stream int) (Stream, error) {
		// The opener runs on the stream's own pinned thread.
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err != nil {
			return nil, err
		}
		var got []int
		for _, c := range cpus {
			if set.IsSet(c) {
				got = append(got, c)
			}
		}
		mu.Lock()
		tids[unix.Gettid()] = true
		affinity[stream] = got
		mu.Unlock()
		return open(ctx, stream)
	}
	cfg := Config{Types: spinTypes, Streams: 2, CPUs: cpus, Spread: true, Cores: 2,
		Warmup: 200 * ms, Duration: 1500 * ms, TraceLimit: 1000, Point: Point{Index: 3, Placement: "all", Repeat: 1}}
	cell, err := Run(context.Background(), cfg, opener)
	if err != nil {
		t.Fatal(err)
	}
	if closed.Load() != 2 {
		t.Errorf("%d streams closed, want 2", closed.Load())
	}
	if len(tids) != 2 {
		t.Errorf("streams opened on %d distinct threads, want 2", len(tids))
	}
	for i := range 2 {
		if want := []int{cpus[i%len(cpus)]}; !slices.Equal(affinity[i], want) {
			t.Errorf("stream %d opened with affinity %v, want %v", i, affinity[i], want)
		}
	}
	if cell.Interrupted || cell.Measured != cfg.Duration || cell.Index != 3 || cell.Repeat != 1 ||
		cell.Placement != "all" {
		t.Errorf("cell labels: interrupted %v, measured %v, index %d, repeat %d, placement %q",
			cell.Interrupted, cell.Measured, cell.Index, cell.Repeat, cell.Placement)
	}
	if len(cell.Types) != 2 || cell.Types[0].Name != "short" || cell.Types[0].Count == 0 || cell.Types[1].Count == 0 {
		t.Fatalf("types: %+v", cell.Types)
	}
	if cell.Total.Count != cell.Types[0].Count+cell.Types[1].Count || cell.Total.Errors != 0 {
		t.Errorf("total %d, types %d + %d, errors %d",
			cell.Total.Count, cell.Types[0].Count, cell.Types[1].Count, cell.Total.Errors)
	}
	short, long := cell.Types[0], cell.Types[1]
	if !(short.P50US < long.P50US && short.P50US <= short.P90US && short.P90US <= short.P95US &&
		short.P95US <= short.P99US && short.P99US <= short.P999US && short.P999US <= short.MaxUS) {
		t.Errorf("latencies out of order: short %+v, long %+v", short, long)
	}
	if short.P50US < 2.5 || short.P50US > 200 {
		t.Errorf("short p50 = %.1f µs for ~5 µs of work", short.P50US)
	}
	if len(cell.PerSecond) != 2 {
		t.Errorf("%d per-second slots for 1.5 s, want 2", len(cell.PerSecond))
	}
	var sum int64
	for _, n := range cell.PerSecond {
		sum += n
	}
	if sum != cell.Total.Count {
		t.Errorf("per-second series sums to %d, total is %d", sum, cell.Total.Count)
	}
	if got := float64(cell.Total.Count) / 1.5; abs(cell.TPS-got) > 1e-6*got || abs(cell.TPM-60*cell.TPS) > 1e-6 ||
		abs(cell.TPSPerCore-cell.TPS/2) > 1e-6 {
		t.Errorf("tps %v tpm %v per core %v for %d calls in 1.5 s on 2 cores",
			cell.TPS, cell.TPM, cell.TPSPerCore, cell.Total.Count)
	}
	if len(cell.Trace) != 2000 || cell.TraceDropped != cell.Total.Count-2000 {
		t.Errorf("trace: %d events, %d dropped; want 2000 and %d", len(cell.Trace), cell.TraceDropped, cell.Total.Count-2000)
	}
	if !slices.IsSortedFunc(cell.Trace, func(a, b result.TraceEvent) int { return cmp.Compare(a.StartNS, b.StartNS) }) {
		t.Error("trace not sorted by start")
	}
	for _, ev := range cell.Trace {
		if ev.EndNS < 0 || ev.EndNS < ev.StartNS || !ev.OK || ev.Stream < 0 || ev.Stream > 1 {
			t.Fatalf("bad trace event %+v", ev)
		}
	}
	t.Logf("2 streams: %.0f tps, short p50 %.1f µs p99 %.1f µs, long p50 %.1f µs, per second %v",
		cell.TPS, short.P50US, short.P99US, long.P50US, cell.PerSecond)
}

func abs(x float64) float64 { return max(x, -x) }

func TestRunWarmupExcluded(t *testing.T) {
	var mu sync.Mutex
	var done []time.Time // completion times, from inside Next
	open := spinOpener(nil)
	opener := func(ctx context.Context, stream int) (Stream, error) {
		s, err := open(ctx, stream)
		return &stampingStream{Stream: s, mu: &mu, done: &done}, err
	}
	warmup, dur := 300*ms, 400*ms
	cell, err := Run(context.Background(), Config{Types: spinTypes, Streams: 2, Warmup: warmup, Duration: dur}, opener)
	if err != nil {
		t.Fatal(err)
	}
	// Cell.Started is read just before the cell's clock starts. A call
	// stamped here near a boundary may fall on either side of it by the
	// stream's clock: the thread can be preempted between the two reads
	// (on a busy machine, for milliseconds). So the count must lie between
	// the calls surely inside the window and those possibly inside it.
	const slack = 20 * ms
	from, to := cell.Started.Add(warmup), cell.Started.Add(warmup+dur)
	var before, surely, possibly int64
	for _, d := range done {
		if d.Before(from) {
			before++
		}
		if d.After(from.Add(slack)) && d.Before(to.Add(-slack)) {
			surely++
		}
		if d.After(from.Add(-slack)) && d.Before(to.Add(slack)) {
			possibly++
		}
	}
	if before == 0 {
		t.Fatal("no call completed in the warm-up")
	}
	if n := cell.Total.Count; n < surely || n > possibly {
		t.Errorf("counted %d calls; by the streams' own clocks %d completed surely in the window and %d within %v "+
			"of it (%d in the warm-up)", n, surely, possibly, slack, before)
	}
}

// stampingStream notes when each call completed.
type stampingStream struct {
	Stream
	mu   *sync.Mutex
	done *[]time.Time
}

func (s *stampingStream) Next(ctx context.Context) (int, error) {
	typ, err := s.Stream.Next(ctx)
	now := time.Now()
	s.mu.Lock()
	*s.done = append(*s.done, now)
	s.mu.Unlock()
	return typ, err
}

// flakyStream fails every third call of type 1, or every call when
// always is set.
type flakyStream struct {
	i      int
	acc    uint64
	always bool
}

var errFlaky = errors.New("server closed the connection")

func (f *flakyStream) Next(ctx context.Context) (int, error) {
	f.i++
	f.acc += spin(100)
	if f.always || f.i%3 == 0 {
		return 1, errFlaky
	}
	return 0, nil
}

func (f *flakyStream) Close() error { return nil }

func TestRunErrors(t *testing.T) {
	cell, err := Run(context.Background(), Config{Types: []string{"a", "b"}, Streams: 2, Duration: 300 * ms},
		func(ctx context.Context, i int) (Stream, error) { return &flakyStream{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	a, b := cell.Types[0], cell.Types[1]
	if a.Errors != 0 || b.Count != 0 || b.Errors == 0 || cell.Total.Errors != b.Errors || len(cell.Stopped) != 0 {
		t.Errorf("a %+v, b %+v, stopped %v", a, b, cell.Stopped)
	}
	if ratio := float64(a.Count) / float64(b.Errors); ratio < 1.8 || ratio > 2.2 {
		t.Errorf("%d successes, %d errors; want 2 to 1 (the stream went on after errors)", a.Count, b.Errors)
	}
	if b.FirstError != errFlaky.Error() || cell.Total.FirstError != errFlaky.Error() {
		t.Errorf("first error %q, total's %q", b.FirstError, cell.Total.FirstError)
	}

	// A dead server: every call fails; streams give up and say why.
	start := time.Now()
	cell, err = Run(context.Background(),
		Config{Types: []string{"a", "b"}, Streams: 2, Duration: 5 * s, MaxConsecutiveErrors: 50},
		func(ctx context.Context, i int) (Stream, error) { return &flakyStream{always: true}, nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(cell.Stopped) != 2 ||
		!strings.Contains(cell.Stopped[0].Reason, "50 consecutive errors, the last: server closed") {
		t.Fatalf("stopped: %+v", cell.Stopped)
	}
	if cell.Types[1].Errors != 100 || cell.Total.Count != 0 {
		t.Errorf("errors %d, count %d; want 100, 0", cell.Types[1].Errors, cell.Total.Count)
	}
	// The cell still runs its course: the window is what was asked for.
	if cell.Measured != 5*s || time.Since(start) < 5*s {
		t.Errorf("measured %v after %v", cell.Measured, time.Since(start))
	}
}

// blockingStream's call waits until its context ends, as a long query
// would.
type blockingStream struct{ calls *atomic.Int64 }

func (b blockingStream) Next(ctx context.Context) (int, error) {
	b.calls.Add(1)
	<-ctx.Done()
	return 0, ctx.Err()
}
func (blockingStream) Close() error { return nil }

func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(700*ms, cancel)
	start := time.Now()
	cell, err := Run(ctx, Config{Types: spinTypes, Streams: 2, Warmup: 200 * ms, Duration: time.Minute}, spinOpener(nil))
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*s {
		t.Errorf("Run took %v after Ctrl-C at 0.7 s", took)
	}
	if !cell.Interrupted || cell.Measured < 400*ms || cell.Measured > 1500*ms {
		t.Errorf("interrupted %v, measured %v; want true, about 500ms", cell.Interrupted, cell.Measured)
	}
	if cell.Total.Count == 0 || cell.Total.Errors != 0 || len(cell.PerSecond) != 1 ||
		cell.PerSecond[0] != cell.Total.Count {
		t.Errorf("kept %d calls, %d errors, per second %v", cell.Total.Count, cell.Total.Errors, cell.PerSecond)
	}
	if want := float64(cell.Total.Count) / cell.Measured.Seconds(); abs(cell.TPS-want) > 1e-6*want {
		t.Errorf("tps %v, want count / measured = %v", cell.TPS, want)
	}

	// A call in flight at Ctrl-C is cut and not counted as an error.
	var calls atomic.Int64
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(300*ms, cancel)
	cell, err = Run(ctx, Config{Types: spinTypes, Streams: 1, Duration: time.Minute},
		func(context.Context, int) (Stream, error) { return blockingStream{&calls}, nil })
	if err != nil {
		t.Fatal(err)
	}
	if !cell.Interrupted || cell.Total.Errors != 0 || cell.Total.Count != 0 || calls.Load() != 1 {
		t.Errorf("interrupted %v, errors %d, count %d, calls %d",
			cell.Interrupted, cell.Total.Errors, cell.Total.Count, calls.Load())
	}

	// Ctrl-C during the warm-up: nothing measured, still a cell.
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*ms, cancel)
	cell, err = Run(ctx, Config{Types: spinTypes, Streams: 1, Warmup: time.Minute, Duration: time.Minute}, spinOpener(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !cell.Interrupted || cell.Measured != 0 || cell.Total.Count != 0 || cell.TPS != 0 {
		t.Errorf("cut in warm-up: %+v", cell)
	}
}

func TestRunLongCallEndsWithWindow(t *testing.T) {
	var calls atomic.Int64
	start := time.Now()
	cell, err := Run(context.Background(), Config{Types: spinTypes, Streams: 2, Duration: 300 * ms},
		func(context.Context, int) (Stream, error) { return blockingStream{&calls}, nil })
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 2*s {
		t.Errorf("a cell of 300ms took %v with calls blocked", took)
	}
	if cell.Interrupted || cell.Total.Errors != 0 || cell.Measured != 300*ms {
		t.Errorf("interrupted %v, errors %d, measured %v", cell.Interrupted, cell.Total.Errors, cell.Measured)
	}
}

func TestRunSetupFailures(t *testing.T) {
	var closed atomic.Int32
	open := spinOpener(&closed)
	_, err := Run(context.Background(), Config{Types: spinTypes, Streams: 3, Duration: s},
		func(ctx context.Context, i int) (Stream, error) {
			if i == 1 {
				return nil, errors.New("too many clients")
			}
			return open(ctx, i)
		})
	if err == nil || !strings.Contains(err.Error(), "opening stream 1: too many clients") {
		t.Errorf("err = %v", err)
	}
	if closed.Load() != 2 {
		t.Errorf("%d streams closed after a failed open, want the 2 that opened", closed.Load())
	}
	_, err = Run(context.Background(), Config{Types: spinTypes, Streams: 1, CPUs: []int{100000}, Duration: s}, open)
	if err == nil || !strings.Contains(err.Error(), "CPU 100000") {
		t.Errorf("pinning to a missing CPU: err = %v", err)
	}
	for _, tt := range []struct {
		cfg Config
		msg string
	}{
		{Config{Streams: 1, Duration: s}, "no transaction types"},
		{Config{Types: spinTypes, Duration: s}, "0 streams is not a positive count"},
		{Config{Types: spinTypes, Streams: 1}, "duration 0s is not positive"},
		{Config{Types: spinTypes, Streams: 1, Duration: s, Warmup: -s}, "warm-up -1s is negative"},
		{Config{Types: spinTypes, Streams: 1, Duration: s, TraceLimit: -1}, "trace limit"},
	} {
		if _, err := Run(context.Background(), tt.cfg, open); err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("Run(%+v): err = %v, want %q", tt.cfg, err, tt.msg)
		}
	}
}

type badTypeStream struct{}

func (badTypeStream) Next(context.Context) (int, error) { return 7, nil }
func (badTypeStream) Close() error                      { return nil }

func TestRunTypeOutOfRange(t *testing.T) {
	cell, err := Run(context.Background(), Config{Types: spinTypes, Streams: 1, Duration: 100 * ms},
		func(context.Context, int) (Stream, error) { return badTypeStream{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(cell.Stopped) != 1 ||
		!strings.Contains(cell.Stopped[0].Reason, "type 7 out of range: the workload has 2 types") {
		t.Errorf("stopped: %+v", cell.Stopped)
	}
}

func TestRunWithSysMonitorOnHost(t *testing.T) {
	cpus := allCPUs(t)
	cell, err := Run(context.Background(), Config{Types: spinTypes, Streams: 1, CPUs: cpus[:1], Cores: 1,
		Warmup: 100 * ms, Duration: 500 * ms, Monitor: SysMonitor("/")}, spinOpener(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cell.UsageError != "" || cell.Usage == nil {
		t.Fatalf("no usage: %s", cell.UsageError)
	}
	u := cell.Usage
	if busy := u.BusyPct(cpus[:1]); busy < 30 {
		t.Errorf("CPU %d busy %.0f%% while a stream spun on it", cpus[0], busy)
	}
	if u.ProcUserCPU <= 0 || u.ProcUserCPU > u.Elapsed*time.Duration(len(cpus))+100*ms {
		t.Errorf("process user CPU %v in a %v window of spinning on %d CPUs", u.ProcUserCPU, u.Elapsed, len(cpus))
	}
	if !u.Perf.Available && (cell.CyclesPerTx != 0 || u.Perf.Reason == "") {
		t.Errorf("perf unavailable but cycles/tx %v, reason %q", cell.CyclesPerTx, u.Perf.Reason)
	}
	t.Logf("CPU %d busy %.0f%%, %.0f tps, perf: %v %s",
		cpus[0], u.BusyPct(cpus[:1]), cell.TPS, u.Perf.Available, u.Perf.Reason)
}

// TestScalingTwoStreams compares 1 and 2 streams of CPU-bound work,
// interleaved, and reports the median ratio. It asserts only a clear gain,
// and skips when other processes took a noticeable share of the CPUs (the
// machine is shared), since then the streams could not have scaled.
func TestScalingTwoStreams(t *testing.T) {
	cpus := allCPUs(t)
	if len(cpus) < 2 {
		t.Skipf("this machine lets the process use %d CPU; scaling needs 2", len(cpus))
	}
	if testing.Short() {
		t.Skip("-short: scaling runs 3 s of cells")
	}
	var ratios []float64
	var tps1, tps2 []float64
	others := 0.0 // most CPU time (in CPUs) used by other processes during a cell
	for r := range 3 {
		var one, two float64
		for k := range 2 {
			n := 1 + (k+r)%2
			cell, err := Run(context.Background(), Config{Types: spinTypes, Streams: n, CPUs: cpus, Spread: true, Cores: n,
				Warmup: 100 * ms, Duration: 400 * ms, Monitor: SysMonitor("/")}, spinOpener(nil))
			if err != nil {
				t.Fatal(err)
			}
			if u := cell.Usage; u != nil {
				machine := u.BusyPct(nil) / 100 * float64(len(u.CPUs))
				ours := (u.ProcUserCPU + u.ProcSystemCPU).Seconds() / u.Elapsed.Seconds()
				others = max(others, machine-ours)
			}
			if n == 1 {
				one = cell.TPS
			} else {
				two = cell.TPS
			}
		}
		tps1, tps2 = append(tps1, one), append(tps2, two)
		ratios = append(ratios, two/one)
	}
	m := stats.Median(ratios)
	t.Logf("1 stream %v tps, 2 streams %v tps, ratios %.3f, median %.3f; other processes used up to %.2f CPUs",
		round(tps1), round(tps2), ratios, m, others)
	if m < 1.2 {
		if others > 0.2 {
			t.Skipf(
				"2 streams gave only %.2f× while other processes used up to %.2f CPUs: the machine is busy, scaling cannot show",
				m, others)
		}
		t.Errorf("2 streams gave %.2f× the throughput of 1 (median of %v); want > 1.2×", m, ratios)
	}
}

func round(xs []float64) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%.0f", x)
	}
	return b.String()
}

func TestRunNoSeries(t *testing.T) {
	cell, err := Run(context.Background(),
		Config{Types: spinTypes, Streams: 1, Duration: 300 * ms, NoSeries: true}, spinOpener(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cell.PerSecond != nil || cell.Total.Count == 0 || cell.TPS == 0 {
		t.Errorf("without the series: per second %v, %d calls, %.0f tps; want no series, calls counted",
			cell.PerSecond, cell.Total.Count, cell.TPS)
	}
}

// doneStream makes calls calls, then says it is done.
type doneStream struct{ calls int }

func (d *doneStream) Next(ctx context.Context) (int, error) {
	if d.calls == 0 {
		return 0, Done("wrote its share")
	}
	d.calls--
	return 0, nil
}

func (*doneStream) Close() error { return nil }

// TestRunStreamDone: a stream that is done stops at once, closed or
// paced, with its reason, and its last call counts as nothing: not a
// failure, not a call.
func TestRunStreamDone(t *testing.T) {
	for _, pace := range []Pace{{}, {Think: ms}} {
		cell, err := Run(context.Background(), Config{Types: []string{"a"}, Streams: 2, Duration: 300 * ms, Pace: pace},
			func(ctx context.Context, i int) (Stream, error) { return &doneStream{calls: 5 * (i + 1)}, nil })
		if err != nil {
			t.Fatal(err)
		}
		if cell.Total.Count != 15 || cell.Total.Errors != 0 {
			t.Errorf("pace %+v: %d calls, %d errors; want 15 and 0", pace, cell.Total.Count, cell.Total.Errors)
		}
		if len(cell.Stopped) != 2 || cell.Stopped[0].Reason != "wrote its share" ||
			cell.Stopped[1].Reason != "wrote its share" {
			t.Errorf("pace %+v: stopped %+v; want both streams, with their reason", pace, cell.Stopped)
		}
	}
}

// countingStream is a flakyStream told which calls counted.
type countingStream struct {
	flakyStream
	ok, failed int64
}

func (c *countingStream) Counted(ok bool) {
	if ok {
		c.ok++
	} else {
		c.failed++
	}
}

// TestRunCounter: a Counter is told of the calls the cell counts, and of
// no warm-up call: its figures are the cell's.
func TestRunCounter(t *testing.T) {
	var streams [2]*countingStream
	cell, err := Run(context.Background(),
		Config{Types: []string{"a", "b"}, Streams: 2, Warmup: 100 * ms, Duration: 200 * ms},
		func(ctx context.Context, i int) (Stream, error) {
			streams[i] = &countingStream{}
			return streams[i], nil
		})
	if err != nil {
		t.Fatal(err)
	}
	ok, failed := streams[0].ok+streams[1].ok, streams[0].failed+streams[1].failed
	if ok != cell.Total.Count || failed != cell.Total.Errors || ok == 0 || failed == 0 {
		t.Errorf("told of %d successes and %d failures; the cell counted %d and %d",
			ok, failed, cell.Total.Count, cell.Total.Errors)
	}
}
