package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rssBytes is this process's resident set (proc/self/statm).
func rssBytes(t testing.TB) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("no /proc/self/statm: %v", err)
	}
	f := strings.Fields(string(b))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// TestSoakRunCommands runs 30 short run commands, six rounds of every
// embedded workload (tpcc-ro, transtats, insert, null, TPC-H-derived), in
// one process, and checks that what the process holds stays flat: the
// same file descriptors and goroutines after every round as after the
// first, and a resident set that does not keep growing. eval runs all its
// steps in one process the same way.
func TestSoakRunCommands(t *testing.T) {
	dir := t.TempDir()
	st := filepath.Join(dir, "s.db")
	db := tpccDB(t)
	win := []string{"--duration", "200ms", "--warmup", "0s", "--store", st}
	cmds := [][]string{
		append([]string{"run", "oltp", "--db", db, "--streams", "1,2"}, win...),
		append([]string{"run", "report", "--engine", "duckdb", "--db", filepath.Join(dir, "t.duckdb"), "--rows", "20000",
			"--query", "P2", "--streams", "2", "--dop", strconv.Itoa(min(2, runtime.NumCPU()))}, win...),
		append([]string{"run", "insert", "--db", filepath.Join(dir, "ins.db"), "--streams", "1,2", "--batch", "100"}, win...),
		append([]string{"run", "null", "--engine", "sqlite", "--streams", "1"}, win...),
		append([]string{"run", "tpch", "--engine", "duckdb", "--sf", "0.01", "--db", filepath.Join(dir, "h.duckdb"),
			"--query", "1,6", "--streams", "1", "--dop", "1"}, win...),
	}
	const rounds = 6
	type point struct {
		fds, goroutines int
		rss             int64
	}
	var points []point
	for r := range rounds {
		for _, args := range cmds {
			var out, errb bytes.Buffer
			if err := runChecked(t, context.Background(), args, &out, &errb); err != nil {
				t.Fatalf("round %d: numalab %s: %v\n%s", r, strings.Join(args, " "), err, errb.String())
			}
		}
		runtime.GC()
		var p point
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			h := holding()
			p = point{len(h.fds), h.goroutines, rssBytes(t)}
			if r == 0 || (p.fds <= points[0].fds && p.goroutines <= points[0].goroutines) || time.Now().After(deadline) {
				break
			}
		}
		points = append(points, p)
	}
	var series []string
	for i, p := range points {
		series = append(series, fmt.Sprintf("after %d commands: %d fds, %d goroutines, RSS %.0f MiB",
			(i+1)*len(cmds), p.fds, p.goroutines, float64(p.rss)/(1<<20)))
	}
	t.Logf("soak:\n%s", strings.Join(series, "\n"))
	first, last := points[0], points[len(points)-1]
	for i, p := range points[1:] {
		if p.fds > first.fds || p.goroutines > first.goroutines {
			t.Errorf("round %d holds %d fds and %d goroutines, round 1 %d and %d: something leaks",
				i+2, p.fds, p.goroutines, first.fds, first.goroutines)
		}
	}
	// The resident set settles after the first round (DuckDB's and
	// SQLite's caches, the Go heap); a leak of a command's buffers would
	// grow it every round. Allowed: a quarter more than after round 2.
	if base := points[1].rss; last.rss > base+base/4 {
		t.Errorf("RSS grew from %.0f MiB after round 2 to %.0f MiB after round %d",
			float64(base)/(1<<20), float64(last.rss)/(1<<20), rounds)
	}
}
