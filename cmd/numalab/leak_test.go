package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/engine"
)

// held is what the process holds that a command must give back: open file
// descriptors (by number, with what each points at), goroutines, and
// DuckDB files open.
type held struct {
	fds        map[string]string
	goroutines int
	duckFiles  int
}

func holding() held {
	h := held{fds: map[string]string{}, goroutines: runtime.NumGoroutine(), duckFiles: engine.DuckFilesOpen()}
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		target, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		h.fds[e.Name()] = target
	}
	return h
}

// extra says what now holds beyond before: descriptors not open before
// (the one ReadDir used aside), goroutines and DuckDB files over before's.
func (now held) extra(before held) []string {
	var out []string
	for fd, target := range now.fds {
		// The directory ReadDir read is closed by the time its
		// descriptor is looked up: no target, or /proc/.
		if _, ok := before.fds[fd]; !ok && target != "" && !strings.HasPrefix(target, "/proc/") {
			out = append(out, fmt.Sprintf("fd %s → %s", fd, target))
		}
	}
	slices.Sort(out)
	if now.goroutines > before.goroutines {
		out = append(out, fmt.Sprintf("%d goroutines, %d before", now.goroutines, before.goroutines))
	}
	if now.duckFiles > before.duckFiles {
		out = append(out, fmt.Sprintf("%d DuckDB files open, %d before", now.duckFiles, before.duckFiles))
	}
	return out
}

// runChecked runs numalab in-process and fails the test when, a few
// seconds after the command returned, the process holds more descriptors,
// goroutines or DuckDB files than before it: every command gives back
// what it took, on success and on error alike.
func runChecked(t testing.TB, ctx context.Context, args []string, stdout, stderr io.Writer) error {
	t.Helper()
	before := holding()
	err := run(ctx, args, stdout, stderr)
	var extra []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if extra = holding().extra(before); len(extra) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(extra) > 0 {
		var stacks strings.Builder
		pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		t.Errorf("numalab %s: after it returned the process still holds %s\ngoroutines now:\n%s",
			strings.Join(args, " "), strings.Join(extra, "; "), stacks.String())
	}
	return err
}
