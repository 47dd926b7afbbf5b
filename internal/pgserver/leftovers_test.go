package pgserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/numalab/numalab/internal/managed"
	"github.com/numalab/numalab/internal/managed/managedtest"
)

// TestServerKilledLeavesNoSharedMemory kills a server's whole process
// group in the middle of a parallel query, as a crash would: Stop must
// remove the /dev/shm segments its processes had mapped, which PostgreSQL
// itself would only remove on its next start.
func TestServerKilledLeavesNoSharedMemory(t *testing.T) {
	ctx := context.Background()
	s, err := Start(ctx, Config{Settings: map[string]string{"dynamic_shared_memory_type": "posix"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	m, err := managed.ReadMarker(s.Dir)
	if err != nil || m.Server.PID != s.PID() || m.Segment == "" {
		t.Fatalf("marker %+v, %v: want the postmaster and its DSM control segment", m, err)
	}
	conn, err := pgx.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{
		"CREATE TABLE big AS SELECT generate_series(1, 100000) x",
		"SET max_parallel_workers_per_gather = 2", "SET parallel_setup_cost = 0", "SET parallel_tuple_cost = 0",
		"SET min_parallel_table_scan_size = 0",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	go conn.Exec(ctx, "SELECT count(*) FROM big WHERE pg_sleep(0.01) IS NOT NULL")
	var segs []string
	for deadline := time.Now().Add(20 * time.Second); len(segs) < 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no parallel query's segment appeared; mapped: %v", segs)
		}
		segs = mappedSegments(s.PID())
	}
	// Stop removes the segments the control segment lists in use, and
	// the control segment: a segment a worker was creating or destroying
	// at the kill is in none of them (under load one was seen left so),
	// and no process of the server says whose it is.
	listed := []string{"/dev/shm/" + m.Segment}
	if b, err := os.ReadFile("/dev/shm/" + m.Segment); err == nil {
		for _, h := range dsmHandles(b, dataMajor(filepath.Join(s.Dir, "data"))) {
			listed = append(listed, fmt.Sprintf("/dev/shm/PostgreSQL.%d", h))
		}
	}
	killTree(s.PID())
	t.Logf("segments mapped: %v; the control segment's, and those it listed in use just before the kill: %v", segs, listed)
	for managedtest.Alive(s.PID()) {
		time.Sleep(10 * time.Millisecond)
	}
	s.Stop()
	checked := 0
	for _, seg := range segs {
		if !slices.Contains(listed, seg) {
			continue
		}
		checked++
		if managedtest.Exists(seg) {
			t.Errorf("%s left after Stop", seg)
		}
	}
	if checked < 2 {
		t.Errorf("of the segments mapped %v, %d were listed in use (%v): want the control segment and a parallel query's",
			segs, checked, listed)
	}
}

// killTree SIGKILLs the postmaster pm and its children at once, as the
// kernel's OOM killer or a kill -9 of each would.
func killTree(pm int) {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pm, pm))
	for _, c := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(c); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	syscall.Kill(pm, syscall.SIGKILL)
}

// mappedSegments lists the /dev/shm/PostgreSQL.* files that the
// postmaster pm and its children map (each child has its own session).
func mappedSegments(pm int) []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(d, "stat"))
		i := strings.LastIndexByte(string(b), ')')
		if f := strings.Fields(string(b[i+1:])); pid != pm && (len(f) < 2 || f[1] != strconv.Itoa(pm)) {
			continue
		}
		b, _ = os.ReadFile(filepath.Join(d, "maps"))
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			if len(f) >= 6 && strings.HasPrefix(f[5], "/dev/shm/PostgreSQL.") && !slices.Contains(out, f[5]) {
				out = append(out, f[5])
			}
		}
	}
	return out
}
