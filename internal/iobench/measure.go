package iobench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/units"
)

// Pattern names.
const (
	RandRead = "randread" // uniform random aligned blocks, reads only
	SeqRead  = "seqread"  // one sequence through the file, wrapping at its end
	RandRW   = "randrw"   // uniform random aligned blocks, ReadPct% reads, the rest writes
)

// Spec is one access pattern to measure.
type Spec struct {
	Name      string // RandRead, SeqRead or RandRW
	BlockSize int    // bytes, a multiple of 4 KiB that divides 1 MiB
	QD        int    // operations in flight: one worker thread each
	ReadPct   int    // RandRW only: percentage of reads
	// Readers, for SeqRead, makes each of the QD workers read its own
	// sequence from its own stretch of the file (QD concurrent scans);
	// false: one sequence, QD reads of it in flight.
	Readers bool
}

// String is how progress lines and errors name the pattern.
func (s Spec) String() string {
	name := map[string]string{RandRead: "random read", SeqRead: "sequential read", RandRW: "random read/write"}[s.Name]
	if s.Name == RandRW {
		name += fmt.Sprintf(" %d/%d", s.ReadPct, 100-s.ReadPct)
	}
	if s.Readers {
		return fmt.Sprintf("%s %s, %d readers", name, units.Bytes(s.BlockSize), s.QD)
	}
	return fmt.Sprintf("%s %s QD%d", name, units.Bytes(s.BlockSize), s.QD)
}

func (s Spec) check() error {
	switch {
	case s.Name != RandRead && s.Name != SeqRead && s.Name != RandRW:
		return fmt.Errorf("unknown pattern %q (want %s, %s or %s)", s.Name, RandRead, SeqRead, RandRW)
	case !ValidBlockSize(s.BlockSize):
		return fmt.Errorf("block size %d is not a multiple of 4 KiB that divides 1 MiB", s.BlockSize)
	case s.QD < 1 || s.QD > MaxQD:
		return fmt.Errorf("queue depth %d is not between 1 and %d", s.QD, MaxQD)
	case s.Name == RandRW && (s.ReadPct < 0 || s.ReadPct > 100):
		return fmt.Errorf("read percentage %d is not between 0 and 100", s.ReadPct)
	case s.Readers && s.Name != SeqRead:
		return fmt.Errorf("concurrent readers are for sequential reads, not %s", s.Name)
	}
	return nil
}

// MaxQD is the deepest queue a pattern may have.
const MaxQD = 1024

// ValidBlockSize reports whether a pattern may read blocks of n bytes: a
// multiple of 4 KiB (O_DIRECT's alignment) that divides 1 MiB.
func ValidBlockSize(n int) bool {
	return n >= align && n%align == 0 && sizeUnit%n == 0
}

// worker is one thread's share of a pattern: its own buffer, RNG and
// latency histograms; nothing is shared in the hot path except, for
// sequential reads, the next offset.
type worker struct {
	buf       []byte
	rng       *rand.PCG
	reads     *stats.Histogram // latencies in ns of reads completed inside the window
	writes    *stats.Histogram
	err       error
	stoppedAt time.Duration // when the worker saw a stop, from the window's start
	next      int64         // SeqRead with Readers: this worker's next offset, before wrapping
}

// Measure runs spec on the file for window and summarises it. Each of
// spec.QD workers is a goroutine locked to its own OS thread issuing one
// pread or pwrite at a time, so QD operations are in flight. Only
// operations that complete inside the window count. Ctrl-C (ctx) cuts the
// window short: the result then covers the time measured and the error is
// ctx.Err().
func (f *File) Measure(ctx context.Context, spec Spec, window time.Duration, seed uint64) (result.IOPattern, error) {
	p := result.IOPattern{Name: spec.Name, BlockSize: spec.BlockSize, QD: spec.QD, ReadPct: 100, Direct: f.direct}
	if spec.Readers {
		p.Readers = spec.QD
	}
	if spec.Name == RandRW {
		p.ReadPct = spec.ReadPct
	}
	if err := spec.check(); err != nil {
		return p, fmt.Errorf("measuring %s: %w", spec, err)
	}
	if f.closed {
		return p, fmt.Errorf("measuring %s: test file is closed", spec)
	}
	if err := f.dropCache(); err != nil {
		return p, err
	}
	// Every worker holds its own P through each read and write (see
	// pread), and one more is left for the rest of the process: Ctrl-C's
	// watcher and the garbage collector.
	if prev := runtime.GOMAXPROCS(0); prev < spec.QD+1 {
		runtime.GOMAXPROCS(spec.QD + 1)
		defer runtime.GOMAXPROCS(prev)
	}
	var stop atomic.Bool
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()

	workers := make([]*worker, spec.QD)
	for i := range workers {
		buf, err := alignedBuf(spec.BlockSize)
		if err != nil {
			for _, w := range workers[:i] {
				unix.Munmap(w.buf)
			}
			return p, fmt.Errorf("measuring %s: %w", spec, err)
		}
		// The histograms (about 280 KiB each) are made before the window:
		// recording never allocates.
		// A reader of its own sequence starts at its share of the file.
		start := f.size / int64(spec.QD) * int64(i) / int64(spec.BlockSize) * int64(spec.BlockSize)
		w := &worker{buf: buf, rng: rand.NewPCG(seed, uint64(i)<<32|uint64(spec.BlockSize)),
			reads: stats.NewHistogram(), next: start}
		if spec.Name == RandRW {
			w.writes = stats.NewHistogram()
		}
		fillRandom(buf, w.rng) // what the mix writes before its first read
		workers[i] = w
	}
	defer func() {
		for _, w := range workers {
			unix.Munmap(w.buf)
		}
	}()

	var (
		next  atomic.Int64 // SeqRead: the next offset, before wrapping
		ready sync.WaitGroup
		done  sync.WaitGroup
		start time.Time
		begin = make(chan struct{})
	)
	blocks := uint64(f.size / int64(spec.BlockSize))
	ready.Add(len(workers))
	done.Add(len(workers))
	for _, w := range workers {
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			ready.Done()
			<-begin
			w.run(f, spec, blocks, &next, start, window, &stop)
		}()
	}
	ready.Wait()
	start = time.Now()
	close(begin)
	done.Wait()

	measured := window
	reads, writes := stats.NewHistogram(), stats.NewHistogram()
	var errs []error
	for _, w := range workers {
		reads.Merge(w.reads)
		if w.writes != nil {
			writes.Merge(w.writes)
		}
		if w.err != nil {
			errs = append(errs, w.err)
		}
		if w.stoppedAt > 0 && w.stoppedAt < measured {
			measured = w.stoppedAt
		}
	}
	p.Measured = measured
	p.Read = summarize(reads, spec.BlockSize, measured)
	if spec.Name == RandRW {
		ws := summarize(writes, spec.BlockSize, measured)
		p.Write = &ws
	}
	if len(errs) > 0 {
		return p, fmt.Errorf("measuring %s on %s: %w", spec, f.path, errors.Join(errs...))
	}
	if err := ctx.Err(); err != nil && measured < window {
		return p, err
	}
	return p, nil
}

// run is one worker's closed loop until the window ends or stop is set.
func (w *worker) run(f *File, spec Spec, blocks uint64, next *atomic.Int64, start time.Time, window time.Duration,
	stop *atomic.Bool) {
	fd := f.fd
	bs := int64(spec.BlockSize)
	size := int64(blocks) * bs
	for {
		if stop.Load() {
			w.stoppedAt = max(time.Since(start), 1)
			return
		}
		var off int64
		write := false
		switch {
		case spec.Name == SeqRead && spec.Readers:
			off = w.next % size
			w.next += bs
		case spec.Name == SeqRead:
			off = (next.Add(bs) - bs) % size
		case spec.Name == RandRW:
			write = w.rng.Uint64()%100 >= uint64(spec.ReadPct)
			fallthrough
		default:
			off = int64(w.rng.Uint64()%blocks) * bs
		}
		off = f.at(off)
		t0 := time.Now()
		var n int
		var err error
		for {
			if write {
				n, err = pwrite(fd, w.buf, off)
			} else {
				n, err = pread(fd, w.buf, off)
			}
			if err != unix.EINTR {
				break
			}
		}
		t1 := time.Now()
		if err == nil && int64(n) != bs {
			err = fmt.Errorf("short transfer: %d of %d bytes", n, bs)
		}
		if err != nil {
			op := "reading"
			if write {
				op = "writing"
			}
			w.err = fmt.Errorf("%s %d bytes at offset %d: %w", op, bs, off, err)
			return
		}
		if t1.Sub(start) > window {
			return
		}
		if write {
			w.writes.Record(t1.Sub(t0).Nanoseconds())
		} else {
			w.reads.Record(t1.Sub(t0).Nanoseconds())
		}
	}
}

// summarize turns the latencies (ns) of one direction into rates, the
// exact mean and maximum, and p50 and p99 within 0.05% (stats.Histogram).
func summarize(h *stats.Histogram, blockSize int, measured time.Duration) result.IOStats {
	s := result.IOStats{Ops: h.Count(), Bytes: h.Count() * int64(blockSize)}
	if s.Ops == 0 || measured <= 0 {
		return s
	}
	secs := measured.Seconds()
	s.IOPS = float64(s.Ops) / secs
	s.MBps = float64(s.Bytes) / secs / 1e6
	q := h.Quantiles(0.5, 0.99)
	s.MeanUs = h.Mean() / 1e3
	s.P50Us = q[0] / 1e3
	s.P99Us = q[1] / 1e3
	s.MaxUs = float64(h.Max()) / 1e3
	return s
}
