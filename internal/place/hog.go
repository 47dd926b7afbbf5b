package place

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// Hog is a busy neighbour: one plain CPU-bound thread pinned to each of
// its CPUs (an add loop touching no memory), until Stop. It stands for
// a serial query that keeps a scheduler busy beside a parallel one.
type Hog struct {
	CPUs []int
	stop atomic.Bool
	wg   sync.WaitGroup
	ran  []atomic.Int64 // loop iterations per thread, so the loop is not dead code
}

// StartHog starts one busy thread on each of cpus and returns once each is
// pinned.
func StartHog(cpus []int) (*Hog, error) {
	h := &Hog{CPUs: cpus, ran: make([]atomic.Int64, len(cpus))}
	errs := make(chan error, len(cpus))
	for i, cpu := range cpus {
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			runtime.LockOSThread() // never unlocked: the thread ends with its pinning
			if err := Pin([]int{cpu}); err != nil {
				errs <- fmt.Errorf("starting a busy thread on CPU %d: %w", cpu, err)
				return
			}
			errs <- nil
			n := int64(0)
			for !h.stop.Load() {
				for range 1 << 16 {
					n++
				}
			}
			h.ran[i].Store(n)
		}()
	}
	var first error
	for range cpus {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		h.Stop()
		return nil, first
	}
	return h, nil
}

// Stop ends the busy threads and waits for them; a nil Hog does nothing.
func (h *Hog) Stop() {
	if h == nil {
		return
	}
	h.stop.Store(true)
	h.wg.Wait()
}

// HogCPUs picks n of a placement's CPUs for a hog: the last n in the order
// streams take them (Placement.Streams), so that the first streams run
// on the others and the parallel workers share the hogged ones; with no
// placement (streams nil), the last n CPUs this process may use. n above
// the CPUs is refused: two busy threads on one CPU busy it once.
func HogCPUs(streams []int, n int) ([]int, error) {
	if len(streams) == 0 {
		all, err := ProcessCPUs()
		if err != nil {
			return nil, fmt.Errorf("finding CPUs for a busy thread: %w", err)
		}
		streams = all
	}
	if n > len(streams) {
		return nil, fmt.Errorf("%d busy threads need %d CPUs, and there are %d (%s)", n, n, len(streams), FormatCPUs(streams))
	}
	return append([]int(nil), streams[len(streams)-n:]...), nil
}
