package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/calib"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/eval"
	"github.com/numalab/numalab/internal/evalplan"
	"github.com/numalab/numalab/internal/hugepages"
	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/topo"
	"github.com/numalab/numalab/internal/workload/pages"
	"github.com/numalab/numalab/internal/workload/tpcc"
)

func TestRunPagesHelp(t *testing.T) {
	out, _, err := runCLI(t, "run", "pages", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Usage: numalab run pages", "docs/model.md", "4 KiB", "2 MiB", "cold",
		"hot", "--probe-run",
		"Ctrl-C", "numalab eval", "Examples:", "Flags:", "-repeat-within"} {
		if !strings.Contains(out, want) {
			t.Errorf("run pages --help lacks %q", want)
		}
	}
}

// TestRunPagesBadInput: every bad value is refused before anything runs,
// naming its flag.
func TestRunPagesBadInput(t *testing.T) {
	st, db, empty := filepath.Join(t.TempDir(), "s.db"), sqliteFile(t), filepath.Join(t.TempDir(), "w1.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(text, []byte("not a database at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--pairs", "0"}, `-pairs: "0" is not 1 to 1000 pairs of cells`},
		{[]string{"--cell", "1ms"}, `-cell: "1ms" is not a cell of 10ms to 1h`},
		{[]string{"--repeats", "9", "--pairs", "2"}, `-repeats: "9" is not 0 to 4 repeats`},
		{[]string{"--repeat-within", "-1s"}, `-repeat-within: "-1s"`},
		{[]string{"--ghz", "40"}, `-ghz: "40" is not a plausible clock: want 0.1 to 10 GHz`},
		// The bounds model applies to a clock (it refuses 'model --ghz
		// 0.001'): a fit at a clock no machine has is not stored.
		{[]string{"--ghz", "0.001"}, `-ghz: "0.001" is not a plausible clock: want 0.1 to 10 GHz`},
		{[]string{"--ghz", "-1"}, `-ghz: "-1" is not a plausible clock`},
		{[]string{"--probe-run", "-2"}, `-probe-run: "-2" is not a run ID`},
		{[]string{"--tolerance", "1.5"}, `-tolerance: "1.5" is not a fraction`},
		{[]string{"--cpu", "-5"}, `-cpu: "-5" is not a CPU number`},
		{[]string{"--db", ""}, `-db: "" names no file`},
		{[]string{"--cpu", "4096", "--ghz", "3"}, "-cpu: 4096 is not a CPU of this machine"},
		{[]string{"--ghz", "3", "--db", filepath.Join(t.TempDir(), "none.db")}, "none.db: no such file"},
		{[]string{"--db", db}, "-probe-run: reading the memory probe's clock: no store at"},
		// What was wrong is named: the file, not what failed on it later.
		{[]string{"--ghz", "3", "--db", empty}, "-db: " + empty + " is empty (expected a tpcc SQLite file"},
		{[]string{"--ghz", "3", "--db", t.TempDir()}, "is a directory (expected a tpcc SQLite file"},
		{[]string{"--ghz", "3", "--db", text}, "is not an SQLite database by its first bytes"},
		// The user's scripts: a server engine's, named, readable.
		{[]string{"--ghz", "3", "--script", text, "--init", text},
			`-init: "` + text + `" is for --engine postgres or mariadb: on SQLite`},
		{[]string{"--ghz", "3", "--engine", "postgres", "--init", text}, `-script: "" names no script`},
		{[]string{"--ghz", "3", "--engine", "postgres", "--script", filepath.Join(t.TempDir(), "none.sql")},
			"-script: cannot read"},
	} {
		_, _, err := runCLI(t, append([]string{"run", "pages", "--store", st}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.args, err, c.want)
		}
		// A flag the user did not give is not blamed (--pairs 0 once
		// refused the default --repeats 2 as "not 0 to 0 repeats").
		for _, f := range []string{"-repeats", "-pairs", "-cell", "-ghz", "-cpu", "-tolerance"} {
			if err != nil && strings.Contains(err.Error(), f+":") && !slices.Contains(c.args, "-"+f) {
				t.Errorf("%v: err = %v blames %s, which was not given", c.args, err, f)
			}
		}
	}
	// A store without a memory probe has no clock to offer.
	s, err := store.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, _, err := runCLI(t, "run", "pages", "--store", st, "--db", db); err == nil ||
		!strings.Contains(err.Error(), "holds no complete memory probe") {
		t.Errorf("a store without a probe: %v", err)
	}
	// A --probe-run that does not exist is refused, --ghz or not.
	for _, args := range [][]string{{"--probe-run", "999"}, {"--probe-run", "999", "--ghz", "3"}} {
		_, _, err := runCLI(t, append([]string{"run", "pages", "--store", st, "--db", db}, args...)...)
		if err == nil || !strings.Contains(err.Error(), "-probe-run: run 999: no such run") {
			t.Errorf("%v: err = %v, want the missing run named", args, err)
		}
	}
	s, err = store.OpenReadOnly(st)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if runs, err := s.List(); err != nil || len(runs) != 0 {
		t.Errorf("refused commands stored %d runs (%v)", len(runs), err)
	}
}

// TestRunPagesSQLite runs the experiment briefly on a one-warehouse tpcc
// database: the fit is stored as a model-fit run with its configuration
// and a command line that runs it again, which does.
func TestRunPagesSQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a tpcc database and runs the cells (seconds)")
	}
	dir := t.TempDir()
	db, st := filepath.Join(dir, "w1.db"), filepath.Join(dir, "s.db")
	w, _, err := tpcc.Prepare(context.Background(),
		tpcc.Source{Engine: "sqlite", Where: engine.Options{Path: db}, Load: tpcc.LoadConfig{Warehouses: 1, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	w.Engine().Close()
	out, _, err := runCLI(t, "run", "pages", "--db", db, "--store", st, "--ghz", "2.5", "--pairs", "1", "--cell",
		"100ms", "--repeats", "0")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1 pairs of 100ms cells on CPU ", "at 2.50 GHz", "pair 1, 4 KiB pages, cold",
		"pair 1, 2 MiB pages, hot", "speed sentinel: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	r := onlyRun(t, st)
	var cfg pages.RunConfig
	if err := json.Unmarshal(r.Config, &cfg); err != nil || cfg.DB != db || cfg.Pairs != 1 ||
		cfg.CPU < 0 || cfg.GHz != 2.5 {
		t.Errorf("stored configuration %s (%v); want the run's, its CPU resolved", r.Config, err)
	}
	f, err := calib.KindMeasuredFit.Last(r)
	if err != nil || f == nil || len(f.Cells) != 4 || f.GHz != 2.5 {
		t.Fatalf("stored fit %+v, %v; want the four cells (two cells, cold and hot) at 2.5 GHz", f, err)
	}
	if r.Kind != calib.RunFit || r.Status != "complete" || !strings.HasPrefix(r.Command, "numalab run pages ") ||
		!strings.Contains(r.Command, " --db "+db) || !strings.Contains(r.Command, " --ghz 2.5") {
		t.Fatalf("stored run %s %s %q", r.Kind, r.Status, r.Command)
	}
	// The stored command runs again as it stands.
	again := strings.Fields(strings.TrimPrefix(r.Command, "numalab "))
	if _, _, err := runCLI(t, again...); err != nil {
		t.Errorf("the stored command %q: %v", r.Command, err)
	}
}

// TestPagesStoredCommandParses: the command line run pages stores, for
// its defaults and for eval's page-size step (its probe run and repeat
// bound set), parses back to the same configuration.
func TestPagesStoredCommandParses(t *testing.T) {
	m, _, err := topo.Load(filepath.Join("..", "..", "testdata", "topology", "kvm-2vcpu-zen.tar.gz"), "")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := evalplan.NewPlan(5*time.Minute, m)
	if err != nil {
		t.Fatal(err)
	}
	step := eval.NewConfigs(plan, "it's here").Pages
	step.ProbeRun, step.RepeatWithin, step.CPU = 3, 95*time.Second, 1
	ghz := pages.DefaultRunConfig()
	ghz.GHz = 3.25
	for _, c := range []pages.RunConfig{pages.DefaultRunConfig(), step, ghz} {
		argv := pagesSettings(&c).Argv("run", "pages", "--store", "s.db")
		words := shellSplit(t, "numalab "+shellJoin(argv))
		got, st, done, err := pagesFlags(&env{stdout: io.Discard, stderr: io.Discard}, words[3:])
		if err != nil || done || st != "s.db" {
			t.Fatalf("%q: store %q, %v", argv, st, err)
		}
		if a, b := asJSON(t, got), asJSON(t, c); a != b {
			t.Errorf("%q\nparses to %s\nwant      %s", argv, a, b)
		}
	}
}

// TestRunPagesScriptPostgres runs the experiment briefly with a tiny
// script of the user's on PostgreSQL: both servers run its --init, the
// cells run the script, and the stored fit is PostgreSQL's of the script,
// named by it, with a command line that parses back to the same run.
func TestRunPagesScriptPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two PostgreSQL servers and runs the cells (seconds)")
	}
	if os.Geteuid() != 0 {
		t.Skip("the 2 MiB side reserves pages from the kernel's pool (/proc/sys/vm/nr_hugepages), which needs root")
	}
	dir := t.TempDir()
	st, init, script := filepath.Join(dir, "s.db"), filepath.Join(dir, "init.sql"), filepath.Join(dir, "tiny.sql")
	for file, text := range map[string]string{
		init: "CREATE TABLE t (k int PRIMARY KEY, v int NOT NULL);\n" +
			"INSERT INTO t SELECT g, 0 FROM generate_series(1, 2000) g;\n",
		script: "\\set k random(1, 2000)\nSELECT v FROM t WHERE k = :k;\nUPDATE t SET v = v + 1 WHERE k = :k;\n",
	} {
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, _, err := runCLI(t, "run", "pages", "--engine", "postgres", "--script", script, "--init", init, "--store", st,
		"--ghz", "2.5", "--pairs", "1", "--cell", "50ms", "--repeats", "0")
	if errors.Is(err, pgserver.ErrNoBinaries) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// Released: no marker of this process (the pool itself is shared with
	// the evals and servers other tests run meanwhile).
	if held, err := hugepages.HeldBy("/", os.Getpid()); err != nil || held != 0 {
		t.Errorf("after the run this process still holds %d 2 MiB pages (%v)", held, err)
	}
	if n := strings.Count(out, "--init "+init+": 2 commands in "); n != 2 {
		t.Errorf("output says --init ran %d times, want once on each server:\n%s", n, out)
	}
	r := onlyRun(t, st)
	f, err := calib.KindMeasuredFit.Last(r)
	if err != nil || f == nil {
		t.Fatalf("stored fit: %v", err)
	}
	if f.FitEngine() != "postgres" || f.FitWorkload() != "tiny.sql" || len(f.Cells) != 4 ||
		!strings.HasPrefix(f.What, "your scripts (tiny.sql) on PostgreSQL") {
		t.Errorf("stored fit of %s's %s, %d cells, what %q; want PostgreSQL's tiny.sql, two cells cold and hot",
			f.FitEngine(), f.FitWorkload(), len(f.Cells), f.What)
	}
	if !strings.Contains(f.Method, "--init "+init+": 2 commands in ") ||
		!strings.Contains(f.Method, " with huge_pages=off") {
		t.Errorf("stored method %q does not say what --init did on each server", f.Method)
	}
	for _, c := range f.Cells {
		if c.Txns == 0 {
			t.Errorf("%s ran no transaction", c.Label)
		}
	}
	var cfg pages.RunConfig
	if err := json.Unmarshal(r.Config, &cfg); err != nil || cfg.Script == nil ||
		!slices.Equal(cfg.Script.Scripts, []string{script}) || cfg.Script.Init != init {
		t.Errorf("stored configuration %s (%v); want the script and --init", r.Config, err)
	}
	words := shellSplit(t, r.Command)
	got, _, done, err := pagesFlags(&env{stdout: io.Discard, stderr: io.Discard}, words[3:])
	if err != nil || done {
		t.Fatalf("stored command %q: %v", r.Command, err)
	}
	if a, b := asJSON(t, got), asJSON(t, cfg); a != b {
		t.Errorf("stored command %q\nparses to %s\nwant      %s", r.Command, a, b)
	}
}
