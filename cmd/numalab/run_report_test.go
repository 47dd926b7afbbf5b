package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/pgserver/pgtest"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/runconfig"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/sysfs"
	"github.com/numalab/numalab/internal/workload/transtats"
)

func TestRunReportHelp(t *testing.T) {
	out, _, err := runCLI(t, "run", "report", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Usage: numalab run report", "Examples:", "--dop 1,2,4",
		"max_parallel_workers_per_", "Flags:"} {
		if !strings.Contains(out, want) {
			t.Errorf("run report --help lacks %q", want)
		}
	}
}

func TestRunReportBadInput(t *testing.T) {
	dir := t.TempDir()
	st := filepath.Join(dir, "s.db")
	tooMany := strconv.Itoa(runtime.NumCPU() + 1)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--engine", "sqlite", "--dop", "1,2"}, "SQLite runs each query on one thread: use --dop 1"},
		{[]string{"--engine", "duckdb", "--dop", "1," + tooMany},
			fmt.Sprintf("has DOP %s, more than this machine's %d CPUs", tooMany, runtime.NumCPU())},
		{[]string{"--engine", "postgres", "--dop", tooMany}, "more than this machine's"},
		{[]string{"--query", "P3"}, `-query: unknown query "P3" (expected P1, P2 or P1,P2)`},
		{[]string{"--engine", "mysql"}, `-engine: "mysql" is not an engine: want sqlite, duckdb, postgres or mariadb`},
		{[]string{"--engine", "sqlite", "--dsn", "postgres://x@h/db"}, "-dsn: a DSN is for --engine postgres or mariadb"},
		{[]string{"--engine", "mariadb", "--dop", "1,2"},
			"asks MariaDB for DOP 2, but MariaDB has no intra-query parallelism"},
		{[]string{"--engine", "mariadb", "--db", filepath.Join(dir, "t.db")}, "-db: a file is for --engine sqlite or duckdb"},
		{[]string{"--rows", "0"}, "-rows and -rate: 0 rows is not between 1 and 200000000"},
		{[]string{"--streams", "0"}, `-streams: "0" is not a list of whole numbers of at least 1`},
		{[]string{"--duration", "0s"}, `-duration: "0s" is not valid: want a duration from 10ms to 24h0m0s`},
		// --rate is the data's here: pacing's checks name --arrival-rate.
		{[]string{"--rate", "10", "--arrivals", "uniform"}, "-arrivals: is for --arrival-rate (an arrival rate)"},
		{[]string{"--arrival-rate", "5", "--think", "10ms"}, "-think: not with --arrival-rate"},
		{[]string{"--arrival-rate", "-1"}, `-arrival-rate: "-1" is not between 0 and`},
	} {
		args := append([]string{"run", "report", "--store", st}, c.args...)
		_, _, err := runCLI(t, args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.args, err, c.want)
		}
	}
}

// TestRunReportUnreachableDSN: a server that does not answer is a clear
// error, and the password appears nowhere: not in the error, the output or
// the store.
func TestRunReportUnreachableDSN(t *testing.T) {
	st := filepath.Join(t.TempDir(), "s.db")
	const pw = "s3cretPW"
	dsns := [][3]string{ // engine, DSN, what the error says
		{"postgres", "postgres://bob:" + pw + "@127.0.0.1:1/lab?connect_timeout=5", "connecting to PostgreSQL"},
		{"postgres", "host=127.0.0.1 port=1 user=bob password=" + pw + " dbname=lab connect_timeout=5",
			"connecting to PostgreSQL"},
		{"mariadb", "bob:" + pw + "@tcp(127.0.0.1:1)/?timeout=5s",
			"opening transtats on MariaDB: opening mariadb: connecting to"},
	}
	for _, d := range dsns {
		out, errOut, err := runCLI(t, "run", "report", "--engine", d[0], "--dsn", d[1], "--rows", "1000",
			"--duration", "1s", "--warmup", "0s", "--store", st)
		if err == nil {
			t.Fatalf("an unreachable DSN was accepted")
		}
		if !strings.Contains(err.Error(), d[2]) {
			t.Errorf("err = %v, want it to say %q", err, d[2])
		}
		for what, s := range map[string]string{"error": err.Error(), "stdout": out, "stderr": errOut} {
			if strings.Contains(s, pw) {
				t.Errorf("the password appears in the %s: %s", what, s)
			}
		}
	}
	for id := int64(1); id <= int64(len(dsns)); id++ {
		r := storedRun(t, st, id)
		b, _ := json.Marshal(r)
		if strings.Contains(string(b), pw) {
			t.Errorf("the password appears in stored run %d: %s", id, b)
		}
		if r.Status != result.StatusFailed {
			t.Errorf("run %d status %s, want failed", id, r.Status)
		}
	}
}

// reportItems returns a stored run and its query cells.
func reportItems(t *testing.T, st string, id int64) (*result.Run, []result.QueryCell, *result.BulkLoad) {
	t.Helper()
	r := storedRun(t, st, id)
	var cells []result.QueryCell
	var load *result.BulkLoad
	for _, it := range r.Results {
		switch it.Kind {
		case "transtats.QueryCell":
			var c result.QueryCell
			if err := json.Unmarshal(it.Body, &c); err != nil {
				t.Fatal(err)
			}
			cells = append(cells, c)
		case "transtats.Load":
			load = &result.BulkLoad{}
			if err := json.Unmarshal(it.Body, load); err != nil {
				t.Fatal(err)
			}
		}
	}
	return r, cells, load
}

func TestRunReportDuckDB(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	st := filepath.Join(dir, "s.db")
	dops := "1"
	if runtime.NumCPU() >= 2 {
		dops = "1,2"
	}
	ndop := len(strings.Split(dops, ","))
	args := []string{"run", "report", "--engine", "duckdb", "--db", db, "--rows", "20000", "--warmup", "0s", "--store", st}
	out, errOut, err := runCLI(t,
		append(args[:len(args):len(args)], "--query", "P2", "--streams", "1,2", "--dop", dops, "--duration", "500ms")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	t.Logf("%s%s", out, errOut)
	table, after, _ := strings.Cut(strings.TrimSpace(out), "\n\n")
	if lines := strings.Split(table, "\n"); len(lines) != 1+2*ndop {
		t.Errorf("want a header and %d rows, got:\n%s", 2*ndop, out)
	}
	if ndop > 1 && !strings.Contains(after, "no estimated speedup: DuckDB's plans carry no cost") {
		t.Errorf("no word on why DuckDB has no estimated speedup after the rows:\n%s", out)
	}
	r, cells, load := reportItems(t, st, 1)
	if r.Kind != "report" || r.Status != result.StatusComplete || !strings.Contains(r.Headline, "queries/h") {
		t.Errorf("run = %s %s %q", r.Kind, r.Status, r.Headline)
	}
	checkStored(t, r)
	if load == nil || load.Reused || load.Rows != 20000 || load.RowsPerSecond <= 0 || load.Method != "appender" {
		t.Errorf("load = %+v, want a fresh appender load of 20000 rows with a rate", load)
	}
	if len(cells) != 2*ndop {
		t.Fatalf("stored %d cells, want %d", len(cells), 2*ndop)
	}
	for _, c := range cells {
		if c.Cell == nil || c.Cell.Total.Count == 0 || c.Cell.Total.Errors != 0 || c.QueriesPerHour <= 0 {
			t.Errorf("cell %+v: want successful queries", c)
			continue
		}
		if c.Cell.Engine != "duckdb" || c.Cell.Workload != "transtats" || c.PlanBefore == "" || c.PlanAfter == "" {
			t.Errorf("cell %d: engine %q workload %q, plans %d and %d bytes",
				c.Cell.Index, c.Cell.Engine, c.Cell.Workload, len(c.PlanBefore), len(c.PlanAfter))
		}
		if c.Cell.DOP == 1 && c.SpeedupVsDOP1 != 1 {
			t.Errorf("cell %d at DOP 1: speedup %v, want 1", c.Cell.Index, c.SpeedupVsDOP1)
		}
		if c.Settings["threads"] != strconv.Itoa(c.Cell.DOP) {
			t.Errorf("cell %d at DOP %d: threads = %q", c.Cell.Index, c.Cell.DOP, c.Settings["threads"])
		}
	}
	// The second run reuses the file. P1 takes far longer than P2 (it
	// builds a hash table of dimension's 1,440,000 rows): a longer window.
	if _, errOut, err := runCLI(t, append(args[:len(args):len(args)], "--query", "P1", "--streams", "1", "--dop",
		"1", "--duration", "3s")...); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	_, cells, load = reportItems(t, st, 2)
	if load == nil || !load.Reused || load.Rows != 20000 || load.RowsPerSecond <= 0 {
		t.Errorf("second load = %+v, want the file reused with the first load's rate", load)
	}
	if len(cells) != 1 || cells[0].Query != "P1" || cells[0].Cell == nil || cells[0].Cell.Total.Count == 0 ||
		cells[0].Cell.Total.Errors != 0 {
		t.Errorf("second run: %+v, want one P1 cell with successful queries", cells)
	}
}

func TestRunReportSQLiteJSON(t *testing.T) {
	dir := t.TempDir()
	out, errOut, err := runCLI(t, "run", "report", "--engine", "sqlite",
		"--db", filepath.Join(dir, "t.sqlite"), "--rows", "10000",
		"--query", "P2", "--duration", "1s", "--warmup", "300ms", "--store", filepath.Join(dir, "s.db"), "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var o transtats.Output
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, out)
	}
	if o.Load == nil || o.Load.Engine != "sqlite" || len(o.Cells) != 1 || o.Cells[0].Cell == nil ||
		o.Cells[0].Cell.Total.Count == 0 {
		t.Errorf("--json: %s", out)
	}
	if !strings.Contains(errOut, "queries/h") {
		t.Errorf("the table did not go to stderr with --json:\n%s", errOut)
	}
}

// killWriter kills a PostgreSQL postmaster a while after the first cell's
// row is printed, in the middle of the second cell.
type killWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	pid   int
	after time.Duration
	once  sync.Once
}

func (w *killWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.HasPrefix(string(p), "   0 ") {
		w.once.Do(func() {
			time.AfterFunc(w.after, func() { killServer(w.pid) })
		})
	}
	return len(p), nil
}

// killServer kills a postmaster and its backends with SIGKILL: a backend
// outlives its postmaster while its client stays connected, so killing the
// postmaster alone would let a running cell finish.
func killServer(pid int) {
	syscall.Kill(pid, syscall.SIGKILL)
	dirs, _ := os.ReadDir("/proc")
	fs := sysfs.New("/")
	for _, d := range dirs {
		child, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if st, err := fs.ProcStat(child); err == nil && st.PPID == pid {
			syscall.Kill(child, syscall.SIGKILL)
		}
	}
}

func (w *killWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestRunReportServerKilled kills the PostgreSQL server in the middle of
// the second cell: that cell is stored with its errors, the run stops with
// a clear error and is marked failed, and the first cell is kept.
func TestRunReportServerKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	ctx := context.Background()
	// A server of its own: the test kills it.
	s := pgtest.New(pgserver.Config{SharedBuffers: 64 << 20}).Server(t)
	defer s.Stop()
	st := filepath.Join(t.TempDir(), "s.db")
	out := &killWriter{pid: s.PID(), after: 1500 * time.Millisecond}
	var errOut bytes.Buffer
	err := runChecked(t,
		ctx, []string{"run", "report", "--engine", "postgres", "--dsn", s.DSN(), "--rows", "20000", "--query", "P2",
			"--streams", "1,2,1", "--duration", "3s", "--warmup", "0s", "--store", st}, out, &errOut)
	t.Logf("%s%s", out, errOut.String())
	if err == nil || !strings.Contains(err.Error(), "running cell 1 (P2, 2 streams, DOP 1): postgres stopped answering") ||
		!strings.Contains(err.Error(), "(1 earlier cells stored)") {
		t.Fatalf("err = %v, want the run to stop at cell 1 saying the server stopped answering", err)
	}
	r, cells, load := reportItems(t, st, 1)
	if r.Status != result.StatusFailed || !strings.Contains(r.Error, "stopped answering") {
		t.Errorf("run status %s, error %q, want failed with the reason", r.Status, r.Error)
	}
	if load == nil || load.Method != "COPY" || load.RowsPerSecond <= 0 {
		t.Errorf("load = %+v, want a COPY load with a rate", load)
	}
	if len(cells) != 2 {
		t.Fatalf("stored %d cells, want the first and the failed second", len(cells))
	}
	if c := cells[0].Cell; c == nil || c.Total.Count == 0 || c.Total.Errors != 0 {
		t.Errorf("first cell = %+v, want successes and no errors", c)
	}
	if c := cells[1].Cell; c == nil || c.Total.Errors == 0 || c.Total.FirstError == "" {
		t.Errorf("second cell = %+v, want its errors recorded", cells[1])
	} else {
		t.Logf("second cell: %d queries, %d errors, first: %s", c.Total.Count, c.Total.Errors, c.Total.FirstError)
	}
}

// TestRunReportPaced runs a paced cell on SQLite: stored as report-paced
// with --arrival-rate in its command and the data's --rate unchanged,
// each cell's pacing stored and printed, and the report shows the cells
// in its paced section (text and CSV), not in the reporting one.
func TestRunReportPaced(t *testing.T) {
	dir := t.TempDir()
	st := filepath.Join(dir, "s.db")
	out, errOut, err := runCLI(t, "run", "report", "--engine", "sqlite",
		"--db", filepath.Join(dir, "t.sqlite"), "--rows", "10000",
		"--query", "P2", "--duration", "1s", "--warmup", "300ms", "--arrival-rate", "20", "--arrivals", "uniform",
		"--store", st, "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var o transtats.Output
	if err := json.Unmarshal([]byte(out), &o); err != nil || len(o.Cells) != 1 || o.Cells[0].Cell == nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	c := o.Cells[0]
	if p := c.Cell.Pace; p == nil || p.Mode != "rate" || p.Rate != 20 || p.Arrivals != "uniform" || p.Offered < 19 ||
		p.Offered > 21 || c.SpeedupVsDOP1 != 0 {
		t.Errorf("paced cell: pace %+v, speedup %g", c.Cell.Pace, c.SpeedupVsDOP1)
	}
	if !strings.Contains(errOut, "paced 20/s (uniform): ") || !strings.Contains(errOut, "due in the window") {
		t.Errorf("the output does not say how the cell was paced:\n%s", errOut)
	}
	r := storedRun(t, st, 1)
	checkStored(t, r)
	if r.Kind != "report-paced" || !strings.Contains(r.Command, "--rate 5000 ") ||
		!strings.Contains(r.Command, "--arrival-rate 20 --arrivals uniform") {
		t.Errorf("stored as kind %q, command %q", r.Kind, r.Command)
	}
	text, _, err := runCLI(t, "report", "--store", st, "--format", "text", "1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "Paced queries") || !strings.Contains(text, "20/s (uniform)") ||
		!strings.Contains(text, "no report run given") {
		t.Errorf("report text:\n%s", text)
	}
	csv, _, err := runCLI(t, "report", "--store", st, "--format", "csv", "1")
	if err != nil || !strings.Contains(csv, "paced_queries,1,") || !strings.Contains(csv, ",late,") {
		t.Errorf("report csv (%v):\n%s", err, csv)
	}
}

// TestReportArgvPacedReparses: a paced run report's stored command line
// spells the data's --rate and the pacing's --arrival-rate apart, and
// parses back to the same configuration.
func TestReportArgvPacedReparses(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []sweep.Pacing{{Rate: 2.5, Arrivals: "uniform"}, {Think: 50 * time.Millisecond, ThinkDist: "exp"}} {
		c := transtats.RunConfig{Common: runconfig.Common{Engine: "sqlite", DB: filepath.Join(dir, "t.sqlite"),
			Duration: time.Second, Warmup: 0, Seed: 1,
			Repeat: 1, Load: sweep.Load{Pacing: p}}, Rows: 10000, Rate: 500, Streams: []int{2}, DOP: []int{1},
			Queries: []string{"P2"}, DataNode: -1}
		argv := reportArgv(c)
		got, _, _, _, _, err := reportFlags(&env{stdout: io.Discard, stderr: io.Discard}, argv[2:])
		if err != nil || asJSON(t, got) != asJSON(t, c) {
			t.Errorf("%q parses to %s (%v)\nwant %s", argv, asJSON(t, got), err, asJSON(t, c))
		}
		if p.Rate > 0 && !strings.Contains(strings.Join(argv, " "), "--rate 500 ") {
			t.Errorf("%q does not spell the data's rate", argv)
		}
	}
}
