package perfctr

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/numalab/numalab/internal/sysfs"
)

// spin does n steps of work the compiler cannot remove.
func spin(n int) uint64 {
	x := uint64(1)
	for range n {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

var sink uint64

// TestTaskClockCountsThisThread opens the software task clock on the
// calling thread: it must rise with work done on that thread, and by more
// for more work.
func TestTaskClockCountsThisThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c, err := Open(TaskClock)
	if errors.Is(err, unix.ENOSYS) {
		t.Skip("this kernel has no perf events: " + err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	read := func() uint64 {
		v, err := c.Read()
		if err != nil {
			t.Fatal(err)
		}
		if len(v) != 1 {
			t.Fatalf("Read gave %d counts for one event", len(v))
		}
		return v[0]
	}
	a := read()
	sink += spin(2_000_000)
	b := read()
	sink += spin(40_000_000)
	d := read()
	if !(b > a) {
		t.Fatalf("task clock did not rise over 2,000,000 steps: %d then %d", a, b)
	}
	// Twenty times the work: more CPU time whatever else runs (the count
	// is this thread's CPU time, not wall time).
	if !(d-b > b-a) {
		t.Fatalf("task clock rose %d ns over 40,000,000 steps, %d ns over 2,000,000", d-b, b-a)
	}
	c.Close()
	c.Close()
}

// TestHardwareCountersOrReason opens the hardware counters: where they
// open they count instructions on this thread; where they do not, the
// error names the counter, its errno and perf_event_paranoid.
func TestHardwareCountersOrReason(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c, err := Open(Instructions, LLCMisses)
	if err != nil {
		var pe *Error
		if !errors.As(err, &pe) {
			t.Fatalf("Open failed with %T, not a *perfctr.Error: %v", err, err)
		}
		r := pe.Reason()
		if !strings.Contains(r, "perf_event_paranoid") || !strings.Contains(r, unix.ErrnoName(errnoOf(pe.Err))) ||
			!strings.HasPrefix(r, pe.Event.Name) {
			t.Fatalf("reason %q names not the counter, the errno and perf_event_paranoid", r)
		}
		t.Skip("hardware counters not readable here (the reason was checked): " + r)
	}
	defer c.Close()
	a, err := c.Read()
	if err != nil {
		t.Fatal(err)
	}
	sink += spin(1_000_000)
	b, err := c.Read()
	if err != nil {
		t.Fatal(err)
	}
	if b[0]-a[0] < 1_000_000 {
		t.Fatalf("%d instructions counted over 1,000,000 steps of at least two instructions each", b[0]-a[0])
	}
}

func TestReasonWithoutParanoid(t *testing.T) {
	e := &Error{Event: Instructions, Err: unix.ENOENT}
	if r := e.Reason(); !strings.Contains(r, "ENOENT") || !strings.Contains(r, "perf_event_paranoid unreadable") ||
		!strings.Contains(r, "virtual machines") {
		t.Fatalf("reason %q", r)
	}
}

func TestScaleCount(t *testing.T) {
	tests := []struct {
		v, enabled, running uint64
		want                float64
	}{
		{100, 10, 10, 100},
		{100, 10, 5, 200},
		{100, 10, 0, 100}, // never ran: report what there is
		{0, 0, 0, 0},
	}
	for _, tt := range tests {
		if got := scaleCount(tt.v, tt.enabled, tt.running); got != tt.want {
			t.Errorf("scaleCount(%d, %d, %d) = %v, want %v", tt.v, tt.enabled, tt.running, got, tt.want)
		}
	}
}

// TestProcessTaskClockFollowsNewThreads checks OpenProcess's inherited
// counting with the software task clock: a busy thread created after the
// counters opened, and ended since, must be counted for the CPU time it
// had.
func TestProcessTaskClockFollowsNewThreads(t *testing.T) {
	old, err := threads(sysfs.New("/"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := OpenProcess(TaskClock)
	if errors.Is(err, unix.ENOSYS) {
		t.Skipf("this kernel has no perf events: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before, err := c.Read()
	if err != nil {
		t.Fatal(err)
	}
	// Goroutines that land on a thread that was there at the open hold it
	// (locked, waiting), until the runtime makes a new thread for one.
	release := make(chan struct{})
	defer close(release)
	spent := make(chan time.Duration)
	for spun := false; !spun; {
		onOld := make(chan bool)
		go func() {
			runtime.LockOSThread() // exits locked: the thread ends with it
			if slices.Contains(old, unix.Gettid()) {
				onOld <- true
				<-release
				return
			}
			onOld <- false
			sink = spin(50_000_000)
			var ts unix.Timespec
			unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
			spent <- time.Duration(ts.Nano())
		}()
		spun = !<-onOld
	}
	d := <-spent
	time.Sleep(10 * time.Millisecond) // the thread's exit folds its count into its parent's
	after, err := c.Read()
	if err != nil {
		t.Fatal(err)
	}
	if got := time.Duration(after[0] - before[0]); got < d/2 {
		t.Errorf("task clock counted %v for a new thread that had %v of CPU time", got, d)
	}
}

// TestProcFilesUnderRoot reads this process's threads and
// perf_event_paranoid from a temporary root laid out like /proc.
func TestProcFilesUnderRoot(t *testing.T) {
	root := t.TempDir()
	pid := os.Getpid()
	for _, d := range []string{fmt.Sprintf("proc/%d/task/%d", pid, pid), fmt.Sprintf("proc/%d/task/%d", pid, pid+7),
		"proc/sys/kernel"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "proc/sys/kernel/perf_event_paranoid"), []byte("4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	proc := sysfs.New(root)
	if got := paranoid(proc); got != "4" {
		t.Errorf("paranoid = %q, want 4", got)
	}
	if tids, err := threads(proc); err != nil || !slices.Equal(tids, []int{pid, pid + 7}) {
		t.Errorf("threads = %v, %v; want [%d %d]", tids, err, pid, pid+7)
	}
	empty := sysfs.New(t.TempDir())
	if got := paranoid(empty); got != "" {
		t.Errorf("paranoid with no file = %q, want \"\"", got)
	}
	if _, err := threads(empty); !errors.Is(err, os.ErrNotExist) ||
		!strings.Contains(err.Error(), "listing this process's threads") {
		t.Errorf("threads with no /proc: %v", err)
	}
}
