package null

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/runconfig"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/topo"
)

var pgbenchFlag = flag.Bool("pgbench", false,
	"compare the null transaction with pgbench's SELECT 1 at each pairing (needs pgbench and taskset; minutes)")

// Rounds of the pgbench comparison and their parts: many short rounds,
// so that a change in the machine's load lands on both sides of a round.
// Each side warms up for a second before its rate counts: numalab's cell
// has a warm-up, and pgbench's rate is that of its per-second progress
// reports after the first (pgbench -T counts whole seconds). pgbench's
// backend is pinned only once pgbench has connected, and its first
// wake-up on its new CPU can wait long on a loaded machine, as numalab's
// streams' backends' can (their first call is before the window).
const (
	parityRounds = 11
	parityWarmup = time.Second
	parityRun    = 2 * time.Second
)

// TestPgbenchParity runs, on one managed server over its unix socket, at
// each pairing this host offers and in both protocols, numalab's null
// transaction and pgbench's SELECT 1 (one client, pinned with taskset, its
// backend pinned by pid) in interleaved rounds, alternating which goes
// first, and wants the median of the rounds' ratios (numalab's rate over
// pgbench's in the same round) at least 0.95. It logs the load average
// before and after.
func TestPgbenchParity(t *testing.T) {
	if !*pgbenchFlag {
		t.Skip("compares with pgbench: run with -pgbench")
	}
	for _, tool := range []string{"pgbench", "taskset"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	ctx := context.Background()
	srv, err := pgserver.Start(ctx, pgserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	b := &bench{srv: srv}
	if b.cc, err = pgx.ParseConfig(srv.DSN()); err != nil {
		t.Fatal(err)
	}
	if b.watch, err = engine.ConnectPG(ctx, srv.DSN(), 0); err != nil {
		t.Fatal(err)
	}
	defer b.watch.Close(ctx)
	b.script = filepath.Join(t.TempDir(), "select1.sql")
	if err := os.WriteFile(b.script, []byte("SELECT 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b.host, err = topo.FromSysfs("/"); err != nil {
		t.Fatal(err)
	}
	logLoad(t)
	defer logLoad(t)
	for _, p := range Matrix(b.host) {
		if p.Unavailable != "" {
			t.Logf("%v", p)
			continue
		}
		for _, mode := range []string{Simple, Prepared} {
			t.Run(p.Name+"/"+mode, func(t *testing.T) { b.parity(t, p, mode) })
		}
	}
}

type bench struct {
	srv    *pgserver.Server
	cc     *pgx.ConnConfig
	watch  *pgx.Conn
	script string
	host   *result.Topology
}

// side is one round of one side: its rate, and what a call cost its
// client process (CPU, context switches).
type side struct {
	rate, cpuUS, switches float64
}

func (b *bench) parity(t *testing.T, p Pairing, mode string) {
	var ours, theirs []side
	var ratios []float64
	for r := range parityRounds {
		if r%2 == 0 {
			ours, theirs = append(ours, b.numalab(t, p, mode)), append(theirs, b.pgbench(t, p, mode))
		} else {
			theirs, ours = append(theirs, b.pgbench(t, p, mode)), append(ours, b.numalab(t, p, mode))
		}
		ratios = append(ratios, ours[r].rate/theirs[r].rate)
	}
	ratio := stats.Median(ratios)
	med := func(v []side, f func(side) float64) float64 { return stats.Median(each(v, f)) }
	rate := func(s side) float64 { return s.rate }
	cpu := func(s side) float64 { return s.cpuUS }
	sw := func(s side) float64 { return s.switches }
	t.Logf("%-10s %-8s ratio %.2f (median of n=%d rounds of %v after %v; range %.2f-%.2f)   numalab median %7.0f "+
		"calls/s, pgbench -M %s median %7.0f tps\n"+
		"\tper call, client process, median: numalab %.1f µs CPU, %.2f context switches; pgbench %.1f µs, %.2f\n"+
		"\tratios  %s\n\tnumalab %s\n\tpgbench %s",
		p.Name, mode, ratio, parityRounds, parityRun, parityWarmup, slices.Min(ratios), slices.Max(ratios),
		med(ours, rate), mode, med(theirs, rate),
		med(ours, cpu), med(ours, sw), med(theirs, cpu), med(theirs, sw),
		format(ratios, "%.2f"), format(each(ours, rate), "%.0f"), format(each(theirs, rate), "%.0f"))
	if ratio < 0.95 {
		t.Errorf("%s %s: the median round's numalab rate is %.2fx pgbench's; want at least 0.95x", p.Name, mode, ratio)
	}
}

// pgbenchAny is any backend of pgbench, 0 when there is none; pgbenchClient
// is its client's, which has run the script: pgbench first makes a
// connection of its own, which it closes before the client connects.
const (
	pgbenchAny    = "SELECT coalesce(max(pid), 0) FROM pg_stat_activity WHERE application_name = 'pgbench'"
	pgbenchClient = pgbenchAny + " AND query LIKE 'SELECT 1%'"
)

// pgbench runs one round of pgbench: its rate after the warm-up and, over
// its whole run, its CPU and context switches per transaction.
func (b *bench) pgbench(t *testing.T, p Pairing, mode string) side {
	ctx := context.Background()
	// A finished pgbench's backend may linger in pg_stat_activity for a
	// moment: wait until it has gone.
	for old := -1; old != 0; time.Sleep(time.Millisecond) {
		if err := b.watch.QueryRow(ctx, pgbenchAny).Scan(&old); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("taskset", "-c", strconv.Itoa(p.Client), "pgbench", "-n", "-M", mode, "-c", "1", "-j", "1",
		"-T", strconv.Itoa(int((parityWarmup+parityRun)/time.Second)), "-P", "1", "-f", b.script,
		"-h", b.cc.Host, "-p", strconv.Itoa(int(b.cc.Port)), "-U", b.cc.User, b.cc.Database)
	type done struct {
		out []byte
		err error
	}
	res := make(chan done, 1)
	go func() { out, err := cmd.CombinedOutput(); res <- done{out, err} }()
	pid := 0
	for deadline := time.Now().Add(parityWarmup + parityRun); pid == 0 &&
		time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if err := b.watch.QueryRow(ctx, pgbenchClient).Scan(&pid); err != nil {
			t.Fatal(err)
		}
	}
	if pid == 0 {
		t.Fatal("pgbench's backend never appeared in pg_stat_activity")
	}
	if err := place.PinPID(pid, []int{p.Backend}); err != nil {
		t.Fatal(err)
	}
	if got, err := place.AffinityPID(pid); err != nil || !slices.Equal(got, []int{p.Backend}) {
		t.Fatalf("pgbench's backend %d is on cpus %v (%v); want %d", pid, got, err, p.Backend)
	}
	d := <-res
	var sum float64
	var n int
	for _, m := range progressRE.FindAllSubmatch(d.out, -1) {
		at, _ := strconv.ParseFloat(string(m[1]), 64)
		tps, _ := strconv.ParseFloat(string(m[2]), 64)
		if at > parityWarmup.Seconds() {
			sum, n = sum+tps, n+1
		}
	}
	if d.err != nil || n == 0 {
		t.Fatalf("pgbench: %v (no progress report after %v)\n%s", d.err, parityWarmup, d.out)
	}
	s := side{rate: sum / float64(n)}
	if m := processedRE.FindSubmatch(d.out); m != nil {
		calls, _ := strconv.ParseFloat(string(m[1]), 64)
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		s.cpuUS, s.switches = float64(cpu.Microseconds())/calls, float64(ru.Nvcsw+ru.Nivcsw)/calls
	}
	return s
}

// progressRE is a progress report of pgbench -P: when, and the rate
// since the previous one.
var progressRE = regexp.MustCompile(`progress: ([0-9.]+) s, ([0-9.]+) tps`)

// processedRE is pgbench's count of transactions over its whole run.
var processedRE = regexp.MustCompile(`number of transactions actually processed: ([0-9]+)`)

// numalab runs one cell: its rate and, over its window, its process's CPU
// and context switches per call.
func (b *bench) numalab(t *testing.T, p Pairing, mode string) side {
	return b.cell(t, "postgres", b.srv.DSN(), p, mode)
}

// cell runs one cell of engine eng on the server dsn names, over its unix
// socket.
func (b *bench) cell(t *testing.T, eng, dsn string, p Pairing, mode string) side {
	return b.run(t,
		RunConfig{Common: runconfig.Common{Engine: eng, DSN: dsn, Warmup: parityWarmup, Duration: parityRun, Repeat: 1},
			Transports: []string{Unix}, Pairings: []string{p.Name}, Protocol: mode,
			Streams: []int{1}})
}

// callCell is one cell of call (prepared) on the MariaDB server at dsn.
func (b *bench) callCell(t *testing.T, dsn string, p Pairing, call string) side {
	return b.run(t,
		RunConfig{Common: runconfig.Common{Engine: "mariadb", DSN: dsn, Warmup: parityWarmup, Duration: parityRun, Repeat: 1},
			Transports: []string{Unix}, Pairings: []string{p.Name}, Protocol: Prepared,
			Call: call, Streams: []int{1}})
}

// run measures the one cell of cfg.
func (b *bench) run(t *testing.T, cfg RunConfig) side {
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	cells, layout, m := cfg.Cells(b.host)
	rec := &recorder{}
	out, err := sweep.Run(context.Background(), cfg.Plan(cells), NewSweep(cfg, layout, m), rec, rec)
	if err != nil || len(out) != 1 {
		t.Fatalf("numalab: %v (%d cells)", err, len(out))
	}
	c := out[0].Cell
	s := side{rate: c.TPS}
	if u, calls := c.Usage, float64(c.Total.Count); u != nil && calls > 0 {
		s.cpuUS = float64((u.ProcUserCPU + u.ProcSystemCPU).Microseconds()) / calls
		s.switches = float64(u.ProcVoluntarySwitches+u.ProcInvoluntarySwitches) / calls
	}
	return s
}

// each is f of every round.
func each(v []side, f func(side) float64) []float64 {
	x := make([]float64, len(v))
	for i, s := range v {
		x[i] = f(s)
	}
	return x
}

func format(v []float64, verb string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf(verb, x)
	}
	return strings.Join(s, " ")
}

// logLoad logs the machine's load averages (as uptime prints them).
func logLoad(t *testing.T) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		t.Logf("load average: %v", err)
		return
	}
	t.Logf("load average (1, 5, 15 min, runnable/threads): %s", strings.TrimSpace(string(b)))
}
