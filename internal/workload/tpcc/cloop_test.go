package tpcc

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
)

// sqliteModule is the module whose amalgamation numalab links.
const sqliteModule = "github.com/mattn/go-sqlite3"

// cgoCFlags are the flags go-sqlite3 compiles its amalgamation with on
// every platform: its sqlite3.go's unconditional '#cgo CFLAGS:' lines.
func cgoCFlags(src []byte) []string {
	var flags []string
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		if f, ok := strings.CutPrefix(sc.Text(), "#cgo CFLAGS:"); ok {
			flags = append(flags, strings.Fields(f)...)
		}
	}
	return flags
}

func TestCgoCFlags(t *testing.T) {
	got := cgoCFlags([]byte("/*\n#cgo CFLAGS: -std=gnu99\n#cgo CFLAGS: -DA=1 -DB\n#cgo linux LDFLAGS: -ldl\n" +
		"#cgo openbsd CFLAGS: -I/usr/local/include\n*/\n"))
	if strings.Join(got, " ") != "-std=gnu99 -DA=1 -DB" {
		t.Errorf("cgoCFlags = %q", got)
	}
}

// buildCLoop compiles testdata/cloop.c with the amalgamation of the
// go-sqlite3 module this build uses, with the flags cgo compiles it with
// (the go command's own, GOGCCFLAGS, then CGO_CFLAGS, then the module's),
// into the user's cache (keyed by all of them), and returns the program's
// path. GOGCCFLAGS holds -fPIC: compiled without it (the compiler's
// default, a position-independent executable, whose global functions
// cannot be interposed and so may be inlined) the same loop ran 3%
// faster, 0.958-0.988 of it in six interleaved rounds.
func buildCLoop(tb testing.TB) string {
	tb.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		tb.Skip("no C compiler (cc) on PATH to build the C loop: install gcc")
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", sqliteModule).Output()
	if err != nil {
		tb.Fatalf("finding %s's source: %v", sqliteModule, err)
	}
	dir := strings.TrimSpace(string(out))
	binding, err := os.ReadFile(filepath.Join(dir, "sqlite3.go"))
	if err != nil {
		tb.Fatalf("reading %s's flags: %v", sqliteModule, err)
	}
	env, err := exec.Command("go", "env", "GOGCCFLAGS", "CGO_CFLAGS").Output()
	if err != nil {
		tb.Fatalf("go env GOGCCFLAGS CGO_CFLAGS: %v", err)
	}
	var goFlags []string
	for _, f := range strings.Fields(string(env)) {
		// A file prefix map names the go command's temporary directory,
		// new each time; it changes debug information, not code.
		if !strings.HasPrefix(f, "-ffile-prefix-map=") && !strings.HasPrefix(f, "-fdebug-prefix-map=") {
			goFlags = append(goFlags, f)
		}
	}
	loop, err := filepath.Abs(filepath.Join("testdata", "cloop.c"))
	if err != nil {
		tb.Fatal(err)
	}
	src, err := os.ReadFile(loop)
	if err != nil {
		tb.Fatal(err)
	}
	args := append(append(goFlags, cgoCFlags(binding)...), "-I"+dir)
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%q\n", cc, dir, args)
	h.Write(src)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	bin := filepath.Join(cache, "numalab", "cloop-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		tb.Fatal(err)
	}
	tmp := bin + ".tmp" + strconv.Itoa(os.Getpid())
	args = append(args, "-o", tmp, loop, filepath.Join(dir, "sqlite3-binding.c"), "-ldl", "-lpthread", "-lm")
	tb.Logf("building the C loop (a minute): %s %s", cc, strings.Join(args, " "))
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		tb.Fatalf("building the C loop: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		tb.Fatal(err)
	}
	return bin
}

// loopRun is one side's figures in one round: transactions per second of
// the window, and per CPU-second the process used in it (what other work
// on a shared machine disturbs less).
type loopRun struct{ tps, perCPU float64 }

// cloopArgs are the C loop's arguments for w's file, pinned to cpu (-1:
// not pinned).
func cloopArgs(tb testing.TB, w *Workload, cpu int, warmup, d time.Duration) []string {
	st, err := os.Stat(w.Path())
	if err != nil {
		tb.Fatal(err)
	}
	aug := "0"
	if w.opt.Augmented {
		aug = "1"
	}
	return []string{w.Path(), strconv.FormatInt(min(st.Size()+1<<20, engine.SQLiteMaxMmap), 10), strconv.Itoa(cpu),
		strconv.FormatFloat(warmup.Seconds(), 'f', -1, 64), strconv.FormatFloat(d.Seconds(), 'f', -1, 64),
		strconv.Itoa(w.meta.Warehouses), strconv.Itoa(w.run.CLast), strconv.Itoa(w.run.CID), aug,
		"BEGIN", "COMMIT", sqlCustomerByID, sqlCustomerByName, sqlLastOrder, sqlOrderLines, sqlNextOrder,
		sqlLowStock, sqlAvgPrice}
}

// cloopOutput parses the C loop's line: its transactions in the window,
// the window's seconds and the CPU seconds it used in it.
func cloopOutput(tb testing.TB, out []byte) (n int64, secs, cpuSecs float64) {
	i := bytes.Index(out, []byte("transactions "))
	if i < 0 {
		tb.Fatalf("C loop printed %q", out)
	}
	if _, err := fmt.Sscanf(string(out[i:]), "transactions %d seconds %g cpu %g", &n, &secs,
		&cpuSecs); err != nil || secs <= 0 {
		tb.Fatalf("C loop printed %q", out)
	}
	return n, secs, cpuSecs
}

// runCLoop runs the C loop on w's file, pinned to cpu.
func runCLoop(tb testing.TB, bin string, w *Workload, cpu int, warmup, d time.Duration) loopRun {
	out, err := exec.Command(bin, cloopArgs(tb, w, cpu, warmup, d)...).CombinedOutput()
	if err != nil {
		tb.Fatalf("C loop: %v\n%s", err, out)
	}
	n, secs, cpuSecs := cloopOutput(tb, out)
	if cpuSecs <= 0 {
		tb.Fatalf("C loop printed %q", out)
	}
	return loopRun{tps: float64(n) / secs, perCPU: float64(n) / cpuSecs}
}

// runOneStream runs one numalab stream on w through drive, pinned to cpu,
// as run oltp runs a SQLite cell; the process's CPU time is read when the
// window opens and closes (drive's monitor hook).
func runOneStream(tb testing.TB, w *Workload, cpu int, seed uint64, warmup, d time.Duration) loopRun {
	var cpuSecs float64
	watch := func() (func() (*result.Usage, error), error) {
		c0 := cpuSeconds()
		return func() (*result.Usage, error) {
			cpuSecs = cpuSeconds() - c0
			return nil, nil
		}, nil
	}
	cell, err := drive.Run(context.Background(), drive.Config{
		Types: TxNames, Streams: 1, CPUs: []int{cpu}, Cores: 1, Warmup: warmup, Duration: d,
		Procs: drive.ProcsForCgo(1), Monitor: watch,
	}, func(ctx context.Context, i int) (drive.Stream, error) {
		return w.OpenStream(ctx, rand.New(rand.NewPCG(seed, uint64(i))))
	})
	if err != nil {
		tb.Fatal(err)
	}
	if cell.Total.Errors > 0 || cpuSecs <= 0 {
		tb.Fatalf("numalab: %d failed calls (%+v), %g CPU seconds", cell.Total.Errors, cell.Types, cpuSecs)
	}
	return loopRun{tps: cell.TPS, perCPU: float64(cell.Total.Count) / cpuSecs}
}

// BenchmarkCLoopRatio is issue 51's check of the SQLite stream's own cost:
// tpcc-ro on one SQLite stream on CPU 0 through numalab (drive.Run and the
// stream, as run oltp runs a cell) against the C loop (testdata/cloop.c)
// making the same calls on the same amalgamation and file, on the same CPU,
// in interleaved rounds that alternate which goes first. It prints each
// round's ratio numalab/C and their median, of transactions per second and
// per CPU-second of the process. Run it alone:
//
//	go test -run '^$' -bench CLoopRatio -benchtime 1x ./internal/workload/tpcc/
//
// NUMALAB_CLOOP_ROUNDS (default 5) and NUMALAB_CLOOP_SECONDS (default 4,
// each side's measured window, after a 1 s warm-up) set its length;
// NUMALAB_CLOOP_DB names a loaded file to run on instead of the tests' own
// one warehouse (loaded first, which a profile of the run would show).
func BenchmarkCLoopRatio(b *testing.B) {
	bin := buildCLoop(b)
	rounds, secs := envInt("NUMALAB_CLOOP_ROUNDS", 5), envInt("NUMALAB_CLOOP_SECONDS", 4)
	w, err := openFile(b, cloopDB(b), Options{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	const cpu = 0
	warmup, d := time.Second, time.Duration(secs)*time.Second
	for i := 0; i < b.N; i++ {
		var nl, c []loopRun
		load0 := loadAverage()
		for r := 0; r < rounds; r++ {
			if r%2 == 0 {
				nl = append(nl, runOneStream(b, w, cpu, uint64(r), warmup, d))
				c = append(c, runCLoop(b, bin, w, cpu, warmup, d))
			} else {
				c = append(c, runCLoop(b, bin, w, cpu, warmup, d))
				nl = append(nl, runOneStream(b, w, cpu, uint64(r), warmup, d))
			}
		}
		b.Logf("one stream on CPU %d, %d interleaved rounds of %ds (load average %s before, %s after):",
			cpu, rounds, secs, load0, loadAverage())
		for _, m := range []struct {
			name string
			of   func(loopRun) float64
		}{{"tps", func(x loopRun) float64 { return x.tps }}, {"tx/cpu-s", func(x loopRun) float64 { return x.perCPU }}} {
			var a, z, ratios []float64
			for r := range nl {
				a, z, ratios = append(a, m.of(nl[r])), append(z, m.of(c[r])), append(ratios, m.of(nl[r])/m.of(c[r]))
			}
			b.Logf("  %-8s numalab %s (median %.0f); C loop %s (median %.0f); numalab/C %s, median %.3f",
				m.name, fmtTPS(a), stats.Median(a), fmtTPS(z), stats.Median(z), fmtRatios(ratios), stats.Median(ratios))
			b.ReportMetric(stats.Median(ratios), "ratio-"+strings.ReplaceAll(m.name, "/", "-per-"))
		}
	}
}

// cloopDB is NUMALAB_CLOOP_DB when it is set, else the tests' own W=1
// file (loaded first).
func cloopDB(tb testing.TB) string {
	if path := os.Getenv("NUMALAB_CLOOP_DB"); path != "" {
		return path
	}
	return loaded(tb)
}

// loadAverage is /proc/loadavg's 1-minute figure: what else ran beside the
// rounds, for the reader of their ratios.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "unknown"
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func fmtRatios(x []float64) string {
	s := make([]string, len(x))
	for i, v := range x {
		s[i] = strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strings.Join(s, "/")
}

// BenchmarkCallgrindInstructions counts what a tpcc-ro transaction costs in
// instructions and simulated L1 instruction-cache misses, which a loaded
// machine does not move: numalab's stream (TestCallgrindStream, Stream.Next
// in a loop) and the C loop each run twice under callgrind with its cache
// simulation (the host's cache geometry), of different lengths, and the
// whole process's counts of the two are differenced per transaction (setup
// cancels; the Go runtime's threads, allocation and collection count). It
// prints each side's figures a transaction and those inside sqlite3_step,
// SQLite's own work, which the two sides' different draws move (a few %):
// an instruction-cache miss inside it is SQLite's code fetched again.
// It takes minutes; run it alone:
//
//	NUMALAB_CLOOP_DB=w1.db go test -run '^$' -bench CallgrindInstructions -benchtime 1x ./internal/workload/tpcc/
func BenchmarkCallgrindInstructions(b *testing.B) {
	vg, err := exec.LookPath("valgrind")
	if err != nil {
		b.Skip("no valgrind on PATH: install valgrind")
	}
	bin := buildCLoop(b)
	path := cloopDB(b)
	w, err := openFile(b, path, Options{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	// callgrind runs cmd with its cache simulated: the process's
	// instructions and L1 instruction-cache misses, in all and inside
	// sqlite3_step, and the program's output.
	callgrind := func(name string, env []string, cmd ...string) (all, step cgCost, out []byte) {
		file := filepath.Join(dir, name)
		c := exec.Command(vg, append([]string{"--tool=callgrind", "--cache-sim=yes", "--callgrind-out-file=" + file},
			cmd...)...)
		c.Env = append(os.Environ(), env...)
		out, err := c.CombinedOutput()
		if err != nil {
			b.Fatalf("callgrind %s: %v\n%s", name, err, out)
		}
		ann, err := exec.Command("callgrind_annotate", "--inclusive=yes", "--threshold=100", "--show=Ir,I1mr",
			file).Output()
		if err != nil {
			b.Fatalf("callgrind_annotate %s: %v", name, err)
		}
		all, step, err = annotated(ann)
		if err != nil {
			b.Fatalf("callgrind %s: %v in\n%s", name, err, ann)
		}
		return all, step, out
	}
	calls := [2]int{envInt("NUMALAB_CALLGRIND_CALLS", 1000), 3 * envInt("NUMALAB_CALLGRIND_CALLS", 1000)}
	var goAll, goStep, cAll, cStep [2]cgCost
	var cN [2]float64
	for i, n := range calls {
		goAll[i], goStep[i], _ = callgrind(fmt.Sprintf("go.%d", i), []string{"NUMALAB_CLOOP_DB=" + path,
			"NUMALAB_CALLGRIND_CALLS=" + strconv.Itoa(n), "GODEBUG=asyncpreemptoff=1"},
			os.Args[0], "-test.run=^TestCallgrindStream$")
		// The C loop runs for a time: under callgrind's cache simulation
		// about 150 transactions a second here; it counts all but its
		// last.
		var out []byte
		cAll[i], cStep[i], out = callgrind(fmt.Sprintf("c.%d", i), nil,
			append([]string{bin}, cloopArgs(b, w, -1, 0, time.Duration(n)*time.Second/150)...)...)
		m, _, _ := cloopOutput(b, out)
		cN[i] = float64(m + 1)
	}
	// per is a side's cost a transaction, the two runs differenced.
	per := func(x [2]cgCost, n0, n1 float64) cgCost {
		return cgCost{ir: (x[1].ir - x[0].ir) / (n1 - n0), i1mr: (x[1].i1mr - x[0].i1mr) / (n1 - n0)}
	}
	goTx, goIn := per(goAll, float64(calls[0]), float64(calls[1])), per(goStep, float64(calls[0]), float64(calls[1]))
	cTx, cIn := per(cAll, cN[0], cN[1]), per(cStep, cN[0], cN[1])
	b.Logf("a transaction (%v and %v numalab transactions, %v and %v of the C loop's):", calls[0], calls[1], cN[0], cN[1])
	for _, s := range []struct {
		name   string
		tx, in cgCost
	}{{"numalab", goTx, goIn}, {"C loop ", cTx, cIn}} {
		b.Logf("  %s instructions %.0f, in sqlite3_step %.0f, outside it %.0f; L1i misses %.0f, in sqlite3_step %.0f",
			s.name, s.tx.ir, s.in.ir, s.tx.ir-s.in.ir, s.tx.i1mr, s.in.i1mr)
	}
	b.ReportMetric(goTx.ir-goIn.ir, "numalab-outside-step-Ir/tx")
	b.ReportMetric(cTx.ir-cIn.ir, "C-outside-step-Ir/tx")
	b.ReportMetric(goTx.i1mr, "numalab-I1mr/tx")
	b.ReportMetric(cTx.i1mr, "C-I1mr/tx")
}

// cgCost is what callgrind counted: instructions and L1 instruction-cache
// misses.
type cgCost struct{ ir, i1mr float64 }

// annotated reads callgrind_annotate's inclusive listing of Ir and I1mr
// (lines "1,234 ( 5.6%)  56 ( 0.1%)  file:function [object]"): the program's
// totals and sqlite3_step's.
func annotated(ann []byte) (all, step cgCost, err error) {
	var haveAll, haveStep bool
	for _, line := range strings.Split(string(ann), "\n") {
		var v [2]float64
		rest := strings.TrimSpace(line)
		ok := true
		for i := range v {
			num, after, found := strings.Cut(rest, " ")
			_, after, pct := strings.Cut(after, "%)")
			x, err := strconv.ParseFloat(strings.ReplaceAll(num, ",", ""), 64)
			if !found || !pct || err != nil {
				ok = false
				break
			}
			v[i], rest = x, strings.TrimSpace(after)
		}
		if !ok {
			continue
		}
		switch c := (cgCost{ir: v[0], i1mr: v[1]}); {
		case strings.HasPrefix(rest, "PROGRAM TOTALS") && !haveAll:
			all, haveAll = c, true
		case strings.Contains(rest, ":sqlite3_step ") && !haveStep:
			step, haveStep = c, true
		}
	}
	if !haveAll || !haveStep {
		return all, step, errors.New("no program totals or no sqlite3_step")
	}
	return all, step, nil
}

func TestAnnotated(t *testing.T) {
	ann := `Ir               I1mr
--------------------------------------------------------------------------------
126,680 (100.0%) 1,068 (100.0%)  PROGRAM TOTALS

Ir               I1mr            file:function
--------------------------------------------------------------------------------
126,680 (100.0%) 1,068 (100.0%)  ???:0x000000000001ab70 [/lib/ld-linux-x86-64.so.2]
 91,326 (72.09%)   789 (73.88%)  sqlite3-binding.c:sqlite3_step [/tmp/cloop]
 65,605 (51.79%)   179 (16.76%)  sqlite3-binding.c:sqlite3_step_x [/tmp/cloop]
`
	all, step, err := annotated([]byte(ann))
	if err != nil || all != (cgCost{126680, 1068}) || step != (cgCost{91326, 789}) {
		t.Errorf("annotated = %+v, %+v, %v", all, step, err)
	}
	if _, _, err := annotated([]byte(ann[:strings.Index(ann, " 91,326")])); err == nil {
		t.Error("annotated found sqlite3_step in a listing without it")
	}
}

// TestCallgrindStream runs NUMALAB_CALLGRIND_CALLS transactions of one
// stream on NUMALAB_CLOOP_DB, for BenchmarkCallgrindInstructions.
func TestCallgrindStream(t *testing.T) {
	n, db := envInt("NUMALAB_CALLGRIND_CALLS", 0), os.Getenv("NUMALAB_CLOOP_DB")
	if n == 0 || db == "" {
		t.Skip("BenchmarkCallgrindInstructions runs this under callgrind (NUMALAB_CALLGRIND_CALLS, NUMALAB_CLOOP_DB)")
	}
	_, s := fileStream(t, db, Options{Seed: 1})
	ctx := context.Background()
	for range n {
		if _, err := s.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
