package place

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
)

// Task is one thread: TID of process PID (for a single-threaded process,
// TID = PID).
type Task struct{ PID, TID int }

// TaskCPU reads where task t last ran (field 39 of its stat, "processor")
// and the CPU time it has used so far (the first field of its schedstat),
// from /proc under root ("/" in production).
func TaskCPU(root string, t Task) (cpu int, runNS uint64, err error) {
	dir := fmt.Sprintf("%s/proc/%d/task/%d", strings.TrimSuffix(root, "/"), t.PID, t.TID)
	b, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return 0, 0, err
	}
	// The command name (field 2) may hold spaces: count after its ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:]) // from field 3 on
	if i < 0 || len(f) < 37 {
		return 0, 0, fmt.Errorf("reading %s/stat: %d fields after the command name, expected at least 37", dir, len(f))
	}
	if cpu, err = strconv.Atoi(f[36]); err != nil {
		return 0, 0, fmt.Errorf("reading %s/stat: processor %q: %w", dir, f[36], err)
	}
	b, err = os.ReadFile(dir + "/schedstat")
	if err != nil {
		return 0, 0, err
	}
	fs := strings.Fields(string(b))
	if len(fs) == 0 {
		return 0, 0, fmt.Errorf("reading %s/schedstat: empty", dir)
	}
	runNS, err = strconv.ParseUint(fs[0], 10, 64)
	return cpu, runNS, err
}

// TaskSampler samples where a changing set of tasks runs, until Stop.
type TaskSampler struct {
	root    string
	list    func() []Task
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	last    map[Task]uint64
	perCPU  map[int]uint64 // ns
	samples int
}

// SampleTasks starts sampling the tasks list returns, every interval,
// reading /proc under root. A task's CPU time since the sample before
// (all of it the first time the task is seen, as a worker process that
// started during the cell) is put on the CPU it is on now.
func SampleTasks(root string, list func() []Task, every time.Duration) *TaskSampler {
	s := &TaskSampler{root: root, list: list, stop: make(chan struct{}), done: make(chan struct{}),
		last: map[Task]uint64{}, perCPU: map[int]uint64{}}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			s.sample()
			select {
			case <-s.stop:
				s.sample()
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *TaskSampler) sample() {
	tasks := s.list()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples++
	for _, t := range tasks {
		cpu, run, err := TaskCPU(s.root, t)
		if err != nil { // it ended between listing and reading
			continue
		}
		if run > s.last[t] {
			s.perCPU[cpu] += run - s.last[t]
		}
		s.last[t] = run
	}
}

// Stop stops sampling and returns where the tasks ran: their CPU time
// per CPU, and outside placement (nil: not placed).
func (s *TaskSampler) Stop(placement []int) result.WorkerCPUs {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	w := result.WorkerCPUs{Placement: placement, Workers: len(s.last), Samples: s.samples, PerCPU: []result.CPUTime{}}
	for cpu, ns := range s.perCPU {
		w.PerCPU = append(w.PerCPU, result.CPUTime{CPU: cpu, MS: float64(ns) / 1e6})
		if len(placement) > 0 && !slices.Contains(placement, cpu) {
			w.OutsideMS += float64(ns) / 1e6
		}
	}
	slices.SortFunc(w.PerCPU, func(a, b result.CPUTime) int { return a.CPU - b.CPU })
	return w
}

// ThreadsOf lists the threads of process pid, from /proc under root.
func ThreadsOf(root string, pid int) ([]Task, error) {
	tids, err := sysfs.New(root).Threads(pid)
	if err != nil {
		return nil, err
	}
	out := make([]Task, len(tids))
	for i, tid := range tids {
		out[i] = Task{PID: pid, TID: tid}
	}
	return out, nil
}
