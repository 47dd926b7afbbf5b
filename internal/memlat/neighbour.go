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

// Neighbour is a memory-bandwidth neighbour: one thread per CPU given,
// each reading its own region sequentially with the widest loads the CPU
// has (the streamers of the loaded latency), until Stop.
type Neighbour struct {
	CPUs  []int
	buf   *buffer
	stop  chan struct{}
	wg    sync.WaitGroup
	bytes []int64
	took  []time.Duration
	errs  []error
}

// StartNeighbour starts a bandwidth neighbour on cpus of machine t and
// returns once every thread streams.
func StartNeighbour(t *result.Topology, cpus []int) (*Neighbour, error) {
	if len(cpus) == 0 {
		return nil, errors.New("starting a bandwidth neighbour: no CPUs given")
	}
	b, err := mapBuffer("/", bwBytes(t, len(cpus)), Pages4K, -1)
	if err != nil {
		return nil, fmt.Errorf("starting a bandwidth neighbour: %w", err)
	}
	k := len(cpus)
	n := &Neighbour{CPUs: cpus, buf: b, stop: make(chan struct{}), bytes: make([]int64, k),
		took: make([]time.Duration, k), errs: make([]error, k)}
	var ready sync.WaitGroup
	gate := make(chan struct{})
	failed := make(chan error, k)
	ready.Add(k)
	for i, cpu := range cpus {
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			w := newStreamWork(widest(), OpRead, split(b.mem, k)(i))
			n.bytes[i], n.took[i], _, n.errs[i] = stream(cpu, w, 0, &ready, gate, n.stop)
			if n.errs[i] != nil { // pinning failed: the thread never got ready
				failed <- n.errs[i]
				ready.Done()
			}
		}()
	}
	ready.Wait()
	close(gate)
	select {
	case err := <-failed:
		n.Stop()
		return nil, fmt.Errorf("starting a bandwidth neighbour on cpus %v: %w", cpus, err)
	default:
		return n, nil
	}
}

// Stop stops the neighbour and returns the bandwidth it read, in 10^9
// bytes per second over all its threads.
func (n *Neighbour) Stop() (float64, error) {
	close(n.stop)
	n.wg.Wait()
	n.buf.free()
	var gbps float64
	for i := range n.CPUs {
		gbps += float64(n.bytes[i]) / float64(max(n.took[i].Nanoseconds(), 1))
	}
	return gbps, errors.Join(n.errs...)
}

// DRAMChase is a fully random dependent-load chain over a working set far
// larger than the caches, for measuring DRAM latency again and again (with
// and without a neighbour) on the same chain.
type DRAMChase struct {
	Bytes        int64
	HugeFraction float64 // the share of the chain in 2 MiB pages
	buf          *buffer
	c            *chain
	at           unsafe.Pointer // where the last Walk stopped
}

// NewDRAMChase maps and links a chain over bytes (4 KiB pages).
func NewDRAMChase(bytes int64) (*DRAMChase, error) { return NewChase(bytes, Pages4K) }

// NewChase maps and links a chain over bytes in pages (Pages4K or Pages2M,
// advised as the probe's mappings are), so that a latency can be measured
// in the same kind of memory as data mapped alike; HugeFraction says what
// the kernel gave.
func NewChase(bytes int64, pages string) (*DRAMChase, error) {
	b, err := mapBuffer("/", bytes, pages, -1)
	if err != nil {
		return nil, err
	}
	c, err := buildChain(b.mem, bytes, DefaultSlotBytes, int(bytes), 7)
	if err != nil {
		b.free()
		return nil, err
	}
	return &DRAMChase{Bytes: bytes, HugeFraction: b.HugeFraction, buf: b, c: c}, nil
}

// Measure is the chain's latency per load on cpu, in ns: the median of
// five windows of at least 50 ms.
func (d *DRAMChase) Measure(ctx context.Context, cpu int) (Stat, error) {
	return d.MeasureWindows(ctx, cpu, 5)
}

// MeasureWindows is the chain's latency per load on cpu, in ns, over n
// windows of at least 50 ms.
func (d *DRAMChase) MeasureWindows(ctx context.Context, cpu, n int) (Stat, error) {
	var st Stat
	err := onCPU(cpu, func() (err error) {
		st, err = chaseLatency(ctx, d.c, 1, sampling{Samples: n, MinWindow: 50 * time.Millisecond, Tries: n})
		return err
	})
	return st, err
}

// Walk follows the chain for n loads (rounded up to a multiple of 16) on
// the calling thread, from where the last walk stopped, and returns how
// long they took: each walk reads lines the previous ones did not, until
// the cycle (Bytes long) comes round.
func (d *DRAMChase) Walk(n int) time.Duration {
	if d.at == nil {
		d.at = d.c.starts[0]
	}
	start := time.Now()
	d.at = chase1(d.at, (n+15)&^15)
	return time.Since(start)
}

// Free unmaps the chain.
func (d *DRAMChase) Free() { d.buf.free() }

// NeighbourCell is a workload cell measured while a bandwidth neighbour
// ran on other CPUs, with the DRAM latency the cell's first CPU saw just
// before the cell, on one chain, alone and with the neighbour running.
// With Control the neighbour was a control: as many busy threads on the
// same CPUs, without memory traffic (GBps 0), the bandwidth neighbour's
// pair in the same repeat (Cell.Repeat). Runs stored before controls
// existed have none.
type NeighbourCell struct {
	Cell       result.Cell `json:"cell"`
	Neighbour  []int       `json:"neighbour_cpus"`
	Control    bool        `json:"control,omitempty"`
	ChaseCPU   int         `json:"chase_cpu"`
	ChaseBytes int64       `json:"chase_bytes"`
	AloneNS    Stat        `json:"alone_ns"`
	LoadedNS   Stat        `json:"loaded_ns"`
	GBps       float64     `json:"gb_per_s"` // what the neighbour read during the cell and the loaded chase
}

// AddedNS is the latency the neighbour added: loaded minus alone, medians.
func (n NeighbourCell) AddedNS() float64 { return n.LoadedNS.Median - n.AloneNS.Median }
