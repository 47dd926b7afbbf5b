package tpcc

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/stats"
)

// pgbenchPath finds pgbench next to the managed server's binaries, on
// PATH, or in the Debian and RPM places.
func pgbenchPath(srv *pgserver.Server) string {
	cands := []string{}
	if srv != nil {
		cands = append(cands, filepath.Join(srv.BinDir, "pgbench"))
	}
	if p, err := exec.LookPath("pgbench"); err == nil {
		cands = append(cands, p)
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench")
	cands = append(cands, m...)
	for _, c := range cands {
		if fi, err := os.Stat(c); err == nil && fi.Mode()&0o111 != 0 {
			return c
		}
	}
	return ""
}

var pgbenchTPS = regexp.MustCompile(`(?m)^tps = ([0-9.]+) \(without initial connection time\)`)

// runPgbench runs the two scripts for d with n clients and returns tps.
func runPgbench(b *testing.B, bin, dir string, cfg *pgx.ConnConfig, n int, d time.Duration) float64 {
	args := []string{"-n", "-M", "prepared", "-c", strconv.Itoa(n), "-j", strconv.Itoa(n),
		"-T", strconv.Itoa(int(d.Seconds())), "-f", filepath.Join(dir, "order_status.sql") + "@1",
		"-f", filepath.Join(dir, "stock_level.sql") + "@1"}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "PGHOST="+cfg.Host, "PGPORT="+strconv.Itoa(int(cfg.Port)), "PGUSER="+cfg.User,
		"PGDATABASE="+cfg.Database)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("pgbench %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	m := pgbenchTPS.FindStringSubmatch(out.String())
	if m == nil {
		b.Fatalf("pgbench printed no tps:\n%s", out.String())
	}
	if strings.Contains(out.String(), "number of failed transactions: ") &&
		!strings.Contains(out.String(), "number of failed transactions: 0 ") {
		b.Fatalf("pgbench had failures:\n%s", out.String())
	}
	tps, _ := strconv.ParseFloat(m[1], 64)
	return tps
}

// runNumalab runs the same mix through drive for d with n streams.
func runNumalab(b *testing.B, w *Workload, n int, d time.Duration) float64 {
	cell, err := drive.Run(context.Background(), drive.Config{
		Types: TxNames, Streams: n, Warmup: time.Second, Duration: d,
	}, func(ctx context.Context, i int) (drive.Stream, error) {
		return w.OpenStream(ctx, rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(i))))
	})
	if err != nil {
		b.Fatal(err)
	}
	if cell.Total.Errors > 0 {
		b.Fatalf("numalab: %d failed calls: %+v", cell.Total.Errors, cell.Types)
	}
	return cell.TPS
}

// BenchmarkPgbenchRatio is issue 6's driver-overhead check: tpcc-ro on the
// managed PostgreSQL through numalab (drive.Run, one pgx connection per
// stream, one function call per transaction) against pgbench running the
// same calls from PgbenchScripts, at 1 and 2 clients, runs interleaved,
// the median of 3 each. It fails when numalab's median is below 0.95 of
// pgbench's. Run it alone:
//
//	go test -run '^$' -bench PgbenchRatio -benchtime 1x ./internal/workload/tpcc/
//
// NUMALAB_PGBENCH_SECONDS sets each run's length (default 5).
func BenchmarkPgbenchRatio(b *testing.B) {
	eng, _ := loadedEngine(b, "postgres")
	srv := pg.Server(b)
	bin := pgbenchPath(srv)
	if bin == "" {
		b.Skip("no pgbench found (install postgresql-contrib or the postgresql-NN package that has it)")
	}
	secs := 5
	if s, err := strconv.Atoi(os.Getenv("NUMALAB_PGBENCH_SECONDS")); err == nil && s > 0 {
		secs = s
	}
	d := time.Duration(secs) * time.Second
	w, err := Open(context.Background(), eng, Options{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	osScript, slScript := w.PgbenchScripts("")
	for name, text := range map[string]string{"order_status.sql": osScript, "stock_level.sql": slScript} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	cfg, err := pgx.ParseConfig(srv.DSN())
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("pgbench %s; scripts:\n%s\n%s", bin, osScript, slScript)
	for i := 0; i < b.N; i++ {
		for _, clients := range []int{1, 2} {
			var nl, pb []float64
			for rep := 0; rep < 3; rep++ {
				// Interleaved, alternating which goes first.
				if rep%2 == 0 {
					nl = append(nl, runNumalab(b, w, clients, d))
					pb = append(pb, runPgbench(b, bin, dir, cfg, clients, d))
				} else {
					pb = append(pb, runPgbench(b, bin, dir, cfg, clients, d))
					nl = append(nl, runNumalab(b, w, clients, d))
				}
			}
			ratio := stats.Median(nl) / stats.Median(pb)
			b.Logf("%d client(s), %ds runs: numalab tps %s (median %.0f); pgbench tps %s (median %.0f); ratio %.3f",
				clients, secs, fmtTPS(nl), stats.Median(nl), fmtTPS(pb), stats.Median(pb), ratio)
			b.ReportMetric(ratio, fmt.Sprintf("ratio-%dc", clients))
			b.ReportMetric(stats.Median(nl), fmt.Sprintf("numalab-tps-%dc", clients))
			b.ReportMetric(stats.Median(pb), fmt.Sprintf("pgbench-tps-%dc", clients))
			if ratio < 0.95 {
				b.Errorf("%d client(s): numalab/pgbench = %.3f, want ≥ 0.95", clients, ratio)
			}
		}
	}
}

func fmtTPS(x []float64) string {
	s := make([]string, len(x))
	for i, v := range x {
		s[i] = strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strings.Join(s, "/")
}

// TestPgbenchScripts checks the scripts make the stream's calls: the same
// functions, and inputs in the same ranges with the run's constants.
func TestPgbenchScripts(t *testing.T) {
	eng, _ := loadedEngine(t, "postgres")
	w, err := Open(context.Background(), eng, Options{Seed: 3, Augmented: true})
	if err != nil {
		t.Fatal(err)
	}
	osText, sl := w.PgbenchScripts("")
	c := w.RunConstants()
	for _, want := range []string{
		"\\set w random(1, 1)\n", "\\set d random(1, 10)\n",
		fmt.Sprintf("\\set n ((random(0, 255) | random(0, 999)) + %d) %% 1000\n", c.CLast),
		fmt.Sprintf("\\set c ((random(0, 1023) | random(1, 3000)) + %d) %% 3000 + 1\n", c.CID),
		`SELECT * FROM "numalab".order_status_aug(:w, :d, :c, :n);`,
	} {
		if !strings.Contains(osText, want) {
			t.Errorf("order-status script lacks %q:\n%s", want, osText)
		}
	}
	if !strings.Contains(sl, "\\set t random(10, 20)\n") ||
		!strings.Contains(sl, `SELECT "numalab".stock_level_aug(:w, :d, :t);`) {
		t.Errorf("stock-level script:\n%s", sl)
	}
	osCall, slCall := pgCalls("numalab", true)
	if !strings.Contains(osCall, `"numalab".order_status_aug(`) ||
		!strings.Contains(slCall, `"numalab".stock_level_aug(`) {
		t.Errorf("stream calls %q, %q differ from the scripts'", osCall, slCall)
	}
	// pgbench runs them without error, when it is here.
	srv := pg.Server(t)
	bin := pgbenchPath(srv)
	if bin == "" {
		t.Skip("no pgbench found")
	}
	dir := t.TempDir()
	for name, text := range map[string]string{"o.sql": osText, "s.sql": sl} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, _ := pgx.ParseConfig(srv.DSN())
	cmd := exec.Command(bin, "-n", "-M", "prepared", "-t", "200", "-f", filepath.Join(dir, "o.sql"),
		"-f", filepath.Join(dir, "s.sql"))
	cmd.Env = append(cmd.Environ(), "PGHOST="+cfg.Host, "PGPORT="+strconv.Itoa(int(cfg.Port)), "PGUSER="+cfg.User,
		"PGDATABASE="+cfg.Database)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "number of transactions actually processed: 200/200") {
		t.Errorf("pgbench: %v\n%s", err, out)
	}
}
