package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/evalplan"
	"github.com/numalab/numalab/internal/topo"
)

// TestEvalBusyMachine: eval at its least budget on a machine whose every
// CPU also runs a busy loop (a process of its own, as a user's other work
// is) still stores an OLTP run, fits the model and decides (or says it
// cannot tell, and what would), within its budget plus 5%: the steps the
// model rests on each keep their share of the budget. Once a memory probe
// that crawled took 1m52s of a 2-minute budget and eval stored no OLTP
// run. It asserts no speed. It runs in a child process (childTests),
// beside the package's other tests, which make the machine busier still.
func TestEvalBusyMachine(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skipf("no sh to run the busy loops with: %v", err)
	}
	m, err := topo.FromSysfs("/")
	if err != nil {
		t.Skipf("reading this machine's topology: %v", err)
	}
	dir, child := runAsChild(t)
	if !child {
		return
	}
	budget := evalplan.LeastBudget(m)
	for range runtime.NumCPU() {
		busy := exec.Command("sh", "-c", "while :; do :; done")
		// Gone with this process, however it ends.
		busy.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := busy.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { busy.Process.Kill(); busy.Wait() })
	}
	start := time.Now()
	var out, errb strings.Builder
	err = runChecked(t, context.Background(),
		[]string{"eval", "--budget", budget.String(), "--dir", dir, "--out", filepath.Join(dir, "r.html")}, &out, &errb)
	took := time.Since(start)
	summary := out.String()
	if err != nil {
		t.Fatalf("eval --budget %v beside %d busy loops: %v\n%s\n%s", budget, runtime.NumCPU(), err, errb.String(), summary)
	}
	t.Logf("eval --budget %v beside %d busy loops took %v:\n%s",
		budget, runtime.NumCPU(), took.Round(time.Second), summary)
	if limit := budget + time.Duration(evalplan.Overrun*float64(budget)); took > limit+5*time.Second {
		t.Errorf("eval took %v, over its budget %v plus 5%%", took.Round(time.Second), budget)
	}
	for _, want := range []struct{ what, re string }{
		{"an OLTP run", `(?m)^  tpcc-ro on SQLite: run \d+ \((complete|interrupted)\): \d`},
		{"a fit of the model", `(?m)^  it rests on: C = A \+ M·L·f with A = `},
		{"a decision, or cannot tell and what would decide", `(?m)^  Which server: (.*tps|cannot tell.*)`},
	} {
		if !regexp.MustCompile(want.re).MatchString(summary) {
			t.Errorf("eval's summary has no %s (%s)", want.what, want.re)
		}
	}
	if strings.Contains(summary, "cannot tell") && !strings.Contains(summary, "the measurement that would decide:") {
		t.Errorf("eval cannot tell, and does not say what would decide")
	}
}
