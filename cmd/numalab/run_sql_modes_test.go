package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/curve"
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/report"
	"github.com/numalab/numalab/internal/workload/sqlscript"
)

// sqliteBank is bank.sql's directory with a SQLite database of its table,
// made by run sql --init in a short run stored in a store of its own.
func sqliteBank(t *testing.T) (dir, db string) {
	t.Helper()
	dir = sqlFiles(t, map[string]string{"bank.sql": bankSQL, "schema.sql": `PRAGMA journal_mode = WAL;
CREATE TABLE sqltest_accounts (aid INTEGER PRIMARY KEY, balance INTEGER NOT NULL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) INSERT INTO sqltest_accounts SELECT i, 0 FROM n;
`})
	db = filepath.Join(dir, "bank.db")
	if _, errOut, err := runCLI(t, "run", "sql", "--engine", "sqlite", "--db", db, "--init",
		filepath.Join(dir, "schema.sql"),
		"--script", filepath.Join(dir, "bank.sql"), "--streams", "1", "--duration", "300ms", "--warmup", "300ms",
		"--store", filepath.Join(dir, "init.db")); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	return dir, db
}

// TestRunSQLDOPAndTrace runs a script on DuckDB at DOP 1 and 2 with a
// trace: each cell stores its DOP, the DOP 2 cell where its workers ran,
// and every cell its traced transactions, each of the one script.
func TestRunSQLDOPAndTrace(t *testing.T) {
	dir := sqlFiles(t, map[string]string{"sum.sql": "SELECT sum(balance) FROM sqltest_accounts;\n",
		"schema.sql": "CREATE TABLE sqltest_accounts (aid INTEGER PRIMARY KEY, balance INTEGER NOT NULL);\n" +
			"INSERT INTO sqltest_accounts SELECT i, i % 7 FROM range(1, 100001) t(i);\n"})
	st := filepath.Join(t.TempDir(), "s.db")
	out, errOut, err := runCLI(t, "run", "sql", "--engine", "duckdb", "--db", filepath.Join(dir, "sum.duckdb"), "--init",
		filepath.Join(dir, "schema.sql"),
		"--script", filepath.Join(dir, "sum.sql"), "--streams", "1", "--dop", "1,2", "--trace", "5", "--duration", "300ms",
		"--warmup", "300ms", "--store", st)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	r := onlyRun(t, st)
	cells, err := sqlscript.StoredCells(r)
	if err != nil || len(cells) != 2 {
		t.Fatalf("%d cells stored (%v)", len(cells), err)
	}
	for i, c := range cells {
		if c.Cell.DOP != i+1 {
			t.Errorf("cell %d: DOP %d, want %d", i, c.Cell.DOP, i+1)
		}
		if (c.Workers != nil) != (i == 1) {
			t.Errorf("cell %d (DOP %d): workers %+v; want a record at DOP 2 only", i, c.Cell.DOP, c.Workers)
		}
		if len(c.Cell.Trace) == 0 || len(c.Cell.Trace) > 5 {
			t.Errorf("cell %d: %d traced transactions, want 1 to 5", i, len(c.Cell.Trace))
		}
		for _, ev := range c.Cell.Trace {
			if ev.Type != 0 {
				t.Errorf("cell %d: traced type %d, want 0 (the one script)", i, ev.Type)
			}
		}
	}
	if !strings.Contains(r.Command, "--dop 1,2") || !strings.Contains(r.Command, "--trace 5") {
		t.Errorf("stored command %q lacks --dop 1,2 or --trace 5", r.Command)
	}
	if !strings.Contains(out, "statement latencies in milliseconds and failures, cell 1 (1 stream on all CPUs, DOP 2)") {
		t.Errorf("the statements' table does not name the cell's DOP:\n%s", out)
	}
}

// TestRunSQLCurve runs --curve on a SQLite script: a closed-loop cell,
// then the paced ones, stored as a sql-curve run with its curve, which
// the report draws as the curve of the user's scripts.
func TestRunSQLCurve(t *testing.T) {
	dir, db := sqliteBank(t)
	st := filepath.Join(t.TempDir(), "s.db")
	_, errOut, err := runCLI(t, "run", "sql", "--engine", "sqlite", "--db", db, "--script", filepath.Join(dir, "bank.sql"),
		"--streams", "1", "--curve", "--curve-at", "0.2,0.6", "--duration", "300ms", "--warmup", "300ms", "--store", st)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	r := onlyRun(t, st)
	cv, err := curve.KindCurve.Last(r)
	cells, cerr := sqlscript.StoredCells(r)
	if r.Kind != curve.SQLRunKind || err != nil || cv == nil || cerr != nil || len(cells) != 3 {
		t.Fatalf("run %s: curve %v (%v), %d cells (%v); want a %s run with 3 cells and its curve",
			r.Kind, cv, err, len(cells), cerr, curve.SQLRunKind)
	}
	if cv.Capacity <= 0 || len(cv.Points) != 2 {
		t.Errorf("curve: capacity %g, %d paced points; want a capacity and 2 points", cv.Capacity, len(cv.Points))
	}
	text, _, err := runCLI(t, "report", "--store", st, "--format", "text", "1")
	if err != nil || !strings.Contains(text, "Load curve (run 1, your scripts on sqlite)") {
		t.Errorf("report: %v\n%s", err, text)
	}
}

// TestRunSQLMonitor runs --monitor on a SQLite script: its pairs of cells
// stored as monitor's, each with its per-script figures, and the cost of
// each facility.
func TestRunSQLMonitor(t *testing.T) {
	dir, db := sqliteBank(t)
	st := filepath.Join(t.TempDir(), "s.db")
	out, errOut, err := runCLI(t, "run", "sql", "--engine", "sqlite", "--db", db, "--script",
		filepath.Join(dir, "bank.sql"),
		"--streams", "1", "--monitor", "sysmon", "--repeat", "2", "--monitor-load", "0", "--duration", "200ms", "--warmup",
		"20ms", "--store", st)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	r := onlyRun(t, st)
	cells, err := monitor.KindCell.All(r)
	scripts, serr := sqlscript.KindCellScripts.All(r)
	an, aerr := monitor.KindAnalysis.Last(r)
	if r.Kind != monitor.SQLRunKind || err != nil || len(cells) != 4 || serr != nil || len(scripts) != 4 ||
		aerr != nil || an == nil {
		t.Fatalf("run %s: %d monitor cells (%v), %d script figures (%v), analysis %v (%v); want a %s run of 4 cells, "+
			"each with its figures, and the analysis",
			r.Kind, len(cells), err, len(scripts), serr, an, aerr, monitor.SQLRunKind)
	}
	if !strings.Contains(out, "What each facility costs") || !strings.Contains(out, "sysmon") {
		t.Errorf("no cost per facility:\n%s", out)
	}
}

// TestRunSQLCompare compares two run sql runs of one sweep: each point's
// throughput and p95, both runs' repeats.
func TestRunSQLCompare(t *testing.T) {
	dir, db := sqliteBank(t)
	st := filepath.Join(t.TempDir(), "s.db")
	for range 2 {
		if _, errOut, err := runCLI(t, "run", "sql", "--engine", "sqlite", "--db", db, "--script",
			filepath.Join(dir, "bank.sql"),
			"--streams", "1,2", "--repeat", "2", "--duration", "300ms", "--warmup", "300ms", "--store", st); err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
	}
	out, _, err := runCLI(t, "compare", "--store", st, "--json", "1", "2")
	var c report.Comparison
	if err != nil || json.Unmarshal([]byte(out), &c) != nil {
		t.Fatalf("compare: %v\n%s", err, out)
	}
	var names []string
	for _, f := range c.Figures {
		names = append(names, f.Name)
		if len(f.ARepeats) != 2 || len(f.BRepeats) != 2 {
			t.Errorf("%s: %d and %d repeats, want 2 and 2", f.Name, len(f.ARepeats), len(f.BRepeats))
		}
	}
	want := []string{"sqlite all CPUs, 1 stream: throughput", "sqlite all CPUs, 1 stream: p95 latency",
		"sqlite all CPUs, 2 streams: throughput", "sqlite all CPUs, 2 streams: p95 latency"}
	if !slices.Equal(names, want) {
		t.Errorf("figures %q, want %q", names, want)
	}
}
