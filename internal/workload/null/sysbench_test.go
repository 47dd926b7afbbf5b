package null

import (
	"context"
	"database/sql"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/mariaserver"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/topo"
)

var sysbenchFlag = flag.Bool("sysbench", false, "compare the MariaDB null transaction with sysbench's "+
	"SELECT 1 at each pairing (needs sysbench, taskset and MariaDB; a minute or two)")

// sysbenchRounds is the number of interleaved rounds of the sysbench
// comparison; each side warms up for parityWarmup, then counts parityRun.
const sysbenchRounds = 5

// sysbenchScript is sysbench's SELECT 1, one connection per thread: with
// MODE=prepared a prepared statement (mysql_stmt_execute), else the query
// text (mysql_real_query), each answer read whole.
const sysbenchScript = `
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
  if os.getenv("MODE") == "prepared" then
    stmt = con:prepare("SELECT 1")
  end
end
function event()
  if stmt then stmt:execute() else con:query("SELECT 1") end
end
function thread_done()
  con:disconnect()
end
`

// TestSysbenchParity runs, on one managed MariaDB server over its unix
// socket, at each pairing this host offers and in both protocols,
// numalab's null transaction and sysbench's SELECT 1 (one thread, pinned
// with taskset, its server thread pinned by its OS thread id) in
// interleaved rounds, alternating which goes first, and wants the median
// of the rounds' ratios (numalab's rate over sysbench's in the same
// round) at least 0.95.
func TestSysbenchParity(t *testing.T) {
	if !*sysbenchFlag {
		t.Skip("compares with sysbench: run with -sysbench")
	}
	for _, tool := range []string{"sysbench", "taskset"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	srv, err := mariaserver.Start(context.Background(), mariaserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	b := &sbBench{srv: srv}
	if b.watch, err = sql.Open("mysql", srv.DSN()); err != nil {
		t.Fatal(err)
	}
	defer b.watch.Close()
	b.script = filepath.Join(t.TempDir(), "select1.lua")
	if err := os.WriteFile(b.script, []byte(sysbenchScript), 0o644); err != nil {
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
		for _, mode := range []string{Prepared, Simple} {
			t.Run(p.Name+"/"+mode, func(t *testing.T) { b.parity(t, p, mode) })
		}
	}
}

// TestSysbenchPeers runs, on one managed MariaDB server over its unix
// socket, at the same-cpu pairing (client and server thread on one CPU),
// four sides in interleaved rounds, the order turning each round:
// sysbench's oltp_point_select (prepared, uniform ids, on sysbench's
// sbtest.sbtest1 of 10,000 rows) against numalab's point-select call
// (the same statement, prepared, on numalab's own sbtest1 of 10,000 rows
// in its own database), and sysbench's SELECT 1 script against numalab's
// null transaction (both prepared). It logs the medians of the rounds
// and wants every side to have measured calls.
func TestSysbenchPeers(t *testing.T) {
	if !*sysbenchFlag {
		t.Skip("compares with sysbench: run with -sysbench")
	}
	for _, tool := range []string{"sysbench", "taskset"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	srv, err := mariaserver.Start(context.Background(), mariaserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	b := &sbBench{srv: srv}
	if b.watch, err = sql.Open("mysql", srv.DSN()); err != nil {
		t.Fatal(err)
	}
	defer b.watch.Close()
	b.script = filepath.Join(t.TempDir(), "select1.lua")
	if err := os.WriteFile(b.script, []byte(sysbenchScript), 0o644); err != nil {
		t.Fatal(err)
	}
	if b.host, err = topo.FromSysfs("/"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.watch.Exec("CREATE DATABASE IF NOT EXISTS sbtest"); err != nil {
		t.Fatal(err)
	}
	prep := exec.Command("sysbench", "--db-driver=mysql", "--mysql-socket="+srv.Socket(), "--mysql-user="+mariaserver.User,
		"--mysql-password="+srv.Password(), "--mysql-db=sbtest", "--tables=1",
		"--table-size="+strconv.Itoa(pointSelectRows), "oltp_point_select", "prepare")
	if out, err := prep.CombinedOutput(); err != nil {
		t.Fatalf("sysbench prepare: %v\n%s", err, out)
	}
	var p Pairing
	for _, q := range Matrix(b.host) {
		if q.Name == "same-cpu" {
			p = q
		}
	}
	if p.Unavailable != "" || p.Name == "" {
		t.Skipf("no same-cpu pairing here: %v", p)
	}
	logLoad(t)
	defer logLoad(t)
	nb := &bench{host: b.host}
	sides := []struct {
		name string
		run  func() side
	}{
		{"sysbench oltp_point_select", func() side {
			return b.sysbenchRun(t, p, "sbtest", nil, "--rand-type=uniform", "--tables=1",
				"--table-size="+strconv.Itoa(pointSelectRows), "oltp_point_select")
		}},
		{"numalab point-select", func() side { return nb.callCell(t, srv.DSN(), p, CallPointSelect) }},
		{"sysbench SELECT 1", func() side { return b.sysbench(t, p, Prepared) }},
		{"numalab null", func() side { return nb.callCell(t, srv.DSN(), p, CallSelect1) }},
	}
	rates := make([][]float64, len(sides))
	for r := range sysbenchRounds {
		for i := range sides {
			k := (i + r) % len(sides)
			rates[k] = append(rates[k], sides[k].run().rate)
		}
	}
	for k, sd := range sides {
		t.Logf("%-27s median %7.0f calls/s (n=%d rounds of %v after %v): %s", sd.name, stats.Median(rates[k]),
			sysbenchRounds, parityRun, parityWarmup, format(rates[k], "%.0f"))
		if slices.Min(rates[k]) <= 0 {
			t.Errorf("%s: a round measured no call: %s", sd.name, format(rates[k], "%.0f"))
		}
	}
	ratio := func(a, b int) []float64 {
		v := make([]float64, sysbenchRounds)
		for r := range v {
			v[r] = rates[a][r] / rates[b][r]
		}
		return v
	}
	t.Logf("numalab over sysbench, median of the rounds' ratios: point select %.2f (%s), SELECT 1 %.2f (%s)",
		stats.Median(ratio(1, 0)), format(ratio(1, 0), "%.2f"), stats.Median(ratio(3, 2)), format(ratio(3, 2), "%.2f"))
}

type sbBench struct {
	srv    *mariaserver.Server
	watch  *sql.DB
	script string
	host   *result.Topology
}

func (b *sbBench) parity(t *testing.T, p Pairing, mode string) {
	var ours, theirs []side
	var ratios []float64
	nb := &bench{host: b.host}
	for r := range sysbenchRounds {
		if r%2 == 0 {
			ours, theirs = append(ours, nb.cell(t, "mariadb", b.srv.DSN(), p, mode)), append(theirs, b.sysbench(t, p, mode))
		} else {
			theirs, ours = append(theirs, b.sysbench(t, p, mode)), append(ours, nb.cell(t, "mariadb", b.srv.DSN(), p, mode))
		}
		ratios = append(ratios, ours[r].rate/theirs[r].rate)
	}
	ratio := stats.Median(ratios)
	med := func(v []side, f func(side) float64) float64 { return stats.Median(each(v, f)) }
	rate := func(s side) float64 { return s.rate }
	cpu := func(s side) float64 { return s.cpuUS }
	sw := func(s side) float64 { return s.switches }
	t.Logf("%-10s %-8s ratio %.2f (median of n=%d rounds of %v after %v; range %.2f-%.2f)   numalab median %7.0f "+
		"calls/s, sysbench median %7.0f tps\n"+
		"\tper call, client process, median: numalab %.1f µs CPU, %.2f context switches; sysbench %.1f µs, %.2f\n"+
		"\tratios   %s\n\tnumalab  %s\n\tsysbench %s",
		p.Name, mode, ratio, sysbenchRounds, parityRun, parityWarmup, slices.Min(ratios), slices.Max(ratios),
		med(ours, rate), med(theirs, rate),
		med(ours, cpu), med(ours, sw), med(theirs, cpu), med(theirs, sw),
		format(ratios, "%.2f"), format(each(ours, rate), "%.0f"), format(each(theirs, rate), "%.0f"))
	if ratio < 0.95 {
		t.Errorf("%s %s: the median round's numalab rate is %.2fx sysbench's; want at least 0.95x", p.Name, mode, ratio)
	}
}

// sysbenchThread is the server thread of sysbench's connection, the only
// one of numalab's account in database db (mysql for the SELECT 1
// script, sbtest for oltp_point_select), 0 while there is none.
func sysbenchThread(db string) string {
	return "SELECT coalesce(max(thread_os_id), 0) FROM performance_schema.threads WHERE processlist_user = 'numalab' " +
		"AND processlist_db = '" + db + "'"
}

// sysbench runs one round of sysbench's SELECT 1 script in mode.
func (b *sbBench) sysbench(t *testing.T, p Pairing, mode string) side {
	return b.sysbenchRun(t, p, "mysql", []string{"MODE=" + mode}, b.script)
}

// sysbenchRun runs one round of sysbench, one thread, with test (a
// script or a built-in test and its options) on database db: its rate
// after the warm-up and, over its whole run, its CPU and context switches
// per transaction.
func (b *sbBench) sysbenchRun(t *testing.T, p Pairing, db string, env []string, test ...string) side {
	// A finished sysbench's thread may linger a moment: wait until it has
	// gone.
	for old := -1; old != 0; time.Sleep(time.Millisecond) {
		if err := b.watch.QueryRow(sysbenchThread(db)).Scan(&old); err != nil {
			t.Fatal(err)
		}
	}
	args := append([]string{"-c", strconv.Itoa(p.Client), "sysbench", "--db-driver=mysql",
		"--mysql-socket=" + b.srv.Socket(), "--mysql-user=" + mariaserver.User,
		"--mysql-password=" + b.srv.Password(), "--mysql-db=" + db,
		"--threads=1", "--time=" + strconv.Itoa(int((parityWarmup+parityRun)/time.Second)), "--report-interval=1"}, test...)
	cmd := exec.Command("taskset", append(args, "run")...)
	cmd.Env = append(os.Environ(), env...)
	type done struct {
		out []byte
		err error
	}
	res := make(chan done, 1)
	go func() { out, err := cmd.CombinedOutput(); res <- done{out, err} }()
	tid := 0
	for deadline := time.Now().Add(parityWarmup + parityRun); tid == 0 &&
		time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if err := b.watch.QueryRow(sysbenchThread(db)).Scan(&tid); err != nil {
			t.Fatal(err)
		}
	}
	if tid == 0 {
		t.Fatal("sysbench's server thread never appeared in performance_schema.threads")
	}
	if err := place.PinPID(tid, []int{p.Backend}); err != nil {
		t.Fatal(err)
	}
	d := <-res
	var sum float64
	var n int
	for _, m := range sbProgressRE.FindAllSubmatch(d.out, -1) {
		at, _ := strconv.ParseFloat(string(m[1]), 64)
		tps, _ := strconv.ParseFloat(string(m[2]), 64)
		if at > parityWarmup.Seconds() {
			sum, n = sum+tps, n+1
		}
	}
	if d.err != nil || n == 0 {
		t.Fatalf("sysbench: %v (no progress report after %v)\n%s", d.err, parityWarmup, d.out)
	}
	s := side{rate: sum / float64(n)}
	if m := sbTotalRE.FindSubmatch(d.out); m != nil {
		calls, _ := strconv.ParseFloat(string(m[1]), 64)
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		s.cpuUS, s.switches = float64(cpu.Microseconds())/calls, float64(ru.Nvcsw+ru.Nivcsw)/calls
	}
	return s
}

// sbProgressRE is a report of sysbench --report-interval: when, and the
// rate since the previous one.
var sbProgressRE = regexp.MustCompile(`\[ ([0-9.]+)s \] thds: [0-9]+ tps: ([0-9.]+)`)

// sbTotalRE is sysbench's count of transactions over its whole run.
var sbTotalRE = regexp.MustCompile(`transactions:\s+([0-9]+)`)
