package engine

// The files this process holds open in DuckDB.
//
// duckdb-go opens a file through DuckDB's process-wide instance cache. When
// the cache still has an entry for a file whose database handle is gone but
// whose instance something still references, the next open of that file
// waits in a busy loop until the instance is destroyed: forever, when the
// reference is never released (upstream: duckdb/duckdb issue 25965). In
// numalab that happened after a parallel query was interrupted: DuckDB
// 1.5.6 then keeps the database alive after every handle numalab had is
// closed (a scratch loop here reopened a file after two streams' P2
// queries at threads = 2 were cancelled mid-query, and the second open
// spun; with no interrupt, or at threads = 1, 60 reopens in a row passed).
//
// So numalab never lets DuckDB find out: every open of a DuckDB file goes
// through [holdDuckFile], which refuses at once
//   - a file this process has open now, naming who opened it and when;
//   - a file this process closed while DuckDB may still hold it (a parallel
//     query on it was interrupted, or connections were still in use when
//     it closed), saying why and what to do (a new process).
//
// And a stream's call is interrupted only duckInterruptGrace after its
// context is cancelled (see [duckEngine.callContext]): a cell's window
// closing lets the queries in flight finish, uncounted, instead of
// interrupting them.

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// duckInterruptGrace is how long a DuckDB call may go on after its context
// is cancelled before it is interrupted.
const duckInterruptGrace = 5 * time.Second

// duckHold is one file's entry in the registry.
type duckHold struct {
	holder string    // who opened it: the first caller outside this package
	since  time.Time // when
	open   bool      // open now
	// stuck, when not empty, says why DuckDB may still hold the file
	// after it was closed.
	stuck string
}

var duckFiles = struct {
	sync.Mutex
	m map[string]*duckHold
}{m: map[string]*duckHold{}}

// holdDuckFile enters path in the registry as open, or says why it cannot
// be opened now. The release it returns takes the entry out at close;
// stuck, when not empty, keeps it as a file DuckDB may still hold.
func holdDuckFile(path string) (release func(stuck string), err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("opening duckdb %s: %w", path, err)
	}
	duckFiles.Lock()
	defer duckFiles.Unlock()
	if h := duckFiles.m[abs]; h != nil {
		if h.open {
			return nil, fmt.Errorf("opening duckdb %s: this process already has it open (opened by %s at %s); close that first",
				path, h.holder, h.since.Format("15:04:05"))
		}
		return nil, fmt.Errorf("opening duckdb %s: DuckDB may still hold it in this process (opened by %s at %s, "+
			"then %s), and opening it again would wait forever: run this in a new numalab process",
			path, h.holder, h.since.Format("15:04:05"), h.stuck)
	}
	h := &duckHold{holder: caller(), since: time.Now(), open: true}
	duckFiles.m[abs] = h
	var once sync.Once
	return func(stuck string) {
		once.Do(func() {
			duckFiles.Lock()
			defer duckFiles.Unlock()
			if stuck == "" {
				delete(duckFiles.m, abs)
				return
			}
			h.open, h.stuck = false, stuck
		})
	}, nil
}

// DuckHeld says why DuckDB may still hold the file at path in this
// process, so that opening it again would be refused; "" when it may be
// opened.
func DuckHeld(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	duckFiles.Lock()
	defer duckFiles.Unlock()
	h := duckFiles.m[abs]
	switch {
	case h == nil:
		return ""
	case h.open:
		return fmt.Sprintf("open now (opened by %s at %s)", h.holder, h.since.Format("15:04:05"))
	}
	return fmt.Sprintf("opened by %s at %s, then %s", h.holder, h.since.Format("15:04:05"), h.stuck)
}

// DuckFilesOpen is how many DuckDB files this process has open now, for
// leak checks.
func DuckFilesOpen() int {
	duckFiles.Lock()
	defer duckFiles.Unlock()
	n := 0
	for _, h := range duckFiles.m {
		if h.open {
			n++
		}
	}
	return n
}

// caller names the first function on the stack outside this package
// ("transtats.openFile"), or "numalab" when there is none.
func caller() string {
	pcs := make([]uintptr, 16)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		if f.Function != "" && (!strings.Contains(f.Function, "/internal/engine.") || strings.HasSuffix(f.File, "_test.go")) {
			return f.Function[strings.LastIndex(f.Function, "/")+1:]
		}
		if !more {
			return "numalab"
		}
	}
}
