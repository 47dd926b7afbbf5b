package engine

// Parallel workers inside a placement. DuckDB's workers are threads of
// this process that its task scheduler creates when SET threads raises
// their number, on the thread that runs the SET: a new thread inherits
// its creator's CPUs, so SetDOPPlaced runs SET threads = 1 (which ends
// them all) and then SET threads = dop on a thread pinned to the
// placement and named duckdb-worker (a name new threads inherit too, which
// tells DuckDB's workers from threads the Go runtime starts meanwhile),
// and checks each new worker's CPUs. PostgreSQL's parallel
// workers are processes the postmaster forks for each query: they inherit
// the postmaster's CPUs, so SetDOPPlaced sets those, where numalab may
// (a managed server; a --dsn server on this machine run by the same user).
// MariaDB runs a query on one thread; on a managed server SetDOPPlaced
// sets every mariadbd thread to the cell's CPUs. SQLite has no workers.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
)

// Workers are a cell's parallel workers: how they were placed, and how to
// find them to see where they run.
type Workers struct {
	// Info is what the cell stores about them; a sampler adds where they
	// ran (place.TaskSampler).
	Info result.WorkerCPUs
	// List lists the workers now; nil when there are none to sample.
	List func() []place.Task

	dop     int
	sampler *place.TaskSampler
}

// WorkerSampling is how often a DOP > 1 cell samples where its parallel
// workers run.
const WorkerSampling = 10 * time.Millisecond

// Watch starts sampling where the workers run, when the DOP is above 1
// and there are workers to sample.
func (w *Workers) Watch() {
	if w != nil && w.dop > 1 && w.List != nil && w.sampler == nil {
		w.sampler = place.SampleTasks("/", w.List, WorkerSampling)
	}
}

// Done stops sampling and returns the workers' record: nil at DOP 1. A
// second call returns what the first did not sample: nothing.
func (w *Workers) Done() *result.WorkerCPUs {
	if w == nil || w.dop <= 1 {
		return nil
	}
	out := w.Info
	if w.sampler != nil {
		got := w.sampler.Stop(w.Info.Placement)
		out.Workers, out.Samples, out.PerCPU, out.OutsideMS = got.Workers, got.Samples, got.PerCPU, got.OutsideMS
		w.sampler = nil
	}
	return &out
}

// SetDOPPlaced sets e's DOP as SetDOP does and puts its parallel workers
// on cpus (nil: wherever the scheduler puts them). A DOP above len(cpus)
// is allowed and marked oversubscribed. An engine whose workers numalab
// cannot place says why in Info.Why; that is no error.
func SetDOPPlaced(ctx context.Context, e Engine, dop int, cpus []int) (*Workers, error) {
	var w *Workers
	var err error
	switch x := e.(type) {
	case *duckEngine:
		w, err = x.setDOPPlaced(ctx, dop, cpus)
	case *pgEngine:
		w, err = x.setDOPPlaced(ctx, dop, cpus)
	case *myEngine:
		w, err = x.setDOPPlaced(ctx, dop, cpus)
	default:
		err = e.SetDOP(ctx, dop)
		w = &Workers{Info: result.WorkerCPUs{Kind: e.Name() + " (no parallel workers)"}}
	}
	if w != nil {
		w.dop = dop
		w.Info.Placement = cpus
		w.Info.Oversubscribed = len(cpus) > 0 && dop > len(cpus)
	}
	return w, err
}

func (e *duckEngine) setDOPPlaced(ctx context.Context, dop int, cpus []int) (*Workers, error) {
	w := &Workers{Info: result.WorkerCPUs{Kind: "duckdb worker threads"}}
	if dop <= 1 {
		return w, e.SetDOP(ctx, dop)
	}
	proc := sysfs.New("/")
	self := os.Getpid()
	var workers []int
	err := onPinnedThread(cpus, func() error {
		// The new threads inherit this thread's name too: that tells
		// DuckDB's workers from threads the Go runtime starts meanwhile.
		if err := unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&duckWorkerName[0])), 0, 0, 0); err != nil {
			return fmt.Errorf("naming the thread that starts duckdb's workers: %w", err)
		}
		// Fewer threads than before ends every worker; more creates the
		// new ones on this thread.
		if err := e.SetDOP(ctx, 1); err != nil {
			return err
		}
		// Workers of before (still ending) or of another database are
		// not this DOP's.
		before, err := place.ThreadsOf(proc.Root(), self)
		if err != nil {
			return fmt.Errorf("listing this process's threads: %w", err)
		}
		if err := e.SetDOP(ctx, dop); err != nil {
			return err
		}
		me := unix.Gettid()
		after, err := place.ThreadsOf(proc.Root(), self)
		if err != nil {
			return fmt.Errorf("listing this process's threads: %w", err)
		}
		for _, t := range after {
			if t.TID == me || slices.Contains(before, t) {
				continue
			}
			comm, err := proc.ThreadComm(self, t.TID)
			if err == nil && comm == duckWorkerComm {
				workers = append(workers, t.TID)
			}
		}
		return nil
	})
	if err != nil {
		return w, err
	}
	w.Info.How = fmt.Sprintf("SET threads = %d run on a thread of its own", dop)
	if len(cpus) > 0 {
		w.Info.How = fmt.Sprintf(
			"SET threads = %d run on a thread pinned to CPUs %s: DuckDB's %d new worker threads inherit them",
			dop, place.FormatCPUs(cpus), len(workers))
		// Check each, and pin any that did not inherit the CPUs.
		for _, tid := range workers {
			got, err := place.AffinityPID(tid)
			if err != nil {
				return w, fmt.Errorf("checking the CPUs of duckdb worker thread %d: %w", tid, err)
			}
			if !sameCPUs(got, cpus) {
				if err := place.PinPID(tid, cpus); err != nil {
					return w, fmt.Errorf("pinning duckdb worker thread %d: %w", tid, err)
				}
				w.Info.How += fmt.Sprintf("; thread %d had CPUs %s and was pinned", tid, place.FormatCPUs(got))
			}
		}
	}
	if len(workers) != dop-1 {
		w.Info.How += fmt.Sprintf(" (%d new threads seen, %d expected)", len(workers), dop-1)
	}
	w.List = func() []place.Task {
		out := make([]place.Task, len(workers))
		for i, tid := range workers {
			out[i] = place.Task{PID: self, TID: tid}
		}
		return out
	}
	return w, nil
}

// duckWorkerComm is the name DuckDB's worker threads get from the thread
// that starts them (at most 15 bytes).
const duckWorkerComm = "duckdb-worker"

var duckWorkerName = append([]byte(duckWorkerComm), 0)

func sameCPUs(a, b []int) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// onPinnedThread runs fn on a fresh locked OS thread pinned to cpus (nil:
// not pinned). The thread is never unlocked: it ends with its pinning.
func onPinnedThread(cpus []int, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if len(cpus) > 0 {
			if err := place.Pin(cpus); err != nil {
				done <- err
				return
			}
		}
		done <- fn()
	}()
	return <-done
}

// setDOPPlaced refuses a DOP above 1, as SetDOP does, and on a managed
// server sets every mariadbd thread to the cell's CPUs: InnoDB's
// background threads, the idle threads of the thread cache (which keep
// the CPUs of the connection they served last: the prewarm's, on the data
// node), numalab's own connections' threads, and the threads that accept
// connections and start new ones, which inherit their CPUs. Each stream's
// Connect then pins its own thread to the stream's CPUs. With no CPUs the
// threads get mariadbd's CPUs from before the first placed cell. A user's
// server (--dsn) is left as it is: numalab pins only its streams' threads
// there.
func (e *myEngine) setDOPPlaced(ctx context.Context, dop int, cpus []int) (*Workers, error) {
	w := &Workers{Info: result.WorkerCPUs{Kind: "mariadb server threads"}}
	if err := e.SetDOP(ctx, dop); err != nil || e.server == nil {
		return w, err
	}
	pid := e.server.PID()
	switch {
	case len(cpus) == 0 && e.threadCPUs == nil:
		return w, nil
	case len(cpus) == 0:
		cpus = e.threadCPUs
	case e.threadCPUs == nil:
		orig, err := place.AffinityPID(pid)
		if err != nil {
			return w, fmt.Errorf("reading the CPUs of mariadbd (pid %d): %w", pid, err)
		}
		e.threadCPUs = orig
	}
	ts, err := place.ThreadsOf("/", pid)
	if err != nil {
		return w, fmt.Errorf("listing mariadbd's threads (pid %d): %w", pid, err)
	}
	for _, t := range ts {
		// A thread that ended meanwhile is no longer there to place.
		if err := place.PinPID(t.TID, cpus); err != nil && !errors.Is(err, unix.ESRCH) {
			return w, fmt.Errorf("setting mariadbd's thread %d to CPUs %s: %w", t.TID, place.FormatCPUs(cpus), err)
		}
	}
	if slices.Equal(cpus, e.threadCPUs) {
		e.threadCPUs = nil
	}
	w.Info.How = fmt.Sprintf(
		"mariadbd's %d threads (pid %d) set to CPUs %s, each stream's connection thread then to the stream's",
		len(ts), pid, place.FormatCPUs(cpus))
	return w, nil
}

func (e *pgEngine) setDOPPlaced(ctx context.Context, dop int, cpus []int) (*Workers, error) {
	w := &Workers{Info: result.WorkerCPUs{Kind: "postgres parallel workers"}}
	if err := e.SetDOP(ctx, dop); err != nil {
		return w, err
	}
	proc := sysfs.New("/")
	pm, why := e.postmaster(ctx, proc)
	if pm == 0 {
		w.Info.Why = why
		return w, nil
	}
	w.List = func() []place.Task { return parallelWorkers(proc, pm) }
	if len(cpus) == 0 { // an earlier cell may have placed them
		return w, e.restorePostmaster()
	}
	if !e.pmPinned {
		orig, err := place.AffinityPID(pm)
		if err != nil {
			w.Info.Why = fmt.Sprintf("reading the CPUs of the postmaster (pid %d): %v", pm, err)
			return w, nil
		}
		e.pmCPUs, e.pmPID = orig, pm
	}
	if err := place.PinPID(pm, cpus); err != nil {
		w.Info.Why = fmt.Sprintf(
			"setting the CPUs of the postmaster (pid %d), which its parallel workers inherit: %v", pm, err)
		if errors.Is(err, os.ErrPermission) {
			w.Info.Why += " (the server runs as another user: " +
				"run numalab as that user, or let numalab start its own server without --dsn)"
		}
		return w, nil
	}
	e.pmPinned = true
	w.Info.How = fmt.Sprintf("the postmaster (pid %d) set to CPUs %s: the parallel workers it forks inherit them",
		pm, place.FormatCPUs(cpus))
	return w, nil
}

// restorePostmaster gives the postmaster the CPUs it had before
// SetDOPPlaced set them.
func (e *pgEngine) restorePostmaster() error {
	if !e.pmPinned {
		return nil
	}
	if err := place.PinPID(e.pmPID, e.pmCPUs); err != nil {
		return fmt.Errorf("giving the postmaster (pid %d) its CPUs %s again: %w", e.pmPID, place.FormatCPUs(e.pmCPUs), err)
	}
	e.pmPinned = false
	return nil
}

// postmaster is the server's postmaster PID on this machine (read from
// /proc under proc's root), or 0 and why numalab cannot reach it.
func (e *pgEngine) postmaster(ctx context.Context, proc sysfs.FS) (int, string) {
	if e.server != nil {
		return e.server.PID(), ""
	}
	var backend int
	if err := e.db.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return 0, fmt.Sprintf("asking the server for a backend's pid: %v", err)
	}
	comm, err := proc.Comm(backend)
	if err != nil || comm != "postgres" {
		return 0, fmt.Sprintf("the server's backend (pid %d) is not a process of this machine: a server elsewhere, "+
			"or in a container, cannot have its parallel workers placed by numalab", backend)
	}
	st, err := proc.ProcStat(backend)
	if err != nil {
		return 0, fmt.Sprintf("finding the postmaster of backend %d: %v", backend, err)
	}
	return st.PPID, ""
}

// parallelWorkers lists the postmaster's children that are parallel
// workers now, from /proc under proc's root.
func parallelWorkers(proc sysfs.FS, pm int) []place.Task {
	children, err := proc.Children(pm)
	if err != nil {
		return nil
	}
	var out []place.Task
	for _, pid := range children {
		cmd, err := proc.Cmdline(pid)
		if err == nil && strings.Contains(cmd, "parallel worker") {
			out = append(out, place.Task{PID: pid, TID: pid})
		}
	}
	return out
}
