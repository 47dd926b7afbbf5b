package drive

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

// Overhead compares the same streams run in a bare loop and through Run.
//
// On a machine shared with other work, wall-clock throughput follows the
// CPU share the streams happen to get; calls per CPU-second of this
// process does not, so both are given.
type Overhead struct {
	BareTPS   []float64 `json:"bare_tps"`   // per round: successful calls per second, bare loop
	DriverTPS []float64 `json:"driver_tps"` // per round: Run's TPS
	Ratios    []float64 `json:"ratios"`     // per round: DriverTPS / BareTPS
	Median    float64   `json:"median"`     // median of Ratios; 1 − Median is the driver's cost
	// Per round: successful calls per CPU-second of this process (user +
	// system, all threads), bare loop and driver, and their ratio.
	BarePerCPUSec   []float64 `json:"bare_per_cpu_s"`
	DriverPerCPUSec []float64 `json:"driver_per_cpu_s"`
	CPURatios       []float64 `json:"cpu_ratios"`
	CPUMedian       float64   `json:"cpu_median"` // median of CPURatios
}

// MeasureOverhead runs rounds pairs of cells, one as a bare loop (each
// stream on a locked thread with the same pinning, calling Next and
// counting, nothing else) and one through Run with cfg (histograms,
// per-second series, and the trace if cfg asks), alternating which goes
// first so that drift falls on both alike, and returns the ratios.
func MeasureOverhead(ctx context.Context, cfg Config, open Opener, rounds int) (Overhead, error) {
	if rounds < 1 {
		return Overhead{}, fmt.Errorf("measuring driver overhead: %d rounds is not a positive count", rounds)
	}
	if err := cfg.validate(); err != nil {
		return Overhead{}, err
	}
	if cfg.Monitor == nil {
		cfg.Monitor = cpuMonitor
	}
	var o Overhead
	for r := range rounds {
		var bare, driven, bareCPU, drivenCPU float64
		for k := range 2 {
			if (k == 0) == (r%2 == 0) {
				tps, perCPU, err := bareLoop(ctx, &cfg, open)
				if err != nil {
					return o, fmt.Errorf("measuring driver overhead, bare loop: %w", err)
				}
				bare, bareCPU = tps, perCPU
			} else {
				cell, err := Run(ctx, cfg, open)
				if err != nil {
					return o, fmt.Errorf("measuring driver overhead, driver: %w", err)
				}
				if cell.Interrupted {
					return o, fmt.Errorf("measuring driver overhead: %w", context.Canceled)
				}
				if cell.Usage == nil {
					return o, fmt.Errorf("measuring driver overhead: no CPU time: %s", cell.UsageError)
				}
				driven = cell.TPS
				if cpu := (cell.Usage.ProcUserCPU + cell.Usage.ProcSystemCPU).Seconds(); cpu > 0 {
					drivenCPU = float64(cell.Total.Count) / cpu
				}
			}
		}
		if bare == 0 || bareCPU == 0 {
			return o, errors.New("measuring driver overhead: the bare loop completed no call")
		}
		o.BareTPS = append(o.BareTPS, bare)
		o.DriverTPS = append(o.DriverTPS, driven)
		o.Ratios = append(o.Ratios, driven/bare)
		o.BarePerCPUSec = append(o.BarePerCPUSec, bareCPU)
		o.DriverPerCPUSec = append(o.DriverPerCPUSec, drivenCPU)
		o.CPURatios = append(o.CPURatios, drivenCPU/bareCPU)
	}
	o.Median = stats.Median(o.Ratios)
	o.CPUMedian = stats.Median(o.CPURatios)
	return o, nil
}

// processCPU is this process's CPU time so far, all threads, including
// ended ones.
func processCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuMonitor records only the process's CPU time over the window.
func cpuMonitor() (func() (*result.Usage, error), error) {
	start := time.Now()
	c0 := processCPU()
	return func() (*result.Usage, error) {
		return &result.Usage{Elapsed: time.Since(start), ProcUserCPU: processCPU() - c0}, nil
	}, nil
}

// bareLoop runs cfg.Streams streams calling Next as fast as they can for
// cfg.Warmup, then counts successful calls for cfg.Duration; it returns
// them per second and per CPU-second of the process.
func bareLoop(ctx context.Context, cfg *Config, open Opener) (float64, float64, error) {
	var phase atomic.Int32 // 0 warm-up, 1 counting, 2 stop
	counts := make([]int64, cfg.Streams)
	ready := make(chan error, cfg.Streams)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range cfg.Streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			if len(cfg.CPUs) > 0 {
				cpus := cfg.CPUs
				if cfg.Spread {
					cpus = cfg.CPUs[i%len(cfg.CPUs) : i%len(cfg.CPUs)+1]
				}
				if err := place.Pin(cpus); err != nil {
					ready <- err
					return
				}
			} else {
				defer runtime.UnlockOSThread()
			}
			s, err := open(ctx, i)
			if err != nil {
				ready <- fmt.Errorf("opening stream %d: %w", i, err)
				return
			}
			defer s.Close()
			ready <- nil
			<-start
			var n int64
			for {
				p := phase.Load()
				if p == 2 {
					break
				}
				if _, err := s.Next(ctx); err == nil && p == 1 {
					n++
				}
			}
			counts[i] = n
		}()
	}
	var firstErr error
	for range cfg.Streams {
		if err := <-ready; err != nil && firstErr == nil {
			firstErr = err
		}
	}
	close(start)
	if firstErr != nil {
		phase.Store(2)
		wg.Wait()
		return 0, 0, firstErr
	}
	sleep(ctx, cfg.Warmup)
	phase.Store(1)
	t1, c1 := time.Now(), processCPU()
	sleep(ctx, cfg.Duration)
	phase.Store(2)
	elapsed, cpu := time.Since(t1), processCPU()-c1
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return 0, 0, err
	}
	var total int64
	for _, n := range counts {
		total += n
	}
	if cpu <= 0 {
		return 0, 0, errors.New("no CPU time used")
	}
	return float64(total) / elapsed.Seconds(), float64(total) / cpu.Seconds(), nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
