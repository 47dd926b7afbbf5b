package sqlscript

import (
	"context"
	"flag"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/stats"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/topo"
)

var pgbenchFlag = flag.Bool("pgbench", false, "compare run sql's built-in scripts with pgbench's on a "+
	"'pgbench -i -s 1' database (needs pgbench and taskset, two CPUs; about two minutes)")

// The comparison's pairs: numalab's cell and pgbench's run, one after the
// other, the order alternating; each side warms up before its rate
// counts (pgbench's rate is that of its per-second reports after the
// warm-up).
const (
	benchPairs  = 9
	benchWarmup = time.Second
	benchRun    = 2 * time.Second
)

// TestPgbenchRatio runs, on one managed server pinned to CPU 1 (its
// postmaster before anything connects: every backend inherits it), one
// client pinned to CPU 0, numalab's and pgbench's (-M prepared: pgx
// prepares each statement once) select-only and tpcb-like scripts, in
// interleaved pairs, and logs the median pair's ratio of numalab's tps to
// pgbench's. It fails below 0.95.
func TestPgbenchRatio(t *testing.T) {
	if !*pgbenchFlag {
		t.Skip("compares with pgbench: run with -pgbench")
	}
	for _, tool := range []string{"pgbench", "taskset"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	host, err := topo.FromSysfs("/")
	if err != nil {
		t.Fatal(err)
	}
	if len(host.CPUs) < 2 {
		t.Skip("needs two CPUs: one for the client, one for the server")
	}
	ctx := context.Background()
	srv, err := pgserver.Start(ctx, pgserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if err := place.PinPID(srv.PID(), []int{1}); err != nil {
		t.Fatal(err)
	}
	cc, err := pgx.ParseConfig(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	conn := []string{"-h", cc.Host, "-p", strconv.Itoa(int(cc.Port)), "-U", cc.User}
	if out, err := exec.Command("pgbench", append(append([]string{"-i", "-s", "1", "-q"}, conn...),
		cc.Database)...).CombinedOutput(); err != nil {
		t.Fatalf("pgbench -i: %v\n%s", err, out)
	}
	for _, script := range []string{"select-only", "tpcb-like"} {
		t.Run(script, func(t *testing.T) {
			var ratios, ours, theirs []float64
			for i := range benchPairs {
				var a, b float64
				if i%2 == 0 {
					a, b = numalabTPS(t, host, srv.DSN(), script), pgbenchTPS(t, conn, cc.Database, script)
				} else {
					b, a = pgbenchTPS(t, conn, cc.Database, script), numalabTPS(t, host, srv.DSN(), script)
				}
				ours, theirs, ratios = append(ours, a), append(theirs, b), append(ratios, a/b)
			}
			ratio := stats.Median(ratios)
			t.Logf(
				"%s: numalab/pgbench %.3f (median of %d pairs of %v after %v; ratios %.3f)\n\tnumalab tps %.0f\n\tpgbench tps %.0f",
				script, ratio, benchPairs, benchRun, benchWarmup, ratios, ours, theirs)
			if ratio < 0.95 {
				t.Errorf("%s: numalab's tps is %.3f of pgbench's; want at least 0.95", script, ratio)
			}
		})
	}
}

// numalabTPS is one cell of the built-in script: one stream on CPU 0.
func numalabTPS(t *testing.T, host *result.Topology, dsn, script string) float64 {
	t.Helper()
	cfg := DefaultRunConfig()
	cfg.DSN, cfg.Builtins, cfg.Streams, cfg.Placements = dsn, []string{script}, []int{1}, []string{"cpus=0"}
	cfg.Warmup, cfg.Duration = benchWarmup, benchRun
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	ws, stored, err := cfg.ParseScripts()
	if err != nil {
		t.Fatal(err)
	}
	cells, _, err := sweep.Resolve(host, cfg.Spec(), cfg.Spread)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	out, err := sweep.Run(context.Background(), cfg.Plan(cells), NewSweep(cfg, ws, stored, nil), rec, rec)
	if err != nil || len(out) != 1 {
		t.Fatalf("numalab: %v (%d cells)", err, len(out))
	}
	return out[0].Cell.TPS
}

// pgbenchTPS is one run of pgbench's built-in script, one client on CPU
// 0: the mean of its per-second rates after the warm-up.
func pgbenchTPS(t *testing.T, conn []string, db, script string) float64 {
	t.Helper()
	args := append([]string{"-c", "0", "pgbench", "-n", "-M", "prepared", "-c", "1", "-j", "1", "-b", script,
		"-T", strconv.Itoa(int((benchWarmup + benchRun) / time.Second)), "-P", "1"}, conn...)
	out, err := exec.Command("taskset", append(args, db)...).CombinedOutput()
	var sum float64
	var n int
	for _, m := range progressRE.FindAllSubmatch(out, -1) {
		at, _ := strconv.ParseFloat(string(m[1]), 64)
		tps, _ := strconv.ParseFloat(string(m[2]), 64)
		if at > benchWarmup.Seconds() {
			sum, n = sum+tps, n+1
		}
	}
	if err != nil || n == 0 {
		t.Fatalf("pgbench: %v (no progress report after %v)\n%s", err, benchWarmup, out)
	}
	return sum / float64(n)
}

// progressRE is a progress report of pgbench -P: when, and the rate
// since the previous one.
var progressRE = regexp.MustCompile(`progress: ([0-9.]+) s, ([0-9.]+) tps`)
