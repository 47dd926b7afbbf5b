package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/workload/null"
)

// TestKilledRunIsReclaimed starts numalab (this test binary, re-executed)
// on a managed PostgreSQL server, kills it with SIGKILL once a cell is
// stored, and checks that the server's temporary directory it left is gone
// after the next numalab start of a managed server, and that the run is
// listed (runs, runs --json) and reported as abandoned with the cell it
// stored.
func TestKilledRunIsReclaimed(t *testing.T) {
	if args := os.Getenv("NUMALAB_TEST_CHILD_ARGS"); args != "" {
		var argv []string
		if err := json.Unmarshal([]byte(args), &argv); err != nil {
			panic(err)
		}
		if err := run(context.Background(), argv, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "numalab:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if testing.Short() {
		t.Skip("-short: starts two managed PostgreSQL servers")
	}
	// The servers' TMPDIR, which their account can enter when run as root.
	tmp, err := os.MkdirTemp("", "numalab-reclaim-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	st := filepath.Join(t.TempDir(), "s.db")
	// The null transaction: a managed server with nothing to load (run
	// report loaded transtats into each of the two servers, 20 s apiece).
	nullArgs := []string{"run", "null", "--engine", "postgres", "--transport", "unix", "--pairing",
		"same-cpu", "--warmup", "0s"}
	argv, _ := json.Marshal(append(nullArgs, "--store", st, "--duration", "1s", "--repeat", "3"))
	child := exec.Command(os.Args[0], "-test.run=^TestKilledRunIsReclaimed$")
	child.Env = append(os.Environ(), "NUMALAB_TEST_CHILD_ARGS="+string(argv), "TMPDIR="+tmp)
	var stderr strings.Builder
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()

	// Kill it once the first cell is stored (the second is running).
	for deadline := time.Now().Add(time.Minute); storedNullCells(st) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) || child.ProcessState != nil {
			t.Fatalf("no cell stored within a minute; numalab said:\n%s", stderr.String())
		}
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	left, _ := filepath.Glob(filepath.Join(tmp, "numalab-pg-*"))
	if len(left) != 1 {
		t.Fatalf("the killed numalab left %v, want its server's directory", left)
	}
	// Its postmaster goes on its own (parent-death signal); the next start
	// reclaims only once it has. The owner file names it "server"
	// (internal/managed).
	var m struct{ Server struct{ PID int } }
	b, _ := os.ReadFile(filepath.Join(left[0], "numalab-owner.json"))
	if err := json.Unmarshal(b, &m); err != nil || m.Server.PID == 0 {
		t.Fatalf("owner marker %q: %v", b, err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", m.Server.PID)); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("postmaster %d still running 30 s after numalab was killed", m.Server.PID)
		}
	}

	out, _, err := runCLI(t, "runs", "--store", st, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var runs []result.Run
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 1 ||
		runs[0].Status != result.StatusAbandoned {
		t.Errorf("runs --json: %v %s, want one abandoned run", err, out)
	}
	if out, _, err := runCLI(t, "runs", "--store", st); err != nil || !strings.Contains(out, " abandoned ") {
		t.Errorf("runs: %v\n%s\nwant the run listed as abandoned", err, out)
	}
	if out, _, err := runCLI(t, "report", "--store", st, "--format", "text"); err != nil ||
		!strings.Contains(out, "abandoned") {
		t.Errorf("report: %v\n%s\nwant the run named abandoned", err, out)
	}
	if n := storedNullCells(st); n < 1 {
		t.Errorf("the abandoned run keeps %d cells, want the one stored", n)
	}

	// The next start of a managed server, in this process.
	t.Setenv("TMPDIR", tmp)
	if _, stderr, err := runCLI(t, append(nullArgs, "--store", filepath.Join(t.TempDir(), "s2.db"), "--duration",
		"100ms", "--repeat", "1")...); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if after, _ := filepath.Glob(filepath.Join(tmp, "numalab-pg-*")); len(after) != 0 {
		t.Errorf("after the next start, %v left", after)
	}
}

// TestKilledMariaDBRunIsReclaimed starts numalab (this test binary,
// re-executed as TestKilledRunIsReclaimed's child) on a managed MariaDB
// server, kills it with SIGKILL once a cell is stored, and checks that no
// mariadbd of the server is left and that the next numalab start of a
// managed MariaDB server removes the temporary directory it left.
func TestKilledMariaDBRunIsReclaimed(t *testing.T) {
	if _, err := exec.LookPath("mariadb-install-db"); err != nil {
		t.Skipf("MariaDB is not installed (.ci/run installs Debian's mariadb-server as root): %v", err)
	}
	tmp, err := os.MkdirTemp("", "numalab-reclaim-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	st := filepath.Join(t.TempDir(), "s.db")
	nullArgs := []string{"run", "null", "--engine", "mariadb", "--transport", "unix", "--pairing",
		"same-cpu", "--warmup", "0s"}
	argv, _ := json.Marshal(append(nullArgs, "--store", st, "--duration", "1s", "--repeat", "3"))
	child := exec.Command(os.Args[0], "-test.run=^TestKilledRunIsReclaimed$")
	child.Env = append(os.Environ(), "NUMALAB_TEST_CHILD_ARGS="+string(argv), "TMPDIR="+tmp)
	var stderr strings.Builder
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	for deadline := time.Now().Add(time.Minute); storedNullCells(st) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) || child.ProcessState != nil {
			t.Fatalf("no cell stored within a minute; numalab said:\n%s", stderr.String())
		}
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	left, _ := filepath.Glob(filepath.Join(tmp, "numalab-mariadb-*"))
	if len(left) != 1 {
		t.Fatalf("the killed numalab left %v, want its server's directory", left)
	}
	var m struct{ Server struct{ PID int } }
	b, _ := os.ReadFile(filepath.Join(left[0], "numalab-owner.json"))
	if err := json.Unmarshal(b, &m); err != nil || m.Server.PID == 0 {
		t.Fatalf("owner marker %q: %v", b, err)
	}
	// mariadbd dies with numalab (parent-death signal, SIGKILL).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", m.Server.PID)); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("mariadbd %d still running 10 s after numalab was killed", m.Server.PID)
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), left[0]) {
			t.Errorf("%s is still running: %q", filepath.Dir(p), b)
		}
	}
	t.Setenv("TMPDIR", tmp)
	if _, stderr, err := runCLI(t, append(nullArgs, "--store", filepath.Join(t.TempDir(), "s2.db"), "--duration",
		"100ms", "--repeat", "1")...); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	} else if !strings.Contains(stderr, "removed "+left[0]) {
		t.Errorf("the next run did not say it removed %s:\n%s", left[0], stderr)
	}
	if after, _ := filepath.Glob(filepath.Join(tmp, "numalab-mariadb-*")); len(after) != 0 {
		t.Errorf("after the next start, %v left", after)
	}
}

// storedNullCells counts the null transaction's cells stored in the first
// run of the store at path.
func storedNullCells(path string) int {
	s, err := store.OpenReadOnly(path)
	if err != nil {
		return 0
	}
	defer s.Close()
	r, err := s.Get(1)
	if err != nil {
		return 0
	}
	n := 0
	for _, it := range r.Results {
		if it.Kind == string(null.KindCell) {
			n++
		}
	}
	return n
}
