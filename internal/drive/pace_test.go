package drive

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

func TestPaceValidate(t *testing.T) {
	for _, tc := range []struct {
		p  Pace
		ok bool
	}{
		{Pace{}, true},
		{Pace{Think: time.Millisecond, ThinkExp: true}, true},
		{Pace{Rate: 500, Uniform: true}, true},
		{Pace{Rate: MaxRate}, true},
		{Pace{Think: -1}, false},
		{Pace{Rate: -1}, false},
		{Pace{Rate: math.NaN()}, false},
		{Pace{Rate: MaxRate * 2}, false},
		{Pace{Think: time.Millisecond, Rate: 10}, false},
	} {
		if err := tc.p.validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: validate = %v, want ok %v", tc.p, err, tc.ok)
		}
	}
	if !(Pace{Seed: 3, Uniform: true}).Closed() || (Pace{Rate: 1}).Closed() || (Pace{Think: 1}).Closed() {
		t.Error("Closed is wrong")
	}
}

func TestPaceString(t *testing.T) {
	for p, want := range map[Pace]string{
		{}:                                   "closed loop",
		{Rate: 500}:                          "500/s (poisson)",
		{Rate: 2.5, Uniform: true}:           "2.5/s (uniform)",
		{Rate: 180.33333333333331}:           "180.33/s (poisson)",
		{Rate: 0.001}:                        "0.001/s (poisson)",
		{Think: 10 * time.Millisecond}:       "think 10ms (fixed)",
		{Think: time.Second, ThinkExp: true}: "think 1s (exponential)",
	} {
		if got := p.String(); got != want {
			t.Errorf("%+v: %q, want %q", p, got, want)
		}
	}
}

func TestScheduleFunctions(t *testing.T) {
	poisson, uniform := Pace{Rate: 1000}, Pace{Rate: 1000, Uniform: true}
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"mean gap, 4 streams at 1000/s", meanGap(1000, 4), 4e6},
		{"mean gap, 1 stream at 3/s", meanGap(3, 1), 1e9 / 3},
		{"uniform first arrival, stream 0", firstArrival(uniform, 0, 4, 7), 0},
		{"uniform first arrival, stream 2 of 4", firstArrival(uniform, 2, 4, 7), 2e6},
		{"poisson first arrival is a gap", firstArrival(poisson, 2, 4, 0.5), 2e6},
		{"uniform gap ignores the draw", arrivalGap(uniform, 4, 9), 4e6},
		{"poisson gap scales the draw", arrivalGap(poisson, 4, 0.25), 1e6},
		{"poisson gap of a zero draw", arrivalGap(poisson, 4, 0), 0},
	} {
		if math.Abs(tc.got-tc.want) > 1e-6 {
			t.Errorf("%s: %g, want %g", tc.name, tc.got, tc.want)
		}
	}
	fixed, exp := Pace{Think: 10 * time.Millisecond}, Pace{Think: 10 * time.Millisecond, ThinkExp: true}
	for _, tc := range []struct {
		p    Pace
		x    float64
		want time.Duration
	}{
		{fixed, 3, 10 * time.Millisecond},
		{exp, 1, 10 * time.Millisecond},
		{exp, 0.5, 5 * time.Millisecond},
		{exp, 0, 0},
	} {
		if got := thinkTime(tc.p, tc.x); got != tc.want {
			t.Errorf("think %v with draw %g: %v, want %v", tc.p, tc.x, got, tc.want)
		}
	}
	for _, tc := range []struct {
		begin, intended time.Duration
		late            bool
	}{
		{5 * time.Millisecond, 5 * time.Millisecond, false},
		{5 * time.Millisecond, 6 * time.Millisecond, false}, // early (cannot happen; not late)
		{5*time.Millisecond + LateAfter, 5 * time.Millisecond, false},
		{5*time.Millisecond + LateAfter + 1, 5 * time.Millisecond, true},
	} {
		if got := isLate(tc.begin, tc.intended); got != tc.late {
			t.Errorf("begin %v intended %v: late %v, want %v", tc.begin, tc.intended, got, tc.late)
		}
	}
}

// TestUniformScheduleInterleaves steps three streams' uniform schedules:
// together they arrive exactly every 1/rate.
func TestUniformScheduleInterleaves(t *testing.T) {
	p := Pace{Rate: 300, Uniform: true}
	const streams = 3
	var all []float64
	for s := range streams {
		for at := firstArrival(p, s, streams, 1); at < 1e9; at += arrivalGap(p, streams, 1) {
			all = append(all, at)
		}
	}
	if len(all) != 300 {
		t.Fatalf("%d arrivals in a second at 300/s", len(all))
	}
	seen := map[int64]bool{}
	for _, at := range all {
		k := int64(math.Round(at / (1e9 / 300)))
		if math.Abs(at-float64(k)*1e9/300) > 1 || seen[k] {
			t.Fatalf("arrival at %g ns is not on its own slot of 1/300 s", at)
		}
		seen[k] = true
	}
}

// TestPoissonScheduleRate steps seeded Poisson schedules of 4 streams
// over 100 s at 1000/s: the count is within 4 standard deviations (√n) of
// 100,000, and the gaps' coefficient of variation is that of an
// exponential, 1.
func TestPoissonScheduleRate(t *testing.T) {
	p := Pace{Rate: 1000}
	const streams = 4
	var n int
	var sum, sumsq float64
	for s := range streams {
		rng := rand.New(rand.NewPCG(7, uint64(s)))
		prev := 0.0
		for at := firstArrival(p, s, streams, rng.ExpFloat64()); at < 100e9; at += arrivalGap(p, streams, rng.ExpFloat64()) {
			n++
			g := at - prev
			sum += g
			sumsq += g * g
			prev = at
		}
	}
	if math.Abs(float64(n)-1e5) > 4*math.Sqrt(1e5) {
		t.Errorf("%d arrivals in 100 s at 1000/s", n)
	}
	mean := sum / float64(n)
	cv := math.Sqrt(sumsq/float64(n)-mean*mean) / mean
	if math.Abs(cv-1) > 0.02 {
		t.Errorf("gaps' coefficient of variation %.3f, want 1 (exponential)", cv)
	}
}

// TestRunOpenLoopRate runs a stream that does nothing at 2000 calls a
// second over 2 streams: the calls due in the window are the rate times
// the window, and every one of them either completed in it, started late
// in it, or is in the backlog.
func TestRunOpenLoopRate(t *testing.T) {
	for _, uniform := range []bool{true, false} {
		cfg := Config{Types: spinTypes, Streams: 2, Warmup: 100 * time.Millisecond, Duration: time.Second,
			Pace: Pace{Rate: 2000, Uniform: uniform, Seed: 1}}
		cell, err := Run(context.Background(), cfg, noopOpener)
		if err != nil {
			t.Fatal(err)
		}
		p := cell.Pace
		if p == nil || p.Mode != "rate" || p.Rate != 2000 || p.LateAfter != LateAfter {
			t.Fatalf("pace %+v", p)
		}
		want := 2000.0
		if !uniform {
			want = 2000 + 4*math.Sqrt(2000) // a bound, not a band: a seeded draw
		}
		if uniform && math.Abs(float64(p.Offered)-want) > 2 ||
			!uniform && (float64(p.Offered) > want || float64(p.Offered) < 2000-4*math.Sqrt(2000)) {
			t.Errorf("uniform %v: %d calls due in 1 s at 2000/s", uniform, p.Offered)
		}
		// Calls due at the end of the warm-up may complete in the window,
		// and calls due at its end after it: a few either way.
		if done := cell.Total.Count + p.Backlog; math.Abs(float64(done-p.Offered)) > 0.01*float64(p.Offered) {
			t.Errorf("uniform %v: %d completed + %d backlog against %d due", uniform, cell.Total.Count, p.Backlog, p.Offered)
		}
		if p.Service.Count != cell.Total.Count || p.Service.P50US > cell.Total.P50US {
			t.Errorf("uniform %v: service %+v against total %+v (service time is never longer)", uniform, p.Service, cell.Total)
		}
		t.Logf("uniform %v: %d due, %d done (%.1f/s), %d late, backlog %d; p50 %.1f µs from intended start, %.1f µs service",
			uniform, p.Offered, cell.Total.Count, cell.TPS, p.Late, p.Backlog, cell.Total.P50US, p.Service.P50US)
	}
}

// TestRunThinkTime: a stream that does nothing, with a fixed think time
// of 10 ms, never calls more often than every 10 ms.
func TestRunThinkTime(t *testing.T) {
	cfg := Config{Types: spinTypes, Streams: 2, Duration: 500 * time.Millisecond, Pace: Pace{Think: 10 * time.Millisecond}}
	cell, err := Run(context.Background(), cfg, noopOpener)
	if err != nil {
		t.Fatal(err)
	}
	if n := cell.Total.Count; n > 2*(50+1) || n == 0 {
		t.Errorf("%d calls in 500 ms from 2 streams thinking 10 ms each", n)
	}
	if cell.Pace == nil || cell.Pace.Mode != "think" || cell.Pace.Think != 10*time.Millisecond ||
		cell.Pace.ThinkDist != "fixed" {
		t.Errorf("pace %+v", cell.Pace)
	}
	t.Logf("%d calls", cell.Total.Count)
}

// TestRunPacedInterrupted: Ctrl-C wakes a stream asleep until its next
// arrival, and ends the cell at once.
func TestRunPacedInterrupted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	cell, err := Run(ctx, Config{Types: spinTypes, Streams: 1, Duration: time.Hour, Pace: Pace{Rate: 0.001}}, noopOpener)
	if err != nil {
		t.Fatal(err)
	}
	if !cell.Interrupted || time.Since(start) > 10*time.Second {
		t.Errorf("interrupted %v after %v", cell.Interrupted, time.Since(start))
	}
}

// stallStream takes 200 µs of wall time a call (whatever the machine's
// load) and waits on mu first: a test holding mu stalls it.
type stallStream struct{ mu *sync.Mutex }

func (s stallStream) Next(context.Context) (int, error) {
	s.mu.Lock()
	s.mu.Unlock() //nolint:staticcheck // an empty critical section: the wait is the point
	for start := time.Now(); time.Since(start) < 200*time.Microsecond; {
	}
	return 0, nil
}
func (stallStream) Close() error { return nil }

// TestStallShowsInOpenLoopP99 blocks a stream on a lock for 300 ms in
// the middle of a 2 s window. The closed loop sends nothing while it
// waits: one call of thousands is slow, and p99 does not move. The open
// loop keeps its schedule (200 calls a second), so the ~60 calls due
// during the stall are late, 15% of the window, and p99 from intended
// start shows it; their service time does not. The bounds leave room for
// this shared machine, whose scheduler has held a spinning thread for
// tens of milliseconds now and then.
func TestStallShowsInOpenLoopP99(t *testing.T) {
	const stall = 300 * time.Millisecond
	run := func(p Pace) *result.Cell {
		var mu sync.Mutex
		cfg := Config{Types: spinTypes, Streams: 1, Warmup: 100 * time.Millisecond, Duration: 2 * time.Second, Pace: p}
		done := make(chan struct{})
		go func() {
			defer close(done)
			time.Sleep(cfg.Warmup + 700*time.Millisecond) // cell setup takes a moment more: still mid-window
			mu.Lock()
			time.Sleep(stall)
			mu.Unlock()
		}()
		cell, err := Run(context.Background(),
			cfg, func(context.Context, int) (Stream, error) { return stallStream{&mu}, nil })
		<-done
		if err != nil {
			t.Fatal(err)
		}
		return cell
	}
	closed := run(Pace{})
	open := run(Pace{Rate: 200, Uniform: true})
	t.Logf("closed loop: %d calls, p99 %.0f µs, max %.0f µs", closed.Total.Count, closed.Total.P99US, closed.Total.MaxUS)
	t.Logf("open loop at 200/s: %d calls, %d late, p99 %.0f µs from intended start, service p99 %.0f µs",
		open.Total.Count, open.Pace.Late, open.Total.P99US, open.Pace.Service.P99US)
	stallUS := float64(stall.Microseconds())
	if closed.Total.MaxUS < 0.5*stallUS {
		t.Fatalf("the stall did not happen in the closed loop's window (max %.0f µs)", closed.Total.MaxUS)
	}
	if closed.Total.P99US > stallUS/5 {
		t.Errorf("closed-loop p99 %.0f µs shows the %v stall", closed.Total.P99US, stall)
	}
	if open.Total.P99US < 0.5*stallUS {
		t.Errorf("open-loop p99 %.0f µs does not show the %v stall", open.Total.P99US, stall)
	}
	if open.Pace.Late < 30 {
		t.Errorf("%d late calls; the stall delays ~60", open.Pace.Late)
	}
	if open.Pace.Service.P99US > stallUS/3 {
		t.Errorf("open-loop service p99 %.0f µs shows the stall: only one call waited", open.Pace.Service.P99US)
	}
}

// BenchmarkPacingOverhead compares interleaved closed-loop cells with
// open-loop cells asking MaxRate calls a second, far above what the
// synthetic ~10 µs call (5 and 15 µs, 50/50) sustains on one pinned CPU:
// the open loop then never sleeps, and what it costs is its schedule (an
// RNG draw and a few comparisons a call). 1 s cells, 7 pairs, alternating
// which goes first; it reports the median of open/closed tps and of calls
// per CPU-second. Run it with
//
//	flock /tmp/numalab-measure.lock go test -run '^$' -bench PacingOverhead -benchtime 1x ./internal/drive
func BenchmarkPacingOverhead(b *testing.B) {
	for b.Loop() {
		cfg := overheadConfig(b, time.Second)
		cfg.Monitor = cpuMonitor
		open := spinOpener(nil)
		var ratios, cpuRatios, closedTPS, openTPS []float64
		perCPU := func(c *result.Cell) float64 {
			return float64(c.Total.Count) / (c.Usage.ProcUserCPU + c.Usage.ProcSystemCPU).Seconds()
		}
		for r := range 7 {
			var closed, paced *result.Cell
			for k := range 2 {
				c := cfg
				if (k == 0) != (r%2 == 0) {
					c.Pace = Pace{Rate: MaxRate, Seed: 1}
				}
				cell, err := Run(context.Background(), c, open)
				if err != nil {
					b.Fatal(err)
				}
				if c.Pace.Closed() {
					closed = cell
				} else {
					paced = cell
				}
			}
			if paced.Pace.Late < paced.Total.Count*99/100 {
				b.Fatalf("only %d of %d calls late: the rate is not above what the stream sustains",
					paced.Pace.Late, paced.Total.Count)
			}
			closedTPS, openTPS = append(closedTPS, closed.TPS), append(openTPS, paced.TPS)
			ratios = append(ratios, paced.TPS/closed.TPS)
			cpuRatios = append(cpuRatios, perCPU(paced)/perCPU(closed))
		}
		b.ReportMetric(stats.Median(ratios), "open/closed")
		b.ReportMetric(stats.Median(cpuRatios), "open/closed-per-CPU-s")
		b.ReportMetric(stats.Median(closedTPS), "closed-tps")
		b.Logf("tps ratios %.4f; closed %s tps; open %s tps", ratios, round(closedTPS), round(openTPS))
		b.Logf("per CPU-second ratios %.4f", cpuRatios)
	}
}

// TestRunPacedAtOverloadDoesNotAllocate: an open loop asked far more than
// the stream sustains never sleeps, and allocates nothing a call.
func TestRunPacedAtOverloadDoesNotAllocate(t *testing.T) {
	cell, mallocs := atLeastCalls(t, Config{Types: spinTypes, Streams: 1, Pace: Pace{Rate: MaxRate}}, noopOpener, 50_000)
	if mallocs > uint64(cell.Total.Count/1000) {
		t.Errorf("%d allocations for %d calls", mallocs, cell.Total.Count)
	}
	t.Logf("%d allocations for %d calls (%.0f ns a call)", mallocs, cell.Total.Count, 1e9/cell.TPS)
}
