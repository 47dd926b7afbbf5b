package drive

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

// Pace spaces a cell's calls. The zero value is the closed loop with no
// think time: every stream calls Next again as soon as it returns, and
// the stream's loop has no pacing step.
//
// With Think, each stream waits that long after every call (a closed
// loop with think time: a stream never has more than one call in flight,
// so a slow server is simply sent less).
//
// With Rate, calls arrive on a schedule (an open loop): Rate per second
// in total, each stream taking Rate/Streams of them on its own schedule,
// which starts with the warm-up. A stream still busy when its next call
// is due starts it late, as soon as it can; latency runs from the
// intended start, so a stall shows in the percentiles (no coordinated
// omission), and a call that starts more than LateAfter after its
// intended start is counted as late. Each stream is its own queue: an
// idle stream does not take a busy one's calls (that would need a shared
// queue in the hot path).
type Pace struct {
	Think    time.Duration // think time after each call; 0 = none
	ThinkExp bool          // exponential think times with mean Think; false: fixed
	Rate     float64       // open loop: calls per second over all streams; 0 = closed loop
	Uniform  bool          // evenly spaced arrivals; false: Poisson
	// Seed seeds each stream's own RNG for think times and arrivals
	// (stream i uses Seed and i).
	Seed uint64
}

// LateAfter is how far after its intended start a call may start before it
// counts as late: well above the wake-up delay of a sleeping thread here
// (tens to a few hundred µs), well below a stall worth seeing.
const LateAfter = time.Millisecond

// MaxRate bounds Pace.Rate: beyond a million calls a second no engine
// keeps up, and the schedule alone would cost more than the calls.
const MaxRate = 1e6

// Closed reports whether p is the closed loop with no think time.
func (p Pace) Closed() bool { return p.Think == 0 && p.Rate == 0 }

func (p Pace) validate() error {
	switch {
	case p.Think < 0:
		return fmt.Errorf("checking cell: think time %v is negative (try 10ms, or 0 for none)", p.Think)
	case p.Rate < 0 || math.IsNaN(p.Rate) || p.Rate > MaxRate:
		return fmt.Errorf("checking cell: rate %g is not between 0 and %g calls per second", p.Rate, float64(MaxRate))
	case p.Think > 0 && p.Rate > 0:
		return fmt.Errorf("checking cell: both a think time (%v) and a rate (%g/s): a cell is paced one way (think "+
			"time: closed loop; rate: open loop)", p.Think, p.Rate)
	}
	return nil
}

// String says how p paces: "closed loop", "think 10ms (exponential)",
// "500/s (poisson)".
func (p Pace) String() string {
	switch {
	case p.Rate >= 1:
		return fmt.Sprintf("%s/s (%s)", strconv.FormatFloat(math.Round(p.Rate*100)/100, 'f', -1, 64), p.arrivals())
	case p.Rate > 0:
		return fmt.Sprintf("%.3g/s (%s)", p.Rate, p.arrivals())
	case p.Think > 0:
		return fmt.Sprintf("think %v (%s)", p.Think, p.thinkDist())
	}
	return "closed loop"
}

func (p Pace) arrivals() string {
	if p.Uniform {
		return "uniform"
	}
	return "poisson"
}

func (p Pace) thinkDist() string {
	if p.ThinkExp {
		return "exponential"
	}
	return "fixed"
}

// The schedule. Times are elapsed since the cell's warm-up began, in
// nanoseconds as float64 so that uniform gaps do not drift by rounding;
// random draws come in as arguments (x is an exponential draw of mean 1),
// so every rule is tested without a clock or an RNG.

// meanGap is the mean time between one stream's arrivals: streams / rate
// seconds, in ns.
func meanGap(rate float64, streams int) float64 { return float64(streams) / rate * 1e9 }

// firstArrival is stream's first intended start: uniform arrivals
// interleave the streams evenly (stream i at i/rate), Poisson arrivals
// start each stream's process at 0.
func firstArrival(p Pace, stream, streams int, x float64) float64 {
	if p.Uniform {
		return float64(stream) / p.Rate * 1e9
	}
	return x * meanGap(p.Rate, streams)
}

// arrivalGap is the time from one of a stream's intended starts to its
// next: the mean gap, or an exponential draw of it (each stream a Poisson
// process of rate/streams, so that all of them together are one of rate).
func arrivalGap(p Pace, streams int, x float64) float64 {
	if p.Uniform {
		return meanGap(p.Rate, streams)
	}
	return x * meanGap(p.Rate, streams)
}

// thinkTime is the wait after a call: Think, or an exponential draw of
// mean Think.
func thinkTime(p Pace, x float64) time.Duration {
	if p.ThinkExp {
		return time.Duration(x * float64(p.Think))
	}
	return p.Think
}

// coarseSleep is how close to an intended start a stream stops waiting
// on a runtime timer and sleeps in the kernel instead.
const coarseSleep = 2 * time.Millisecond

// preciseSleeps asks the kernel to wake this thread within a microsecond
// of its sleeps (the default slack is 50 µs) and returns what restores
// the slack it had.
func preciseSleeps() (restore func()) {
	old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil || unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0) != nil {
		return func() {}
	}
	return func() { _ = unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(old), 0, 0, 0) }
}

// isLate reports whether a call that started at begin was late for its
// intended start.
func isLate(begin, intended time.Duration) bool { return begin-intended > LateAfter }

// pacedState is what a paced stream measures beyond a closed one.
type pacedState struct {
	service *stats.Histogram // latency from actual start, successful calls
	offered int64            // intended starts in the window
	late    int64
	backlog int64
}

// pacer is a paced stream's pacing step, the one thing its loop does
// beyond a closed stream's: it waits before each call (for the call's
// intended start, or out the think time after the call before) and counts
// what pacing measures. A closed stream has none.
type pacer struct {
	*pacedState
	cfg          *Config
	ctx          context.Context
	t0           time.Time
	rng          *rand.Rand
	timer        *time.Timer
	restoreSlack func()
	open         bool          // an arrival schedule; false: think time
	next         float64       // the next call's intended start, ns since t0
	intended     time.Duration // the call in flight's intended start (open loop)
	last         time.Duration // when the stream's last call ended
}

// newPacer starts st's pacing on the calling (the stream's) thread; close
// ends it.
func newPacer(ctx context.Context, cfg *Config, st *streamState, t0 time.Time) *pacer {
	p := cfg.Pace
	pc := &pacer{pacedState: &pacedState{service: stats.NewHistogram()}, cfg: cfg, ctx: ctx, t0: t0,
		rng: rand.New(rand.NewPCG(p.Seed, uint64(st.id))), timer: time.NewTimer(time.Hour),
		restoreSlack: preciseSleeps(), open: p.Rate > 0}
	pc.timer.Stop()
	st.paced = pc.pacedState
	if pc.open {
		pc.next = firstArrival(p, st.id, cfg.Streams, pc.rng.ExpFloat64())
	}
	return pc
}

// phaseAt is the cell's phase at elapsed e.
func (pc *pacer) phaseAt(e time.Duration) phase { return phaseAt(e, pc.cfg.Warmup, pc.cfg.Duration) }

func (pc *pacer) close() {
	pc.timer.Stop()
	pc.restoreSlack()
}

// wait waits until the next call may start; false when the stream is
// done: nothing more is due in the cell, or the cell ended while it
// waited.
func (pc *pacer) wait(interrupted *atomic.Bool) bool {
	if !pc.open {
		return pc.sleepUntil(time.Duration(pc.next))
	}
	pc.intended = time.Duration(pc.next)
	ph := pc.phaseAt(pc.intended)
	if ph == finished {
		return false // nothing more is due in the cell
	}
	due := ph == measuring
	if due {
		pc.offered++
	}
	pc.next += arrivalGap(pc.cfg.Pace, pc.cfg.Streams, pc.rng.ExpFloat64())
	// Behind schedule (the last call ended after this one was due), the
	// stream starts at once, without reading the clock.
	if pc.intended > pc.last && !pc.sleepUntil(pc.intended) {
		if !interrupted.Load() && due {
			pc.backlog++ // due in the window, which closed first
		}
		pc.countBacklog()
		return false
	}
	return true
}

// called counts a call that ran from begin to end (elapsed since t0),
// completing in phase ph, and returns where its latency runs from: its
// intended start in an open loop, its actual start with think time.
func (pc *pacer) called(ph phase, begin, end time.Duration, ok bool) (from time.Duration) {
	pc.last = end
	from = begin
	if pc.open {
		from = pc.intended
		if ph == measuring && isLate(begin, pc.intended) {
			pc.late++
		}
	} else {
		pc.next = float64(end + thinkTime(pc.cfg.Pace, pc.rng.ExpFloat64()))
	}
	if ok && ph == measuring {
		pc.service.Record(int64(end - begin))
	}
	return from
}

// countBacklog counts the calls due in the window from next on that never
// started; the stream is done.
func (pc *pacer) countBacklog() {
	for pc.open && pc.phaseAt(time.Duration(pc.next)) != finished {
		if pc.phaseAt(time.Duration(pc.next)) == measuring {
			pc.offered++
			pc.backlog++
		}
		pc.next += arrivalGap(pc.cfg.Pace, pc.cfg.Streams, pc.rng.ExpFloat64())
	}
}

// sleepUntil waits until elapsed at; false when the cell ended first. The
// runtime's timers wake a goroutine up to a millisecond late here (its
// poller waits in whole milliseconds), which would read as latency: they
// take the wait only to within coarseSleep of at, and the stream's own
// thread sleeps the rest in the kernel.
func (pc *pacer) sleepUntil(at time.Duration) bool {
	left := at - time.Since(pc.t0)
	if left <= 0 {
		return true
	}
	if left > coarseSleep {
		pc.timer.Reset(left - coarseSleep)
		select {
		case <-pc.timer.C:
		case <-pc.ctx.Done():
			return false
		}
	}
	select {
	case <-pc.ctx.Done():
		return false
	default:
	}
	for left := at - time.Since(pc.t0); left > 0; left = at - time.Since(pc.t0) {
		ts := unix.NsecToTimespec(int64(left))
		_ = unix.Nanosleep(&ts, nil) // woken early (EINTR): sleep what is left
	}
	return true
}

// mergePace folds the paced streams' measurements into cell.Pace.
func mergePace(cell *result.Cell, p Pace, states []*streamState) {
	cp := &result.Pace{Mode: "think", Think: p.Think, ThinkDist: p.thinkDist()}
	if p.Rate > 0 {
		cp = &result.Pace{Mode: "rate", Rate: p.Rate, Arrivals: p.arrivals(), LateAfter: LateAfter}
	}
	service := stats.NewHistogram()
	for _, st := range states {
		if st.paced == nil {
			continue
		}
		service.Merge(st.paced.service)
		cp.Offered += st.paced.offered
		cp.Late += st.paced.late
		cp.Backlog += st.paced.backlog
	}
	cp.Service = TxStats("service", service, 0, "")
	cell.Pace = cp
}
