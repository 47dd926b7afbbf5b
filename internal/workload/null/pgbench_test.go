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
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/topo"
)

var pgbenchFlag = flag.Bool("pgbench", false, "compare the null transaction with pgbench's SELECT 1 at each pairing (needs pgbench and taskset; minutes)")

// TestPgbenchParity runs, on one managed server over its unix socket, at
// each pairing this host offers and in both protocols, numalab's null
// transaction and pgbench's SELECT 1 (one client, pinned with taskset, its
// backend pinned by pid) in interleaved rounds, alternating which goes
// first, and wants numalab's median rate at least 0.95x pgbench's.
func TestPgbenchParity(t *testing.T) {
	if !*pgbenchFlag {
		t.Skip("compares with pgbench: run with -pgbench")
	}
	for _, tool := range []string{"pgbench", "taskset"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	const rounds, dur = 5, 3 * time.Second
	ctx := context.Background()
	srv, err := pgserver.Start(ctx, pgserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	cc, err := pgx.ParseConfig(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	watch, err := engine.ConnectPG(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)
	script := filepath.Join(t.TempDir(), "select1.sql")
	if err := os.WriteFile(script, []byte("SELECT 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	host, err := topo.FromSysfs("/")
	if err != nil {
		t.Fatal(err)
	}
	tpsRE := regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
	pgbench := func(p Pairing, mode string) float64 {
		cmd := exec.Command("taskset", "-c", strconv.Itoa(p.Client), "pgbench", "-n", "-M", mode, "-c", "1", "-j", "1",
			"-T", strconv.Itoa(int(dur/time.Second)), "-f", script, "-h", cc.Host, "-p", strconv.Itoa(int(cc.Port)), "-U", cc.User, cc.Database)
		outc := make(chan []byte, 1)
		errc := make(chan error, 1)
		go func() { out, err := cmd.CombinedOutput(); outc <- out; errc <- err }()
		pid := 0
		for deadline := time.Now().Add(dur); pid == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			watch.QueryRow(ctx, "SELECT coalesce(max(pid), 0) FROM pg_stat_activity WHERE application_name = 'pgbench'").Scan(&pid)
		}
		if pid == 0 {
			t.Fatal("pgbench's backend never appeared in pg_stat_activity")
		}
		if err := place.PinPID(pid, []int{p.Backend}); err != nil {
			t.Fatal(err)
		}
		out, err := <-outc, <-errc
		m := tpsRE.FindSubmatch(out)
		if err != nil || m == nil {
			t.Fatalf("pgbench: %v\n%s", err, out)
		}
		tps, _ := strconv.ParseFloat(string(m[1]), 64)
		return tps
	}
	numalab := func(p Pairing, mode string) float64 {
		cfg := RunConfig{Engine: "postgres", DSN: srv.DSN(), Transports: []string{Unix}, Pairings: []string{p.Name}, Protocol: mode,
			Streams: []int{1}, Duration: dur, Warmup: 0, Repeat: 1}
		if err := cfg.Check(); err != nil {
			t.Fatal(err)
		}
		cells, layout, m := cfg.Cells(host)
		rec := &recorder{}
		out, err := sweep.Run(ctx, cfg.Plan(cells), NewSweep(cfg, layout, m), rec, rec)
		if err != nil || len(out) != 1 {
			t.Fatalf("numalab: %v (%d cells)", err, len(out))
		}
		return out[0].Cell.TPS
	}
	median := func(v []float64) float64 { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
	for _, p := range Matrix(host) {
		if p.Unavailable != "" {
			t.Logf("%v", p)
			continue
		}
		for _, mode := range []string{Simple, Prepared} {
			var ours, theirs []float64
			for r := range rounds {
				if r%2 == 0 {
					ours, theirs = append(ours, numalab(p, mode)), append(theirs, pgbench(p, mode))
				} else {
					theirs, ours = append(theirs, pgbench(p, mode)), append(ours, numalab(p, mode))
				}
			}
			ratio := median(ours) / median(theirs)
			t.Logf("%-10s %-8s numalab %8.0f calls/s  pgbench -M %-8s %8.0f tps  ratio %.2f  (medians of %d interleaved %v runs; numalab %s, pgbench %s)",
				p.Name, mode, median(ours), mode, median(theirs), ratio, rounds, dur, fmtRates(ours), fmtRates(theirs))
			if ratio < 0.95 {
				t.Errorf("%s %s: numalab %.0f calls/s is %.2fx pgbench's %.0f tps; want at least 0.95x", p.Name, mode, median(ours), ratio, median(theirs))
			}
		}
	}
}

func fmtRates(v []float64) string {
	s := ""
	for i, x := range v {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%.0f", x)
	}
	return s
}
