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

// BWPoint is the bandwidth of one operation with some threads: the
// highest window in which no thread was preempted.
type BWPoint struct {
	Threads     int     `json:"threads"`
	CPUs        []int   `json:"cpus"`
	GBps        float64 `json:"gb_per_s"`     // 10^9 bytes per second, all threads together
	RegionBytes int64   `json:"region_bytes"` // each thread's share
	// Preempted is how many threads were preempted in the window
	// reported: 0 unless no window was clean.
	Preempted int `json:"preempted"`
	Windows   int `json:"windows,omitempty"` // windows measured
}

// LoadedPoint is chase latency while k other CPUs stream.
type LoadedPoint struct {
	Streamers int     `json:"streamers"`
	NS        Stat    `json:"ns"`
	GBps      float64 `json:"gb_per_s"` // what the streamers read meanwhile
}

// BWNodePoint is the read bandwidth of the CPUs of one node from memory
// bound to one node.
type BWNodePoint struct {
	CPUNode int     `json:"cpu_node"`
	MemNode int     `json:"mem_node"`
	Point   BWPoint `json:"point"`
}

// Bandwidth holds the bandwidth and loaded-latency results. Read, Write,
// Copy and Triad are per thread count; copy and triad count the bytes
// read and written, as STREAM does.
type Bandwidth struct {
	// Kernel says what the threads loaded and stored with (Kernel.Label);
	// empty in runs stored before the vector kernels, whose Read is a
	// scalar loop of 8-byte loads.
	Kernel string `json:"kernel,omitempty"`
	// Pages were asked for the thread sweep's mapping (the probe's last
	// page size); PageBytes and HugeFraction say what it obtained.
	Pages        string    `json:"pages,omitempty"`
	PageBytes    int64     `json:"page_bytes,omitempty"`
	HugeFraction float64   `json:"huge_frac,omitempty"`
	Read         []BWPoint `json:"read"`
	Write        []BWPoint `json:"write,omitempty"`
	Copy         []BWPoint `json:"copy,omitempty"`
	Triad        []BWPoint `json:"triad,omitempty"`
	// Nodes is the read bandwidth per node pair, every CPU of the thread
	// node streaming; empty on one node.
	Nodes  []BWNodePoint `json:"nodes,omitempty"`
	Loaded []LoadedPoint `json:"loaded"`
	Bytes  int64         `json:"chase_bytes"`
	CPU    int           `json:"chase_cpu"`
}

// Op returns the points of op (OpRead ...).
func (b *Bandwidth) Op(op string) []BWPoint {
	switch op {
	case OpWrite:
		return b.Write
	case OpCopy:
		return b.Copy
	case OpTriad:
		return b.Triad
	}
	return b.Read
}

func (b *Bandwidth) add(op string, p BWPoint) {
	switch op {
	case OpWrite:
		b.Write = append(b.Write, p)
	case OpCopy:
		b.Copy = append(b.Copy, p)
	case OpTriad:
		b.Triad = append(b.Triad, p)
	default:
		b.Read = append(b.Read, p)
	}
}

// bwRegionBytes is the least memory each bandwidth thread streams over.
func bwRegionBytes(t *result.Topology) int64 {
	return max(2*t.LastLevelCache(), 64<<20)
}

// bwMinBytes is the least memory the bandwidth threads stream over
// together. This guest's topology lists a 32 MiB L3, yet one thread read
// 64 MiB over and over at 21 GB/s, 256 MiB and more at 16.8 (a C loop as
// the probe): the host's caches are larger than the guest is told.
const bwMinBytes = 512 << 20

// bwBytes is the memory that many bandwidth threads stream over together,
// each its own share (split).
func bwBytes(t *result.Topology, threads int) int64 {
	return max(int64(threads)*bwRegionBytes(t), bwMinBytes)
}

// split cuts mem into n regions of one length, whole 2 MiB each.
func split(mem []byte, n int) func(int) []byte {
	r := len(mem) / n / hugeBytes * hugeBytes
	return func(i int) []byte { return mem[i*r : (i+1)*r] }
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

// streamChunk is the bytes of each array a thread moves between two looks
// at its clock: long enough that the look costs under 1%.
const streamChunk = 4 << 20

// streamWork is one bandwidth thread's work: op with kernel k over
// arrays of length bytes each, cut from the thread's region.
type streamWork struct {
	k      kernel
	op     string
	arrays []unsafe.Pointer
	length int
}

// newStreamWork cuts region (at least arrays(op)·streamChunk bytes) into
// the arrays op streams through, whole chunks each.
func newStreamWork(k kernel, op string, region []byte) streamWork {
	n := arrays(op)
	w := streamWork{k: k, op: op, length: len(region) / n / streamChunk * streamChunk}
	for i := range n {
		w.arrays = append(w.arrays, unsafe.Pointer(&region[i*w.length]))
	}
	return w
}

// stream runs w on cpu until stop is closed or, when d > 0, for d of
// thread CPU time; it returns the bytes moved, the thread CPU time taken
// and whether the thread was preempted.
func stream(cpu int, w streamWork, d time.Duration, ready *sync.WaitGroup, gate <-chan struct{},
	stop <-chan struct{}) (bytes int64, took time.Duration, preempted bool, err error) {
	err = onCPU(cpu, func() error {
		for _, p := range w.arrays {
			w.k.write(p, w.length, fillBits) // no zeros to move, and a warm TLB
		}
		ready.Done()
		<-gate
		c0 := involuntarySwitches()
		t0 := threadTime()
	loop:
		for {
			for off := 0; off < w.length; off += streamChunk {
				w.k.run(w.op, w.arrays, off, streamChunk)
				bytes += int64(streamChunk * len(w.arrays))
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
		return nil
	})
	return
}

// Windows of one bandwidth point: up to bwTries, until bwClean had no
// thread preempted.
const (
	bwTries = 4
	bwClean = 2
)

// bwPoint measures op on cpus at once, each thread over its own share of
// mem, in windows of window of each thread's CPU time. The point is the
// highest clean window, as the latency is the lowest: another process's
// memory traffic only ever takes bandwidth away, and a preempted thread
// lets the others run alone, so its window's sum overstates the
// bandwidth of all of them together. With no clean window it is the
// highest of all, Preempted saying how many threads were preempted in it.
func bwPoint(ctx context.Context, k kernel, op string, cpus []int, mem []byte, window time.Duration) (BWPoint, error) {
	regionOf := split(mem, len(cpus))
	pt := BWPoint{Threads: len(cpus), CPUs: cpus, RegionBytes: int64(len(regionOf(0)))}
	clean := 0
	for pt.Windows < bwTries && clean < bwClean {
		if err := ctx.Err(); err != nil {
			return pt, err
		}
		gbps, pre, err := bwWindow(k, op, cpus, regionOf, window)
		if err != nil {
			return pt, err
		}
		pt.Windows++
		switch {
		case pre == 0:
			clean++
			if clean == 1 || gbps > pt.GBps {
				pt.GBps, pt.Preempted = gbps, 0
			}
		case clean == 0 && gbps > pt.GBps:
			pt.GBps, pt.Preempted = gbps, pre
		}
	}
	return pt, nil
}

// bwWindow is one window of op on cpus: the sum of the threads' rates and
// how many threads were preempted.
func bwWindow(k kernel, op string, cpus []int, regionOf func(int) []byte,
	window time.Duration) (gbps float64, preempted int, err error) {
	n := len(cpus)
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
			by, took, p, err := stream(cpus[i], newStreamWork(k, op, regionOf(i)), window, &ready, gate, nil)
			if err != nil { // pinning failed: the thread never got ready
				ready.Done()
			}
			rates[i], pre[i], errs[i] = float64(by)/float64(max(took.Nanoseconds(), 1)), p, err
		}()
	}
	ready.Wait()
	close(gate)
	wg.Wait()
	for i := range n {
		gbps += rates[i]
		if pre[i] {
			preempted++
		}
	}
	return gbps, preempted, errors.Join(errs...)
}

// probeBandwidth measures read, write, copy and triad bandwidth with
// 1..all CPUs, chase latency on the first while 0..all-1 others read, and
// read bandwidth per node pair.
func probeBandwidth(ctx context.Context, cfg *Config, t *result.Topology, c *chain, rep *Report,
	say func(string)) error {
	cpus := streamCPUs(t)
	pages := cfg.Pages[len(cfg.Pages)-1]
	k := widest()
	bw := &Bandwidth{Kernel: k.Label(), Bytes: cfg.MaxBytes, CPU: cpus[0]}
	rep.Bandwidth = bw
	rb, err := mapBuffer(cfg.ProcRoot, bwBytes(t, len(cpus)), pages, -1)
	if err != nil {
		return err
	}
	defer rb.free()
	bw.Pages, bw.PageBytes, bw.HugeFraction = pages, rb.PageBytes, rb.HugeFraction
	window := time.Duration(cfg.BWWindowMS) * time.Millisecond

	for _, op := range bwOps {
		for _, n := range steps(1, len(cpus)) {
			say(fmt.Sprintf("%s bandwidth: %d threads", op, n))
			pt, err := bwPoint(ctx, k, op, cpus[:n], rb.mem, window)
			if err != nil {
				return err
			}
			bw.add(op, pt)
		}
	}
	if err := loadedLatency(ctx, cfg, k, cpus, rb.mem, c, bw, say); err != nil {
		return err
	}
	rb.free()
	return probeBWNodes(ctx, cfg, t, k, bw, rep, say)
}

// loadedLatency measures chase latency on cpus[0] while 0..all-1 of the
// other CPUs read their shares of mem with k.
func loadedLatency(ctx context.Context, cfg *Config, k kernel, cpus []int, mem []byte, c *chain, bw *Bandwidth,
	say func(string)) error {
	for _, n := range append([]int{0}, steps(1, len(cpus)-1)...) {
		regionOf := split(mem, max(n, 1))
		say(fmt.Sprintf("loaded latency: %d streaming CPUs", n))
		var ready, wg sync.WaitGroup
		gate, stop := make(chan struct{}), make(chan struct{})
		bytes := make([]int64, n)
		took := make([]time.Duration, n)
		errs := make([]error, n+1)
		ready.Add(n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w := newStreamWork(k, OpRead, regionOf(i))
				if bytes[i], took[i], _, errs[i] = stream(cpus[i+1], w, 0, &ready, gate, stop); errs[i] != nil {
					ready.Done()
				}
			}()
		}
		ready.Wait()
		close(gate)
		var st Stat
		errs[n] = onCPU(cpus[0], func() (err error) {
			st, err = chaseLatency(ctx, c, 1, cfg.sampling())
			return err
		})
		close(stop)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		lp := LoadedPoint{Streamers: n, NS: st}
		for i := range n {
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
