package drive

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

// overheadConfig is one spin stream pinned to the last CPU the process may
// use, with histograms and the per-second series on.
func overheadConfig(t testing.TB, d time.Duration) Config {
	cpus := allCPUs(t)
	return Config{Types: spinTypes, Streams: 1, CPUs: cpus[len(cpus)-1:], Cores: 1, Warmup: d / 5, Duration: d}
}

func TestMeasureOverhead(t *testing.T) {
	// A stream that does nothing: the difference in time per call between
	// the bare loop and the driver is the driver's own cost per call. A
	// window of a second: with 200 ms, a loaded machine once left the
	// pinned stream's thread unrun for a whole window.
	o, err := MeasureOverhead(context.Background(), overheadConfig(t, time.Second), noopOpener, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Ratios) != 5 || o.BareTPS[0] <= 0 || o.DriverTPS[0] <= 0 {
		t.Fatalf("overhead: %+v", o)
	}
	added := make([]float64, len(o.Ratios))
	for i := range added {
		added[i] = 1e9/o.DriverPerCPUSec[i] - 1e9/o.BarePerCPUSec[i]
	}
	// Generous: two clock reads and a histogram update cost ~60-120 ns
	// here; a lock or an allocation per call on a busy machine would not
	// reach 1 µs either, but a syscall per call or a contended lock would.
	if m := stats.Median(added); m > 1000 {
		t.Errorf("the driver adds %.0f ns a call (median of %.0f); want < 1000 ns", m, added)
	}
	t.Logf("driver adds %.0f ns of CPU a call (median of %.0f); bare loop %.1f ns a call; wall-clock ratios %.3f",
		stats.Median(added), added, 1e9/stats.Median(o.BarePerCPUSec), o.Ratios)
	if _, err := MeasureOverhead(context.Background(), overheadConfig(t, time.Second), spinOpener(nil), 0); err == nil {
		t.Error("0 rounds accepted")
	}
}

// BenchmarkDriverOverhead measures the driver's cost against a bare loop
// for a synthetic ~10 µs call (5 and 15 µs, 50/50), pinned to one CPU:
// interleaved rounds of 1 s each, median ratio. Run it with
//
//	go test -run '^$' -bench DriverOverhead -benchtime 1x ./internal/drive
func BenchmarkDriverOverhead(b *testing.B) {
	for b.Loop() {
		o, err := MeasureOverhead(context.Background(), overheadConfig(b, time.Second), spinOpener(nil), 7)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(o.Median, "driver/bare")
		b.ReportMetric(o.CPUMedian, "driver/bare-per-CPU-s")
		b.ReportMetric(stats.Median(o.BareTPS), "bare-tps")
		b.Logf("wall ratios %.4f; bare %s tps; driver %s tps", o.Ratios, round(o.BareTPS), round(o.DriverTPS))
		b.Logf("per CPU-second ratios %.4f; bare %s; driver %s",
			o.CPURatios, round(o.BarePerCPUSec), round(o.DriverPerCPUSec))
	}
}

// noopStream does nothing, so what a cell measures is the driver's own
// per-call cost.
type noopStream struct{ i int }

func (n *noopStream) Next(context.Context) (int, error) { n.i++; return n.i & 1, nil }
func (*noopStream) Close() error                        { return nil }

func noopOpener(context.Context, int) (Stream, error) { return &noopStream{}, nil }

// BenchmarkDriverPerCall is the driver's added cost per call in ns, from
// interleaved bare and driven runs of a stream that does nothing.
func BenchmarkDriverPerCall(b *testing.B) {
	for b.Loop() {
		o, err := MeasureOverhead(context.Background(), overheadConfig(b, 500*time.Millisecond), noopOpener, 5)
		if err != nil {
			b.Fatal(err)
		}
		added := make([]float64, len(o.Ratios))
		for i := range added {
			added[i] = 1e9/o.DriverPerCPUSec[i] - 1e9/o.BarePerCPUSec[i]
		}
		b.ReportMetric(stats.Median(added), "CPU-ns-added/call")
		b.ReportMetric(1e9/stats.Median(o.BarePerCPUSec), "bare-CPU-ns/call")
	}
}

func TestRunHotPathDoesNotAllocate(t *testing.T) {
	cell, mallocs := atLeastCalls(t, Config{Types: spinTypes, Streams: 1}, noopOpener, 100_000)
	if mallocs > uint64(cell.Total.Count/1000) {
		t.Errorf("%d allocations for %d calls", mallocs, cell.Total.Count)
	}
	t.Logf("%d allocations for %d calls (%.0f ns a call)", mallocs, cell.Total.Count, 1e9/cell.TPS)
}

// countedNoop is a noopStream told which calls counted (a Counter).
type countedNoop struct {
	noopStream
	counted int64
}

func (c *countedNoop) Counted(bool) { c.counted++ }

// TestRunCounterDoesNotAllocate: telling a Counter of each counted call
// adds no allocation to the loop.
func TestRunCounterDoesNotAllocate(t *testing.T) {
	var s *countedNoop
	open := func(context.Context, int) (Stream, error) { s = &countedNoop{}; return s, nil }
	cell, mallocs := atLeastCalls(t, Config{Types: spinTypes, Streams: 1}, open, 100_000)
	if mallocs > uint64(cell.Total.Count/1000) {
		t.Errorf("%d allocations for %d calls", mallocs, cell.Total.Count)
	}
	if s.counted != cell.Total.Count {
		t.Errorf("told of %d counted calls; the cell counted %d", s.counted, cell.Total.Count)
	}
}

// atLeastCalls runs a cell of cfg with streams from open and returns it
// with the allocations it made: a cell's fixed allocations (its goroutine,
// histograms, series) are
// spread over at least n calls, so on a machine slowed down by its
// neighbours the window doubles from 300 ms, up to 4.8 s, rather than the
// bound being loosened; fewer calls even then fail the test.
func atLeastCalls(t *testing.T, cfg Config, open Opener, n int) (*result.Cell, uint64) {
	t.Helper()
	var before, after runtime.MemStats
	var cell *result.Cell
	for cfg.Duration = 300 * time.Millisecond; cell == nil ||
		int(cell.Total.Count) < n && cfg.Duration <= 5*time.Second; cfg.Duration *= 2 {
		runtime.ReadMemStats(&before)
		c, err := Run(context.Background(), cfg, open)
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		cell = c
	}
	if int(cell.Total.Count) < n {
		t.Fatalf("%d calls in %v, fewer than the %d that spread a cell's fixed allocations",
			cell.Total.Count, cfg.Duration/2, n)
	}
	return cell, after.Mallocs - before.Mallocs
}
