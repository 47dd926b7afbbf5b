package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/store"
)

var cutSeed = flag.Uint64("cut-seed", 0, "TestCutRenders: the seed of its cut moments (0: a new one, logged)")

// TestCutRenders: a probe or a workload stopped at any moment (its
// deadline, Ctrl-C) ends without a panic, stores what it measured, and
// every format of the report renders each stored run: eval's probe, cut
// at its share of the budget inside the NUMA matrix, once panicked in the
// text renderer on a row with no cells. Each run is cut twice, at random
// moments of a small whole run of it (a probe's clock, ladders, bandwidth,
// matrix and repeats; a workload's load, warm-up, cells and analysis):
// one in each half, so that over the suite's runs every phase is cut. The
// seed is logged; -cut-seed repeats a run's moments. (Four fixed moments,
// 5% to 80%, cost 1.7 whole runs of each and took 235–290 s of the suite.)
// It runs in a child process beside the package's other tests (childTests).
func TestCutRenders(t *testing.T) {
	if _, child := runAsChild(t); !child {
		return
	}
	tpcc := tpccDB(t)
	seed := *cutSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("cut moments drawn with -cut-seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for _, c := range []struct {
		name string
		args func(dir string, i int) []string
	}{
		{"probe mem", func(string, int) []string {
			return []string{"probe", "mem", "--quick", "--max", "16m", "--window", "5", "--samples", "1", "--per-doubling",
				"1", "--repeats", "2"}
		}},
		{"run oltp", func(string, int) []string {
			return []string{"run", "oltp", "--db", tpcc, "--streams", "1,2", "--duration", "300ms", "--warmup",
				"100ms", "--repeat", "2"}
		}},
		{"run null", func(string, int) []string {
			return []string{"run", "null", "--engine", "sqlite", "--streams", "1,2", "--duration", "300ms", "--warmup",
				"100ms", "--repeat", "2"}
		}},
		{"run insert", func(dir string, i int) []string {
			return []string{"run", "insert", "--db", filepath.Join(dir, fmt.Sprintf("ins%d.db", i)), "--streams", "1,2",
				"--batch", "100", "--duration", "300ms", "--warmup", "100ms"}
		}},
		{"run report", func(dir string, i int) []string {
			return []string{"run", "report", "--engine", "sqlite", "--db",
				filepath.Join(dir, fmt.Sprintf("t%d.sqlite", i)), "--rows", "10000",
				"--streams", "1", "--duration", "300ms", "--warmup", "100ms"}
		}},
		{"run tpch", func(dir string, i int) []string {
			return []string{"run", "tpch", "--engine", "duckdb", "--db",
				filepath.Join(dir, fmt.Sprintf("h%d.duckdb", i)), "--sf", "0.01",
				"--query", "1,6", "--repeats", "2", "--duration", "300ms", "--warmup", "100ms"}
		}},
		{"run pages", func(string, int) []string {
			return []string{"run", "pages", "--db", tpcc, "--ghz", "2.5", "--pairs", "2", "--cell", "100ms", "--repeats", "0"}
		}},
		{"run sql", func(dir string, i int) []string {
			return []string{"run", "sql", "--engine", "sqlite", "--db", filepath.Join(dir, fmt.Sprintf("sql%d.db", i)),
				"--init", filepath.Join(dir, "schema.sql"),
				"--script", filepath.Join(dir, "bank.sql"), "--streams", "1,2", "--duration", "300ms", "--warmup", "100ms"}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range map[string]string{
				"schema.sql": "PRAGMA journal_mode = WAL;\nCREATE TABLE acct (id INTEGER PRIMARY KEY, bal INTEGER);\n" +
					"WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1000) " +
					"INSERT INTO acct SELECT x, 0 FROM n;\n",
				"bank.sql": "\\set id random(1, 1000)\nUPDATE acct SET bal = bal + 1 WHERE id = :id;\n" +
					"SELECT bal FROM acct WHERE id = :id;\n",
			} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			st := filepath.Join(dir, "s.db")
			start := time.Now()
			if _, stderr, err := runCLI(t, append(c.args(dir, 0), "--store", st)...); err != nil {
				t.Fatalf("the whole run: %v\n%s", err, stderr)
			}
			whole := time.Since(start)
			for i, f := range []float64{0.02 + 0.48*rng.Float64(), 0.5 + 0.45*rng.Float64()} {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(f*float64(whole)))
				var out, errb bytes.Buffer
				err := runChecked(t, ctx, append(c.args(dir, i+1), "--store", st), &out, &errb)
				cancel()
				if strings.Contains(errb.String(), "panic") || strings.Contains(out.String(), "panic") {
					t.Fatalf("cut at %.0f%% of %v: it panicked:\n%s", 100*f, whole, errb.String())
				}
				t.Logf("cut at %.0f%% of %v: %v", 100*f, whole, err)
			}
			s, err := store.Open(st)
			if err != nil {
				t.Fatal(err)
			}
			runs, err := s.List()
			s.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range runs {
				for _, format := range []string{"text", "json", "csv", "html"} {
					args := []string{"report", "--store", st, "--format", format, "--out",
						filepath.Join(dir, fmt.Sprintf("r%d.%s", r.ID, format)), fmt.Sprint(r.ID)}
					if _, stderr, err := runCLI(t, args...); err != nil {
						t.Errorf("run %d (%s): numalab %s: %v\n%s", r.ID, r.Status, strings.Join(args, " "), err, stderr)
					}
				}
			}
		})
	}
}
