package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// childTests are the tests that run in a child process of this test
// binary, started by TestMain before the package's other tests, which run
// beside it: each spends a budget of wall time (an eval) or tens of
// seconds of probes, which would otherwise add to theirs, one test after
// another (cmd/numalab's tests were the suite's longest package).
var childTests = []string{"TestReadmeMainJob", "TestEvalBusyMachine", "TestCutRenders", "TestProbeMemStoresRunHost"}

// spenders are the child tests that spend a budget of wall time (an eval,
// with its busy loops in TestEvalBusyMachine): their children run at
// nice +spenderNice, so that on a busy machine they yield the CPU to the
// suite's other tests, which have fixed work to do, and take what is
// left. eval takes the same time whatever CPU it gets, cutting its steps
// to their shares of the budget (what TestEvalBusyMachine checks, the
// busy loops as niced as eval): at nice 0, the main job's 5-minute eval
// took ~250 of the suite's ~1,000 CPU-seconds, as much as it could get.
var spenders = map[string]bool{"TestReadmeMainJob": true, "TestEvalBusyMachine": true}

const spenderNice = 5

// childEnv names, in a child, the test it runs and its working
// directory: "TestName=DIR".
const childEnv = "NUMALAB_TEST_CHILD"

// inChild says whether this process is the child that runs test name,
// and its working directory.
func inChild(name string) (dir string, ok bool) {
	return strings.CutPrefix(os.Getenv(childEnv), name+"=")
}

// runAsChild runs test t in its child process: in the child it returns
// the child's working directory and true, and the test goes on; in this
// process it waits for the child (t is parallel), logs its output, fails
// when the child failed and returns false, and the test returns.
func runAsChild(t *testing.T) (dir string, child bool) {
	t.Helper()
	if dir, ok := inChild(t.Name()); ok {
		return dir, true
	}
	t.Parallel()
	j := takeChild(t.Name())
	<-j.done
	t.Cleanup(func() { os.RemoveAll(j.dir) })
	t.Logf("ran in a child process for %v (started %v before this test)\n%s",
		j.took.Round(time.Second), time.Since(j.start).Round(time.Second), j.out)
	if j.err != nil {
		t.Fatalf("the child that ran it: %v", j.err)
	}
	return "", false
}

// childRun is one run of a test in a child process.
type childRun struct {
	dir   string
	start time.Time
	took  time.Duration
	done  chan struct{} // closed when the child has ended
	out   string        // the child's output, each line marked as the child's
	err   error
	taken bool        // by the test in this process
	proc  *os.Process // the child, once started
}

var children struct {
	sync.Mutex
	runs map[string]*childRun
}

// startChildren starts the child of each of childTests, from TestMain,
// when this process is not a child, not -short and the test is to run (by
// -run, -skip and -list); it returns what TestMain calls after the tests,
// which ends the children no test waited for.
func startChildren() (wait func()) {
	flag.Parse()
	children.runs = map[string]*childRun{}
	if os.Getenv(childEnv) != "" || testing.Short() || flagSet("test.list") {
		return func() {}
	}
	for _, name := range childTests {
		if willRun(name) {
			children.runs[name] = newChild(name)
		}
	}
	return func() {
		children.Lock()
		defer children.Unlock()
		for _, r := range children.runs {
			if !r.taken && r.proc != nil {
				r.proc.Kill()
			}
			<-r.done
			os.RemoveAll(r.dir)
		}
	}
}

// takeChild is the run of test name startChildren started, or, when there
// is none or an earlier round of -count took it, a new one.
func takeChild(name string) *childRun {
	children.Lock()
	defer children.Unlock()
	if r := children.runs[name]; r != nil && !r.taken {
		r.taken = true
		return r
	}
	r := newChild(name)
	r.taken = true
	return r
}

// newChild starts the test binary again as the child that runs test name
// alone (verbose: its logs are in its output), in a directory of its own;
// the child dies with this process. It is started and waited for on an OS
// thread of its own, which lives as long as the child: the parent-death
// signal comes when the thread that started the child ends, and the
// runtime ends the threads of goroutines that end locked to them (as
// placed streams do).
func newChild(name string) *childRun {
	r := &childRun{start: time.Now(), done: make(chan struct{})}
	if r.dir, r.err = os.MkdirTemp("", "numalab-child-"); r.err != nil {
		close(r.done)
		return r
	}
	args := []string{"-test.run=^" + name + "$", "-test.count=1", "-test.v"}
	if f := flag.Lookup("test.timeout"); f != nil {
		args = append(args, "-test.timeout="+f.Value.String())
	}
	flag.Visit(func(f *flag.Flag) { // this package's own flags given, such as -cut-seed
		if !strings.HasPrefix(f.Name, "test.") {
			args = append(args, "-"+f.Name+"="+f.Value.String())
		}
	})
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"="+name+"="+r.dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	started := make(chan struct{})
	go func() {
		defer close(r.done)
		runtime.LockOSThread() // never unlocked: the thread ends with the child
		if spenders[name] {
			// The child inherits this thread's nice value; the kernel
			// returns 20 − nice, and 0 is this thread.
			if prio, err := unix.Getpriority(unix.PRIO_PROCESS, 0); err == nil {
				unix.Setpriority(unix.PRIO_PROCESS, 0, 20-prio+spenderNice)
			}
		}
		if r.err = cmd.Start(); r.err == nil {
			r.proc = cmd.Process
		}
		close(started)
		if r.err != nil {
			return
		}
		err := cmd.Wait()
		r.took = time.Since(r.start)
		var b strings.Builder
		for line := range strings.Lines(out.String()) {
			b.WriteString("child| " + line) // no line of it reads as this process's test output
		}
		r.out, r.err = b.String(), err
	}()
	// The goroutine and pipe that copy the child's output exist before
	// any command of a test starts: runChecked must not count them.
	<-started
	return r
}
