package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/dop"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/runconfig"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/workload/tpch"
)

func TestRunTPCHBadInput(t *testing.T) {
	dir := t.TempDir()
	st := filepath.Join(dir, "s.db")
	db := filepath.Join(dir, "t.duckdb")
	tooMany := strconv.Itoa(runtime.NumCPU() + 1)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sf", "0"}, `-sf: "0" is not a scale factor numalab can load`},
		{[]string{"--sf", "-1"}, `-sf: "-1" is not a scale factor`},
		{[]string{"--sf", "1e9"}, `-sf: "1e+09" could not be loaded here: not enough room`},
		{[]string{"--query", "23"}, `-query: "23" is not a list of TPC-H query numbers 1 to 22`},
		{[]string{"--query", "0,1"}, `-query: "0,1" is not a list of TPC-H query numbers 1 to 22`},
		{[]string{"--engine", "sqlite", "--dop", "1,2"}, "asks SQLite for DOP 2, but SQLite runs each query on one thread"},
		{[]string{"--dop", "1," + tooMany}, fmt.Sprintf("has DOP %s, more than this machine's %d CPUs",
			tooMany, runtime.NumCPU())},
		{[]string{"--engine", "mysql"}, `-engine: "mysql" is not an engine`},
		{[]string{"--repeats", "0"}, `-repeats: "0" is not valid: want a whole number from 1 to 1000`},
	} {
		args := append([]string{"run", "tpch", "--store", st, "--db", db}, c.args...)
		_, _, err := runCLI(t, args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.args, err, c.want)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("bad input created the database file")
	}
}

func TestRunTPCHRefusesForeignFile(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "theirs.sqlite")
	if err := os.WriteFile(db, []byte("not a database of numalab's"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := runCLI(t, "run", "tpch", "--engine", "sqlite", "--db", db, "--store", filepath.Join(dir, "s.db"))
	if err == nil || !strings.Contains(err.Error(), "remove it or choose another --db") {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if b, _ := os.ReadFile(db); string(b) != "not a database of numalab's" {
		t.Error("the refused file changed")
	}
}

// TestRunTPCHDuckDB runs a small sweep, reads it back from the store and
// makes the HTML report of it.
func TestRunTPCHDuckDB(t *testing.T) {
	if testing.Short() {
		t.Skip("loads SF 0.01 into DuckDB")
	}
	dir := t.TempDir()
	st := filepath.Join(dir, "s.db")
	dop := "1,2"
	if runtime.NumCPU() < 2 {
		dop = "1"
	}
	out, _, err := runCLI(t, "run", "tpch", "--engine", "duckdb", "--sf", "0.01", "--db", filepath.Join(dir, "t.duckdb"),
		"--query", "1,6,14",
		"--dop", dop, "--streams", "2", "--duration", "1s", "--warmup", "0s", "--store", st)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Speedup against DOP", "Q14", "Plan changes between consecutive DOPs:",
		"2 streams: DOP 1:", "most queries per hour at DOP",
		"Cost model against the clock at DOP 1", "largest error: Q"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	s, err := store.OpenReadOnly(st)
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.Latest(tpch.RunKind, 0, result.StatusComplete)
	if err != nil || id == 0 {
		t.Fatalf("no complete tpch run stored: %v", err)
	}
	r, err := s.Get(id)
	// Closed before the report runs: SQLite keeps another connection's
	// descriptor of a file open while this one holds it.
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	cells, err := tpch.KindCell.All(r)
	if n := 4 * len(strings.Split(dop, ",")); err != nil || len(cells) != n {
		t.Fatalf("stored %d cells (%v), want %d: 3 power and 1 throughput per DOP", len(cells), err, n)
	}
	an, err := tpch.KindAnalysis.Last(r)
	if err != nil || an == nil || len(an.Queries) != 3 {
		t.Fatalf("stored analysis %+v (%v)", an, err)
	}
	if !strings.Contains(r.Command, "--query 1,6,14") || !strings.Contains(r.Command, "--streams 2") {
		t.Errorf("stored command %q does not repeat the run", r.Command)
	}
	page := filepath.Join(dir, "r.html")
	if _, _, err := runCLI(t, "report", "--store", st, "--out", page, strconv.FormatInt(id, 10)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="tpch"`, `id="tpch-speedup"`, `id="tpch-cost"`, `id="tpch-plans"`,
		`id="tpch-dop"`, "not audited"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the report lacks %s", want)
		}
	}
}

func TestRunTPCHHelp(t *testing.T) {
	out, _, err := runCLI(t, "run", "tpch", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Usage: numalab run tpch", "docs/workloads/tpch.md", "not audited",
		"max_parallel_workers_per_gather", "Examples:", "Flags:"} {
		if !strings.Contains(out, want) {
			t.Errorf("run tpch --help lacks %q", want)
		}
	}
	checkCitations(t, "numalab run tpch --help", out)
	if runOut, _, err := runCLI(t, "run", "--help"); err != nil || !strings.Contains(runOut, "numalab run tpch [flags]") {
		t.Errorf("run --help does not list tpch: %v", err)
	}
}

// TestTPCHArgvReparses: the command line stored for a run tpch parses
// back to the same configuration and threshold, a cost or a time.
func TestTPCHArgvReparses(t *testing.T) {
	dir := t.TempDir()
	for i, c := range []tpch.RunConfig{
		{Common: runconfig.Common{Engine: "postgres", DSN: "postgres://me:xxxxx@db/x",
			StoredDSN: "postgres://me:xxxxx@db/x", Seed: 3, Repeat: 2,
			Duration: time.Second, Warmup: 0}, SF: 0.01, DOP: []int{1, 2}, Queries: []int{1, 6},
			Placement: "node=0", DataNode: 0},
		{Common: runconfig.Common{Engine: "sqlite", DB: filepath.Join(dir, "t.sqlite"), Seed: 1, Repeat: 1,
			Duration: 3 * time.Second, Warmup: time.Second,
			Load: sweep.Load{Pacing: sweep.Pacing{Rate: 2.5, Arrivals: "uniform"}}}, SF: 0.01, DOP: []int{1},
			Queries: []int{22}, Streams: []int{2, 4}, DataNode: -1},
	} {
		th := []dop.Threshold{{Cost: 17}, {Seconds: 0.25}}[i]
		argv := tpchArgv(c, th)
		got, _, _, thr, _, _, err := tpchFlags(&env{stdout: io.Discard, stderr: io.Discard}, argv[2:])
		if err != nil || asJSON(t, got) != asJSON(t, c) || thr != th {
			t.Errorf("%q parses to %s, threshold %v, %v\nwant %s, %v", argv, asJSON(t, got), thr, err, asJSON(t, c), th)
		}
	}
}

// TestRunTPCHPaced runs paced power and throughput cells on SQLite: the
// run is stored as tpch-paced with its pacing in the command, every cell
// with its pace, the output says how each went, no DOP is advised from
// the schedule's queries per hour, and the report shows the cells in its
// paced section.
func TestRunTPCHPaced(t *testing.T) {
	dir := t.TempDir()
	st := filepath.Join(dir, "s.db")
	out, errOut, err := runCLI(t, "run", "tpch", "--engine", "sqlite", "--sf", "0.01", "--db",
		filepath.Join(dir, "t.sqlite"), "--query", "6",
		"--streams", "2", "--duration", "1s", "--warmup", "0s", "--think", "20ms", "--think-dist", "exp",
		"--store", st, "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var o tpch.Output
	if err := json.Unmarshal([]byte(out), &o); err != nil || len(o.Cells) != 2 {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	for _, c := range o.Cells {
		if c.Cell == nil || c.Cell.Pace == nil || c.Cell.Pace.Mode != "think" || c.Cell.Pace.Think != 20*time.Millisecond ||
			c.Cell.Pace.ThinkDist != "exponential" {
			t.Errorf("%s cell: %+v", c.Mode, c.Cell)
		}
	}
	if o.Analysis.Advice != nil {
		t.Errorf("a DOP advised from paced throughput cells: %+v", o.Analysis.Advice)
	}
	if strings.Count(errOut, "paced think 20ms (exponential): ") != 2 {
		t.Errorf("the output does not say how each cell was paced:\n%s", errOut)
	}
	r := storedRun(t, st, 1)
	checkStored(t, r)
	if r.Kind != "tpch-paced" || !strings.Contains(r.Command, "--think 20ms --think-dist exp") {
		t.Errorf("stored as kind %q, command %q", r.Kind, r.Command)
	}
	text, _, err := runCLI(t, "report", "--store", st, "--format", "text", "1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "Paced queries") || !strings.Contains(text, "think 20ms (exponential)") ||
		strings.Contains(text, "TPC-H-derived queries (not audited") {
		t.Errorf("report text:\n%s", text)
	}
}
