package memlat

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/numalab/numalab/internal/result"
)

// BWPoint is sequential-read bandwidth with some threads.
type BWPoint struct {
	Threads     int     `json:"threads"`
	CPUs        []int   `json:"cpus"`
	GBps        float64 `json:"gb_per_s"` // 10^9 bytes per second, all threads together
	RegionBytes int64   `json:"region_bytes"`
	Preempted   int     `json:"preempted"` // threads preempted during their window
}

// LoadedPoint is chase latency while k other CPUs stream.
type LoadedPoint struct {
	Streamers int     `json:"streamers"`
	NS        Stat    `json:"ns"`
	GBps      float64 `json:"gb_per_s"` // what the streamers read meanwhile
}

// Bandwidth holds the bandwidth and loaded-latency results.
type Bandwidth struct {
	Read   []BWPoint     `json:"read"`
	Loaded []LoadedPoint `json:"loaded"`
	Bytes  int64         `json:"chase_bytes"`
	CPU    int           `json:"chase_cpu"`
}

// bwRegionBytes is the memory each bandwidth thread streams over.
func bwRegionBytes(t *result.Topology) int64 {
	return max(2*t.LastLevelCache(), 64<<20)
}

// streamCPUs lists the CPUs bandwidth threads use: one per physical core
// first, then the SMT siblings.
func streamCPUs(t *result.Topology) []int {
	var first, rest []int
	for _, c := range t.Cores {
		if len(c.CPUs) == 0 {
			continue
		}
		first = append(first, c.CPUs[0])
		rest = append(rest, c.CPUs[1:]...)
	}
	if len(first) == 0 {
		for _, c := range t.CPUs {
			first = append(first, c.ID)
		}
	}
	return append(first, rest...)
}

// stream reads region sequentially on cpu until stop is closed or, when
// d > 0, for d of thread CPU time; it returns the bytes read, the thread
// CPU time taken and whether the thread was preempted.
func stream(cpu int, region []byte, d time.Duration, ready *sync.WaitGroup, gate <-chan struct{}, stop <-chan struct{}) (bytes int64, took time.Duration, preempted bool, err error) {
	err = onCPU(cpu, func() error {
		const chunk = 4 << 20
		p := unsafe.Pointer(unsafe.SliceData(region))
		readSum(p, len(region)/8) // warm the TLB
		ready.Done()
		<-gate
		c0 := involuntarySwitches()
		t0 := threadTime()
		var sink uint64
	loop:
		for {
			for off := 0; off+chunk <= len(region); off += chunk {
				sink += readSum(unsafe.Add(p, off), chunk/8)
				bytes += chunk
				select {
				case <-stop:
					break loop
				default:
				}
				if d > 0 && threadTime()-t0 >= d {
					break loop
				}
			}
		}
		took = threadTime() - t0
		preempted = involuntarySwitches() != c0
		_ = sink
		return nil
	})
	return
}

// probeBandwidth measures sequential-read bandwidth with 1..all CPUs and
// chase latency on c while 0..all-1 other CPUs stream.
func probeBandwidth(ctx context.Context, cfg *Config, t *result.Topology, c *chain, rep *Report, say func(string)) error {
	cpus := streamCPUs(t)
	region := bwRegionBytes(t)
	pages := cfg.Pages[len(cfg.Pages)-1]
	bw := &Bandwidth{Bytes: cfg.MaxBytes, CPU: cpus[0]}
	rep.Bandwidth = bw
	rb, err := mapBuffer(cfg.ProcRoot, region*int64(len(cpus)), pages, -1)
	if err != nil {
		return err
	}
	defer rb.free()
	regionOf := func(i int) []byte { return rb.mem[int64(i)*region : int64(i+1)*region] }
	window := time.Duration(cfg.BWWindowMS) * time.Millisecond

	for _, n := range steps(1, len(cpus)) {
		if err := ctx.Err(); err != nil {
			return err
		}
		say(fmt.Sprintf("read bandwidth: %d threads", n))
		var ready, wg sync.WaitGroup
		gate := make(chan struct{})
		rates := make([]float64, n)
		pre := make([]bool, n)
		errs := make([]error, n)
		ready.Add(n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				by, took, p, err := stream(cpus[i], regionOf(i), window, &ready, gate, nil)
				rates[i], pre[i], errs[i] = float64(by)/float64(took.Nanoseconds()), p, err
			}()
		}
		ready.Wait()
		close(gate)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		pt := BWPoint{Threads: n, CPUs: cpus[:n], RegionBytes: region}
		for i := range n {
			pt.GBps += rates[i]
			if pre[i] {
				pt.Preempted++
			}
		}
		bw.Read = append(bw.Read, pt)
	}

	for _, k := range append([]int{0}, steps(1, len(cpus)-1)...) {
		say(fmt.Sprintf("loaded latency: %d streaming CPUs", k))
		var ready, wg sync.WaitGroup
		gate, stop := make(chan struct{}), make(chan struct{})
		bytes := make([]int64, k)
		took := make([]time.Duration, k)
		errs := make([]error, k+1)
		ready.Add(k)
		for i := range k {
			wg.Add(1)
			go func() {
				defer wg.Done()
				bytes[i], took[i], _, errs[i] = stream(cpus[i+1], regionOf(i+1), 0, &ready, gate, stop)
			}()
		}
		ready.Wait()
		close(gate)
		var st Stat
		errs[k] = onCPU(cpus[0], func() (err error) {
			st, err = chaseLatency(ctx, c, 1, cfg.sampling())
			return err
		})
		close(stop)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		lp := LoadedPoint{Streamers: k, NS: st}
		for i := range k {
			lp.GBps += float64(bytes[i]) / float64(max(took[i].Nanoseconds(), 1))
		}
		bw.Loaded = append(bw.Loaded, lp)
	}
	return nil
}

// steps returns lo, 2·lo, 4·lo, ... up to hi, and hi itself: thread counts
// for bandwidth sweeps that stay short on machines with many CPUs.
func steps(lo, hi int) []int {
	var out []int
	for n := lo; n > 0 && n < hi; n *= 2 {
		out = append(out, n)
	}
	if hi >= lo && hi > 0 {
		out = append(out, hi)
	}
	return out
}
