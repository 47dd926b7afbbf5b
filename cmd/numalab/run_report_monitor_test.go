package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/numalab/numalab/internal/mariaserver"
	"github.com/numalab/numalab/internal/mariaserver/mytest"
	"github.com/numalab/numalab/internal/monitor"
)

// my is the managed MariaDB server that plays a user's in this package's
// tests; TestMain stops it. Its buffer pool holds transtats' dimension
// tables (132 MiB whatever --rows is).
var my = mytest.New(mariaserver.Config{BufferPool: 256 << 20})

// TestRunReportMonitorRefusals: a MariaDB facility on DuckDB, pacing
// flags beside --monitor, and --allow-settings or --monitor-load without
// --monitor are refused before anything is stored.
func TestRunReportMonitorRefusals(t *testing.T) {
	st := filepath.Join(t.TempDir(), "s.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--engine", "duckdb", "--monitor", "general_log"}, "general_log is MariaDB's: use --engine mariadb"},
		{[]string{"--monitor", "trace", "--arrival-rate", "5"}, "-monitor: not with --arrival-rate or --think"},
		{[]string{"--allow-settings"}, "-allow-settings: is for --monitor"},
		{[]string{"--monitor-load", "0.5"}, "-monitor-load: is for --monitor"},
		{[]string{"--monitor", "trace", "--monitor-load", "11"}, "-monitor-load: 11 is not a fraction of capacity"},
	} {
		_, _, err := runCLI(t, append([]string{"run", "report", "--store", st, "--db", filepath.Join(t.TempDir(), "t.db"),
			"--rows", "10000"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v\nwant it to say %q", c.args, err, c.want)
		}
	}
	if _, err := os.Stat(st); !os.IsNotExist(err) {
		t.Errorf("a refused run made the store %s (%v)", st, err)
	}
}

// TestRunReportMonitorMariaDB: on a MariaDB server that plays a user's,
// with its general log on, 'run report --monitor general_log,trace
// --allow-settings' switches the general log in each stream's session per
// cell: the log holds the P1 queries of general_log's on cells (those
// each window counted, and at most one a stream still running when it
// closed), none of its off cells' or trace's; a report-monitor run of
// a pair a facility with its analysis is stored and printed.
func TestRunReportMonitorMariaDB(t *testing.T) {
	srv := my.Server(t)
	cfg, err := mysql.ParseDSN(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	var logFile string
	if err := db.QueryRow("SELECT @@global.general_log_file").Scan(&logFile); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("SET GLOBAL general_log = ON"); err != nil {
		t.Fatal(err)
	}
	defer db.Exec("SET GLOBAL general_log = OFF")
	st := filepath.Join(t.TempDir(), "s.db")
	out, errOut, err := runCLI(t, "run", "report", "--engine", "mariadb", "--dsn", srv.DSN(),
		"--allow-settings", "--store", st,
		"--rows", "20000", "--query", "P1", "--streams", "1", "--duration", "2s", "--warmup", "0s", "--repeat", "1",
		"--monitor", "general_log,trace", "--monitor-load", "0")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	r := onlyRun(t, st)
	cells, err := monitor.KindCell.All(r)
	if err != nil || r.Kind != monitor.ReportRunKind || len(cells) != 4 {
		t.Fatalf("stored a %s run of %d monitor cells (%v); want a %s run of 4",
			r.Kind, len(cells), err, monitor.ReportRunKind)
	}
	var got []string
	var on, onCells, off int64
	for _, c := range cells {
		got = append(got, fmt.Sprintf("%s %s", c.Facility, c.State()))
		if c.Cell.Total.Count == 0 {
			// A P1 query outlasting a window on a loaded host: stored
			// with 0, and left out of the analysis (monitor.Workload).
			t.Logf("cell %d (%s %s) counted no query in its window", c.Cell.Index, c.Facility, c.State())
		}
		switch {
		case c.Facility == "general_log" && c.On:
			on += c.Cell.Total.Count
			onCells++
		default:
			off += c.Cell.Total.Count
		}
	}
	if on+off == 0 {
		t.Error("no cell counted a query")
	}
	slices.Sort(got)
	if want := []string{"general_log off", "general_log on", "trace off", "trace on"}; !slices.Equal(got, want) {
		t.Errorf("cells %v; want %v", got, want)
	}
	b, err := os.ReadFile(filepath.Join(srv.DataDir(), logFile))
	if err != nil {
		t.Fatal(err)
	}
	// P1's text (EXPLAIN's lines, which numalab's own connection runs
	// between cells, say EXPLAIN before it).
	p1 := "SELECT count(*) AS `groups`"
	logged := int64(strings.Count(string(b), "Query\t"+p1) + strings.Count(string(b), "Execute\t"+p1))
	t.Logf("general log: %d P1 queries; general_log's on cells counted %d, the other cells %d", logged, on, off)
	if logged < on || logged > on+onCells {
		t.Errorf("the general log holds %d P1 queries; want the %d that general_log's on cells counted, plus at "+
			"most one a cell (the other cells ran %d)", logged, on, off)
	}
	if an, err := monitor.KindAnalysis.Last(r); err != nil || an == nil || len(an.Overheads) != 2 {
		t.Errorf("stored analysis %+v (%v); want one overhead a facility", an, err)
	}
	for _, want := range []string{"report-monitor: P1, 1 stream", "What each facility costs", "general_log"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "set in numalab's own sessions only") {
		t.Errorf("stderr does not say where the settings go:\n%s", errOut)
	}
}
