package tpch

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/pgserver/pgtest"
)

// benchSF is the scale factor of the load and generator benchmarks: SF 1
// (about 8.66 million rows), TPC-H's smallest official one, by default;
// at SF 0.1 a load's fixed costs weigh much more.
var benchSF = flag.Float64("tpch.bench.sf", 1, "scale factor of the tpch load and generator benchmarks")

// The load benchmarks report rows/s: generating and writing every table
// at SF -tpch.bench.sf with a worker per CPU into new, empty
// tables (a new file, or a freshly emptied schema), the insert phase of
// Load (not PostgreSQL's primary keys and ANALYZE after it), up to the
// engine closed (DuckDB's last checkpoint). PostgreSQL's is a managed
// server of its own with the shared_buffers a run at that SF gets (Open
// sizes them to EstimatedBytes); the tests' shared server has less.
//
// On a shared machine rows/s says more about the neighbours than about the
// load, so they also report rows/cpu-s: rows over the CPU time the insert
// used, this process's (the generator and DuckDB, which runs in it) plus,
// for PostgreSQL, the managed server's backends (the postmaster's reaped
// children, once the engine is closed). On an idle machine of n CPUs the
// load can go at most n × rows/cpu-s.

func BenchmarkLoadDuckDB(b *testing.B) {
	b.Run(sfName(), func(b *testing.B) { benchLoad(b, dialectDuckDB) })
}
func BenchmarkLoadPostgres(b *testing.B) {
	b.Run(sfName(), func(b *testing.B) { benchLoad(b, dialectPostgres) })
}

// sfName names a benchmark's scale factor: "sf=0.1".
func sfName() string { return "sf=" + strconv.FormatFloat(*benchSF, 'g', -1, 64) }

// benchPG is the load benchmark's PostgreSQL server, started at its first
// use; TestMain stops it.
var benchPG struct {
	once sync.Once
	srv  *pgtest.Shared
}

// benchServer returns the load benchmark's server, sized for SF sf.
func benchServer(b *testing.B, sf float64) *pgserver.Server {
	need, err := EstimatedBytes(sf, dialectPostgres)
	if err != nil {
		b.Fatal(err)
	}
	benchPG.once.Do(func() {
		benchPG.srv = pgtest.New(pgserver.Config{SharedBuffers: pgserver.SharedBuffersFor(need)})
	})
	return benchPG.srv.Server(b)
}

// stopBenchServer stops the load benchmark's server, if it started, and
// says on stderr if that failed.
func stopBenchServer() {
	if benchPG.srv == nil {
		return
	}
	if err := benchPG.srv.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the load benchmark's server:", err)
	}
}

func benchLoad(b *testing.B, name string) {
	ctx := context.Background()
	g, err := newGen(1, *benchSF)
	if err != nil {
		b.Fatal(err)
	}
	var rows int64
	var secs, cpu float64
	for b.Loop() {
		b.StopTimer()
		var eng engine.Engine
		if name == dialectPostgres {
			eng = openPG(b, benchServer(b, *benchSF).DSN(), "tpch_bench")
		} else {
			eng = openNew(b, name, "tpch_bench")
		}
		for _, t := range tables {
			if name == dialectPostgres {
				if _, err := eng.DB().Exec("DROP TABLE IF EXISTS " + t.name); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := eng.DB().Exec(createTable(t, specOf(name))); err != nil {
				b.Fatal(err)
			}
		}
		cpu0 := processCPU(b) + serverCPU(b, name)
		b.StartTimer()
		t0 := time.Now()
		n, err := insert(ctx, eng, g, runtime.NumCPU())
		if err != nil {
			b.Fatal(err)
		}
		// Closing is part of the load: DuckDB checkpoints what the
		// insert left in its write-ahead log.
		if err := eng.Close(); err != nil {
			b.Fatal(err)
		}
		secs += time.Since(t0).Seconds()
		b.StopTimer()
		for _, k := range n {
			rows += k
		}
		time.Sleep(100 * time.Millisecond) // let the postmaster reap the backends
		cpu += processCPU(b) + serverCPU(b, name) - cpu0
		b.StartTimer()
	}
	b.ReportMetric(float64(rows)/secs, "rows/s")
	b.ReportMetric(float64(rows)/cpu, "rows/cpu-s")
}

// processCPU is this process's user and system CPU time so far, seconds.
func processCPU(b testing.TB) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// serverCPU is the managed PostgreSQL server's CPU time so far, seconds:
// the postmaster's own and its exited children's (clock ticks of 1/100 s
// in /proc/PID/stat), 0 for another engine.
func serverCPU(b *testing.B, name string) float64 {
	if name != dialectPostgres {
		return 0
	}
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(benchServer(b, *benchSF).PID()) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command's closing parenthesis: state is field 3,
	// utime, stime, cutime and cstime are 14 to 17.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	var ticks float64
	for _, s := range f[11:15] {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			b.Fatal(err)
		}
		ticks += v
	}
	return ticks / 100
}

// BenchmarkGenerate reports the generator's own rate: every table at SF
// -tpch.bench.sf with a worker per CPU, as for a load, each chunk's rows
// dropped as made (rows) or first encoded as PostgreSQL's binary COPY
// (binary). Its rows/cpu-s is the ceiling of a load's.
func BenchmarkGenerate(b *testing.B) {
	for _, enc := range []struct {
		name string
		f    func([]byte, *table, []val, int) []byte
	}{{"rows", nil}, {"binary", appendBinary}} {
		b.Run(enc.name+"/"+sfName(), func(b *testing.B) {
			g, err := newGen(1, *benchSF)
			if err != nil {
				b.Fatal(err)
			}
			var rows, bytes int64
			var mu sync.Mutex
			cpu0 := processCPU(b)
			for b.Loop() {
				n, err := generate(context.Background(), g, chunks(g.n), runtime.NumCPU(), func(context.Context) (worker, error) {
					return &discardWorker{enc: enc.f, bytes: func(k int) { mu.Lock(); bytes += int64(k); mu.Unlock() }}, nil
				})
				if err != nil {
					b.Fatal(err)
				}
				for _, k := range n {
					rows += k
				}
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(rows)/(processCPU(b)-cpu0), "rows/cpu-s")
			if bytes > 0 {
				b.ReportMetric(float64(bytes)/float64(rows), "B/row")
			}
		})
	}
}

// discardWorker encodes rows with enc (if not nil), counts the bytes and
// drops them.
type discardWorker struct {
	enc   func([]byte, *table, []val, int) []byte
	bytes func(int)
}

func (w *discardWorker) sink(t *table) (sink, error) { return &discardSink{w: w, t: t}, nil }

type discardSink struct {
	w   *discardWorker
	t   *table
	buf []byte
}

func (s *discardSink) write(_ context.Context, rows []val, n int) error {
	if s.w.enc == nil {
		return nil
	}
	s.buf = s.w.enc(s.buf[:0], s.t, rows, n)
	s.w.bytes(len(s.buf))
	return nil
}

func (s *discardSink) close(error) error { return nil }
