package tpch

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The load benchmarks report rows/s: generating and appending every table
// at SF 0.1 (about 866,000 rows) with a worker per CPU, without the
// primary keys and statistics that follow. Each iteration loads a new
// database (a new file, or a freshly emptied schema).
//
// On a shared machine rows/s says more about the neighbours than about the
// load, so they also report rows/cpu-s: rows over the CPU time the load
// used, this process's (the generator and DuckDB, which runs in it) plus,
// for PostgreSQL, the managed server's backends (the postmaster's reaped
// children, once the engine is closed). On an idle machine of n CPUs the
// load can go at most n × rows/cpu-s.

func BenchmarkLoadDuckDB(b *testing.B)   { benchLoad(b, dialectDuckDB) }
func BenchmarkLoadPostgres(b *testing.B) { benchLoad(b, dialectPostgres) }

func benchLoad(b *testing.B, name string) {
	ctx := context.Background()
	var rows int64
	var secs, cpu float64
	for b.Loop() {
		b.StopTimer()
		eng := openNew(b, name, "tpch_bench")
		if name == dialectPostgres {
			for _, t := range tables {
				if _, err := eng.DB().Exec("DROP TABLE IF EXISTS " + t.name); err != nil {
					b.Fatal(err)
				}
			}
		}
		cpu0 := processCPU(b) + serverCPU(b, name)
		b.StartTimer()
		st, err := Load(ctx, eng, Config{SF: 0.1, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		rows += st.Total
		secs += st.Insert.Seconds()
		// The CPU counted is the whole Load's, PostgreSQL's primary keys
		// and ANALYZE included, so rows/cpu-s errs low.
		eng.Close()
		time.Sleep(100 * time.Millisecond) // let the postmaster reap the backends
		cpu += processCPU(b) + serverCPU(b, name) - cpu0
		b.StartTimer()
	}
	b.ReportMetric(float64(rows)/secs, "rows/s")
	b.ReportMetric(float64(rows)/cpu, "rows/cpu-s")
}

// processCPU is this process's user and system CPU time so far, seconds.
func processCPU(b *testing.B) float64 {
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
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pg.Server(b).PID()) + "/stat")
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

// BenchmarkGenerate reports the generator's own rate (rows/s, one
// goroutine, SF 0.1's orders and lineitems), with no engine.
func BenchmarkGenerate(b *testing.B) {
	g, err := newGen(1, 0.1)
	if err != nil {
		b.Fatal(err)
	}
	row := make([]val, len(tOrders.cols))
	var lines [7][16]val
	var rows int64
	for b.Loop() {
		for i := range g.n.Orders {
			rows += 1 + int64(g.order(i, row, &lines))
		}
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}
