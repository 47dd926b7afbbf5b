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
// Run takes its hot path, untouched by pacing.
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
		return fmt.Errorf("checking cell: both a think time (%v) and a rate (%g/s): a cell is paced one way (think time: closed loop; rate: open loop)", p.Think, p.Rate)
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

// runPaced is a paced stream's loop, in place of runStream's closed one:
// the same phases and accounting, with a sleep before each call.
func runPaced(ctx context.Context, cfg *Config, s Stream, st *streamState, nslots, maxErrs int,
	interrupted *atomic.Bool, t0 time.Time) {
	p := cfg.Pace
	rng := rand.New(rand.NewPCG(p.Seed, uint64(st.id)))
	warmup, dur := cfg.Warmup, cfg.Duration
	ntypes := len(cfg.Types)
	ps := &pacedState{service: stats.NewHistogram()}
	st.paced = ps
	defer preciseSleeps()()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	// sleepUntil waits until elapsed at; false when the cell ended first.
	// The runtime's timers wake a goroutine up to a millisecond late here
	// (its poller waits in whole milliseconds), which would read as
	// latency: they take the wait only to within coarseSleep of at, and
	// the stream's own thread sleeps the rest in the kernel.
	sleepUntil := func(at time.Duration) bool {
		left := at - time.Since(t0)
		if left <= 0 {
			return true
		}
		if left > coarseSleep {
			timer.Reset(left - coarseSleep)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return false
			}
		}
		select {
		case <-ctx.Done():
			return false
		default:
		}
		for left := at - time.Since(t0); left > 0; left = at - time.Since(t0) {
			ts := unix.NsecToTimespec(int64(left))
			_ = unix.Nanosleep(&ts, nil) // woken early (EINTR): sleep what is left
		}
		return true
	}
	open := p.Rate > 0
	var next float64 // intended start, ns since t0 (open loop)
	if open {
		next = firstArrival(p, st.id, cfg.Streams, rng.ExpFloat64())
	}
	// countBacklog counts the calls due in the window from next on that
	// never started; the stream is done.
	countBacklog := func() {
		for open && phaseAt(time.Duration(next), warmup, dur) != finished {
			if phaseAt(time.Duration(next), warmup, dur) == measuring {
				ps.offered++
				ps.backlog++
			}
			next += arrivalGap(p, cfg.Streams, rng.ExpFloat64())
		}
	}
	consecutive := 0
	var last time.Duration // when the stream's last call ended
	for {
		intended := time.Duration(next)
		if open {
			if phaseAt(intended, warmup, dur) == finished {
				return // nothing more is due in the cell
			}
			due := phaseAt(intended, warmup, dur) == measuring
			if due {
				ps.offered++
			}
			next += arrivalGap(p, cfg.Streams, rng.ExpFloat64())
			// Behind schedule (the last call ended after this one was
			// due), the stream starts at once, without reading the clock.
			if intended > last && !sleepUntil(intended) {
				if !interrupted.Load() && due {
					ps.backlog++ // due in the window, which closed first
				}
				countBacklog()
				return
			}
		}
		begin := time.Since(t0)
		if !open {
			intended = begin
		}
		typ, err := s.Next(ctx)
		e := time.Since(t0)
		last = e
		if interrupted.Load() {
			return
		}
		ph := phaseAt(e, warmup, dur)
		if ph == finished {
			countBacklog()
			return
		}
		if typ < 0 || typ >= ntypes {
			st.stop = &result.StreamStop{Stream: st.id, At: e,
				Reason: fmt.Sprintf("transaction type %d out of range: the workload has %d types", typ, ntypes)}
			return
		}
		if st.stop = doneStop(st.id, e, err); st.stop != nil {
			return
		}
		if ph == measuring && open && isLate(begin, intended) {
			ps.late++
		}
		if err != nil {
			consecutive++
			if ph == measuring {
				st.errs[typ]++
				if st.firstErr[typ] == "" {
					st.firstErr[typ] = err.Error()
				}
				st.addTrace(begin, e, warmup, typ, false)
			}
			if consecutive >= maxErrs {
				st.stop = &result.StreamStop{Stream: st.id, At: e,
					Reason: fmt.Sprintf("%d consecutive errors, the last: %v", consecutive, err)}
				return
			}
		} else {
			consecutive = 0
			if ph == measuring {
				st.hists[typ].Record(int64(e - intended))
				ps.service.Record(int64(e - begin))
				if st.perSec != nil {
					st.perSec[secondOf(e, warmup, nslots)]++
				}
				st.addTrace(begin, e, warmup, typ, true)
			}
		}
		if !open && !sleepUntil(e+thinkTime(p, rng.ExpFloat64())) {
			return
		}
	}
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
	cp.Service = txStats("service", service, 0, "")
	cell.Pace = cp
}
