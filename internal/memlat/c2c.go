package memlat

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/result"
)

// Classes of CPU pair for the cache-to-cache latency, nearest first.
const (
	PairSMT       = "SMT siblings"   // two hardware threads of one core
	PairSameLLC   = "same LLC"       // two cores sharing the last-level cache
	PairOtherLLC  = "other LLC"      // two cores of one node, each with its own last-level cache
	PairOtherCore = "other core"     // two cores of one node whose caches the topology does not list
	PairOtherNode = "other node"     // two CPUs of different NUMA nodes
	pairSame      = "same CPU"       // not a pair
	pairUnknown   = "unknown CPU(s)" // not in the topology
)

// C2C is the cache-to-cache latency: one cache line bounced between two
// pinned threads, one pair of CPUs per class the machine has (as MLC's
// c2c and multichase's pingpong measure it).
type C2C struct {
	Pairs []C2CPair `json:"pairs"`
	// GHz is the clock the cycle counts are from: the probe's start clock.
	GHz float64 `json:"ghz"`
	// Missing names the classes this machine has no pair of, and why.
	Missing []string `json:"missing,omitempty"`
	// Hypervisor is the topology's (empty on bare metal): the host that
	// moves or shares a guest's vCPUs, named when a pair is Unsteady.
	Hypervisor string `json:"hypervisor,omitempty"`
}

// C2CPair is one pair's round trip: the first thread writes the line, the
// second sees the write and writes it back, the first sees that. Each
// transfer moves a modified line to the other CPU's cache, so a round trip
// is two transfers; OneWayNS is half of it, multichase pingpong's figure.
//
// The figure is the lowest clean window (BestNS), as multichase reports its
// best sample: a window in which either thread waited for its CPU (the
// answering thread's preemptions cannot be seen from the timing thread) is
// slower than the transfer, never faster, and on a busy or virtual machine
// most windows are such; the median is kept to show how many were.
type C2CPair struct {
	Class       string  `json:"class"`
	CPUs        [2]int  `json:"cpus"`
	RoundTripNS Stat    `json:"round_trip_ns"`
	BestNS      float64 `json:"best_ns"`    // the lowest clean window, ns per round trip
	OneWayNS    float64 `json:"one_way_ns"` // BestNS / 2
	// Cycles is BestNS × the C2C's GHz.
	Cycles float64 `json:"round_trip_cycles"`
	// Spread is the median clean window over the lowest.
	Spread float64 `json:"spread,omitempty"`
	// Unsteady, when set, says why the windows are no cache's latency:
	// they spread beyond C2CSpreadBound, or the timing thread was
	// preempted in most (RoundTripNS.Noisy). On a guest that is the host
	// moving the vCPUs between placements or running other work on them;
	// BestNS and the rest are kept as measured but are not a latency.
	Unsteady string `json:"unsteady,omitempty"`
}

// C2CSpreadBound is the median-to-lowest window ratio above which a pair's
// round trips are not one latency. One placement's windows repeat within
// a few percent; this 2-vCPU guest's host moved the pair between
// placements about 65, 100 and 450 ns apart (1.5x and more), and while
// it did, windows of one pair read 100 to 900 ns (issue 51).
const C2CSpreadBound = 1.5

// newC2CPair makes a pair's figures from its windows, and judges them.
func newC2CPair(class string, cpus [2]int, st Stat, ghz float64, hypervisor string) C2CPair {
	b := best(st)
	p := C2CPair{Class: class, CPUs: cpus, RoundTripNS: st, BestNS: b, OneWayNS: b / 2, Cycles: b * ghz,
		Spread: ratio(st.Median, b)}
	if p.Spread <= C2CSpreadBound && !st.Noisy {
		return p
	}
	who := "other work shared the CPUs or the scheduler moved the threads"
	if hypervisor != "" {
		who = fmt.Sprintf("the host (%s) moved or shared the vCPUs", hypervisor)
	}
	why := fmt.Sprintf("windows %.0f-%.0f ns, the median %.1fx the lowest (above %.1fx)",
		st.Min, st.Max, p.Spread, C2CSpreadBound)
	if p.Spread <= C2CSpreadBound {
		why = fmt.Sprintf("the timing thread was preempted in most windows (%.0f-%.0f ns)", st.Min, st.Max)
	}
	p.Unsteady = who + ": " + why + "; no cache-to-cache latency measured"
	return p
}

// ClassifyPair says which class the pair of CPUs a and b is on machine t.
func ClassifyPair(t *result.Topology, a, b int) string {
	ca, okA := t.CPU(a)
	cb, okB := t.CPU(b)
	switch {
	case !okA || !okB:
		return pairUnknown
	case a == b:
		return pairSame
	case ca.Node != cb.Node:
		return PairOtherNode
	case ca.Core == cb.Core:
		return PairSMT
	}
	llc := lastLevelOf(t, a)
	if llc == nil || !slices.Contains(llc.CPUs, a) {
		return PairOtherCore
	}
	if slices.Contains(llc.CPUs, b) {
		return PairSameLLC
	}
	return PairOtherLLC
}

// lastLevelOf is the highest-level data or unified cache CPU cpu sees, or
// nil when the topology lists none.
func lastLevelOf(t *result.Topology, cpu int) *result.Cache {
	var out *result.Cache
	for i, c := range t.Caches {
		if c.Type == "Instruction" || !slices.Contains(c.CPUs, cpu) {
			continue
		}
		if out == nil || c.Level > out.Level {
			out = &t.Caches[i]
		}
	}
	return out
}

// C2CPairs picks, for each class, the first CPU that forms a pair of that
// class with the machine's first CPU, in class order, and names the classes
// the machine has no pair of.
func C2CPairs(t *result.Topology) (pairs [][2]int, classes, missing []string) {
	if len(t.CPUs) == 0 {
		return nil, nil, []string{"the topology lists no CPUs"}
	}
	a := t.CPUs[0].ID
	for _, class := range []string{PairSMT, PairSameLLC, PairOtherLLC, PairOtherCore, PairOtherNode} {
		found := false
		for _, c := range t.CPUs {
			if ClassifyPair(t, a, c.ID) == class {
				pairs, classes, found = append(pairs, [2]int{a, c.ID}), append(classes, class), true
				break
			}
		}
		if !found && class != PairOtherCore {
			missing = append(missing, class)
		}
	}
	return pairs, classes, missing
}

// probeC2C measures the cache-to-cache round trip for each class of CPU
// pair the machine has.
func probeC2C(ctx context.Context, cfg *Config, t *result.Topology, ghz float64, rep *Report, say func(string)) error {
	pairs, classes, missing := C2CPairs(t)
	c := &C2C{GHz: ghz, Missing: missing, Hypervisor: t.Hypervisor}
	rep.C2C = c
	s := sampling{Samples: cfg.C2CSamples, MinWindow: 2 * time.Millisecond, Tries: 2 * cfg.C2CSamples}
	for i, p := range pairs {
		say(fmt.Sprintf("cache-to-cache: CPUs %d and %d (%s)", p[0], p[1], classes[i]))
		st, err := PingPong(ctx, p[0], p[1], s.Samples, s.MinWindow)
		if err != nil {
			return fmt.Errorf("measuring the cache-to-cache latency between CPUs %d and %d: %w", p[0], p[1], err)
		}
		c.Pairs = append(c.Pairs, newC2CPair(classes[i], p, st, ghz, t.Hypervisor))
	}
	return nil
}

// PingPong measures the round trip of one cache line between a thread
// pinned to CPU a and one pinned to CPU b: the median of samples windows
// of at least window of a's thread CPU time each, in ns per round trip.
// A window in which a's thread was preempted is left out as the other
// probes leave theirs out; one in which b's thread was preempted reads
// slow (a spins until b runs again), which the median absorbs.
func PingPong(ctx context.Context, a, b, samples int, window time.Duration) (Stat, error) {
	if a == b {
		return Stat{}, fmt.Errorf("a cache line bounced between CPU %d and itself measures nothing: give two CPUs", a)
	}
	// The line lives in its own page, so nothing else shares it.
	mem, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return Stat{}, fmt.Errorf("mapping the page of the bounced line: %w", err)
	}
	defer unix.Munmap(mem)
	line := (*int64)(unsafe.Pointer(&mem[0]))

	// The responder waits for an odd value and answers with the next
	// even one; a negative value stops it.
	ready := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := onCPU(b, func() error {
			ready <- nil
			for {
				v := atomic.LoadInt64(line)
				if v < 0 {
					return nil
				}
				if v&1 == 1 {
					atomic.StoreInt64(line, v+1)
				}
			}
		})
		if err != nil {
			ready <- err
		}
	}()
	if err := <-ready; err != nil {
		<-done
		return Stat{}, fmt.Errorf("pinning the answering thread: %w", err)
	}
	var st Stat
	err = onCPU(a, func() (err error) {
		next := int64(1)
		rounds := func(n int) {
			for range n {
				atomic.StoreInt64(line, next)
				for atomic.LoadInt64(line) != next+1 {
				}
				next += 2
			}
		}
		rounds(1000) // both caches have seen the line
		st, err = timeWindows(ctx, sampling{Samples: samples, MinWindow: window, Tries: 2 * samples}, rounds,
			func(n int, d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(n) })
		return err
	})
	atomic.StoreInt64(line, -1)
	<-done
	return st, err
}
