package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/sysfs"
)

// busyQuery keeps a parallel plan's workers busy for a moment.
const busyQuery = "SELECT count(*) FROM t a, (SELECT id FROM t WHERE id <= 40) b WHERE a.price > b.id"

// sampleWhileQuerying runs q n times on a stream pinned to cpus while w's
// workers are sampled, and returns what the sampler saw.
func sampleWhileQuerying(t *testing.T, eng Engine, w *Workers, cpus []int, q string,
	n int) (total, outside float64, workers int) {
	t.Helper()
	s := place.SampleTasks("/", w.List, 5*time.Millisecond)
	err := onPinnedThread(cpus, func() error {
		c, err := eng.Connect(context.Background())
		if err != nil {
			return err
		}
		defer c.Close()
		for range n {
			if err := c.Query(context.Background(), q, nil, func([]any) error { return nil }); err != nil {
				return err
			}
		}
		return nil
	})
	got := s.Stop(cpus)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d workers, %d samples, per CPU %+v, %.1f ms outside %v",
		w.Info.Kind, got.Workers, got.Samples, got.PerCPU, got.OutsideMS, cpus)
	return got.TotalMS(), got.OutsideMS, got.Workers
}

// TestDuckDBWorkersPlaced: DuckDB's worker threads run on the placement's
// CPUs at DOP 2 on one CPU (oversubscribed), every sample inside it; with
// no placement they get every CPU again.
func TestDuckDBWorkersPlaced(t *testing.T) {
	all, err := place.Affinity()
	if err != nil || len(all) < 2 {
		t.Skip("needs two CPUs to place DuckDB's workers on one of them")
	}
	ctx := context.Background()
	eng, err := Open(ctx, "duckdb", Options{Path: filepath.Join(t.TempDir(), "w.duckdb"), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	loadNumbers(t, eng, 200000)
	one := []int{all[len(all)-1]}
	w, err := SetDOPPlaced(ctx, eng, 2, one)
	if err != nil {
		t.Fatal(err)
	}
	if !w.Info.Oversubscribed || w.Info.How == "" || w.List == nil {
		t.Fatalf("DOP 2 on one CPU: %+v, want oversubscribed, how, and workers to sample", w.Info)
	}
	tasks := w.List()
	if len(tasks) != 1 {
		t.Fatalf("DOP 2: %d worker threads, want 1 (%s)", len(tasks), w.Info.How)
	}
	got, err := place.AffinityPID(tasks[0].TID)
	if err != nil || !slices.Equal(got, one) {
		t.Fatalf("worker thread %d runs on CPUs %v (%v), want %v", tasks[0].TID, got, err, one)
	}
	total, outside, n := sampleWhileQuerying(t, eng, w, one, busyQuery, 3)
	if n != 1 || total <= 0 || outside != 0 {
		t.Errorf("DuckDB's worker: %d seen, %.1f ms, %.1f ms outside CPU %v; want 1, some time, none outside",
			n, total, outside, one)
	}

	w, err = SetDOPPlaced(ctx, eng, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range w.List() {
		if got, err := place.AffinityPID(task.TID); err != nil || !slices.Equal(got, all) {
			t.Errorf("unplaced worker thread %d runs on CPUs %v (%v), want every CPU %v", task.TID, got, err, all)
		}
	}
	if w.Info.Oversubscribed || runtime.NumCPU() < 2 {
		t.Errorf("DOP 2 unplaced: %+v, not oversubscribed", w.Info)
	}
}

// TestPostgresWorkersPlaced: the parallel workers of a server on this
// machine, run by this user, run on the placement's CPUs (the postmaster's,
// which they inherit), every sample inside it; the next unplaced cell gives
// the postmaster its CPUs again.
func TestPostgresWorkersPlaced(t *testing.T) {
	all, err := place.Affinity()
	if err != nil || len(all) < 2 {
		t.Skip("needs two CPUs to place PostgreSQL's workers on one of them")
	}
	s := pg.Server(t)
	eng, err := Open(context.Background(), "postgres",
		Options{DSN: s.DSN(), Schema: "numalab_workers_test", PinBackends: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	checkPostgresWorkersPlaced(t, eng, all)
}

// TestPostgresManagedWorkersPlaced: on a server numalab starts itself
// (no --dsn), the postmaster's CPUs are set to the placement, and every
// sample of the parallel workers it forks is inside it.
func TestPostgresManagedWorkersPlaced(t *testing.T) {
	all, err := place.Affinity()
	if err != nil || len(all) < 2 {
		t.Skip("needs two CPUs to place PostgreSQL's workers on one of them")
	}
	eng, err := Open(context.Background(), "postgres", Options{Schema: "numalab_workers_test", PinBackends: true})
	if errors.Is(err, pgserver.ErrNoBinaries) {
		t.Skipf("no PostgreSQL binaries to start a managed server: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if eng.(*pgEngine).server == nil {
		t.Fatal("Open without a DSN started no managed server")
	}
	checkPostgresWorkersPlaced(t, eng, all)
}

// checkPostgresWorkersPlaced places eng's DOP 2 workers on the last of
// all's CPUs, samples them inside it while queries run, and gives the
// postmaster its CPUs again.
func checkPostgresWorkersPlaced(t *testing.T, eng Engine, all []int) {
	t.Helper()
	ctx := context.Background()
	if _, err := eng.DB().ExecContext(ctx, "DROP TABLE IF EXISTS t"); err != nil {
		t.Fatal(err)
	}
	loadNumbers(t, eng, 1000000)
	if _, err := eng.DB().ExecContext(ctx, "VACUUM ANALYZE t"); err != nil {
		t.Fatal(err)
	}
	one := []int{all[len(all)-1]}
	w, err := SetDOPPlaced(ctx, eng, 2, one)
	if err != nil {
		t.Fatal(err)
	}
	pm := eng.(*pgEngine)
	defer func() {
		if _, err := SetDOPPlaced(ctx, eng, 1, nil); err != nil || pm.pmPinned {
			t.Errorf("giving the postmaster its CPUs again: %v", err)
		}
		if got, err := place.AffinityPID(pm.pmPID); err != nil || !slices.Equal(got, pm.pmCPUs) {
			t.Errorf("the postmaster runs on CPUs %v (%v), want its own %v again", got, err, pm.pmCPUs)
		}
	}()
	if w.Info.Why != "" || w.Info.How == "" || w.List == nil {
		t.Fatalf("DOP 2 on CPU %v: %+v, want the postmaster placed", one, w.Info)
	}
	total, outside, n := sampleWhileQuerying(t, eng, w, one, "SELECT count(*) FROM t WHERE price > 1", 10)
	if n == 0 || total <= 0 || outside != 0 {
		t.Errorf(
			"PostgreSQL's parallel workers: %d seen, %.1f ms, %.1f ms outside CPU %v; want some, some time, none outside",
			n, total, outside, one)
	}
}

// TestParallelWorkersFromProc lists a postmaster's parallel workers from a
// temporary root laid out like /proc: of its children, those whose command
// line says they are parallel workers.
func TestParallelWorkersFromProc(t *testing.T) {
	root := t.TempDir()
	for rel, text := range map[string]string{
		"proc/100/task/100/children": "101 102 103",
		"proc/101/cmdline":           "postgres: parallel worker for PID 105   ",
		"proc/102/cmdline":           "postgres: checkpointer   ",
		"proc/103/cmdline":           "postgres: parallel worker for PID 106   ",
	} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	proc := sysfs.New(root)
	want := []place.Task{{PID: 101, TID: 101}, {PID: 103, TID: 103}}
	if got := parallelWorkers(proc, 100); !slices.Equal(got, want) {
		t.Errorf("parallel workers of 100: %v, want %v", got, want)
	}
	if got := parallelWorkers(proc, 7); got != nil {
		t.Errorf("parallel workers of a postmaster that is gone: %v, want none", got)
	}
}
