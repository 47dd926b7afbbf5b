package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/mariaserver"
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/workload/null"
)

func TestRunNullHelp(t *testing.T) {
	out, _, err := runCLI(t, "run", "null", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Usage: numalab run null", "docs/workloads/null.md", "smt-sibling", "unavailable",
		"with --dsn that works only when the server runs", "pgbench -M prepared", "Examples:", "Flags:"} {
		if !strings.Contains(out, want) {
			t.Errorf("run null --help lacks %q", want)
		}
	}
}

func TestRunNullBadInput(t *testing.T) {
	st := filepath.Join(t.TempDir(), "s.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--engine", "duckdb"}, `-engine: "duckdb" is not an engine of the null transaction`},
		{[]string{"--transport", "udp"}, `-transport: "udp" is not a transport`},
		{[]string{"--pairing", "far"}, `-pairing: "far" is not a pairing`},
		{[]string{"--protocol", "extended"}, `-protocol: "extended" is not a protocol`},
		{[]string{"--streams", "0"}, `-streams: "0"`},
		{[]string{"--dsn", "host=/tmp", "--transport", "unix,tcp"}, "names two transports"},
		{[]string{"--engine", "sqlite", "--dsn", "host=/tmp"}, "-dsn"},
		{[]string{"--duration", "0s"}, `-duration: "0s" is not valid: want a duration from 10ms to 24h0m0s`},
		{[]string{"--call", "select2"}, `-call: "select2" is not a call`},
		{[]string{"--engine", "sqlite", "--monitor", "trace"},
			"SQLite's null transaction runs in this process, with no server"},
		{[]string{"--monitor", "general_log"}, "general_log is MariaDB's: use --engine mariadb"},
		{[]string{"--monitor", "track_io_timing", "--rate", "100"}, "-monitor: not with --rate or --think"},
		{[]string{"--allow-settings"}, "-allow-settings: is for --monitor"},
		{[]string{"--monitor-load", "0.5"}, "-monitor-load: is for --monitor"},
		{[]string{"--monitor", "track_io_timing", "--monitor-load", "11"}, "-monitor-load: 11 is not a fraction of capacity"},
	} {
		_, _, err := runCLI(t, append([]string{"run", "null", "--store", st}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.args, err, c.want)
		}
	}
}

func TestRunNullSQLiteJSON(t *testing.T) {
	st := filepath.Join(t.TempDir(), "s.db")
	out, errOut, err := runCLI(t, "run", "null", "--engine", "sqlite", "--streams", "1,2", "--duration",
		"300ms", "--warmup", "0s",
		"--repeat", "1", "--store", st, "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var cells []null.Cell
	if err := json.Unmarshal([]byte(out), &cells); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, out)
	}
	if len(cells) != 2 || cells[0].Transport != null.InProcess || cells[1].Cell.Streams != 2 || cells[0].Cell.TPS <= 0 {
		t.Errorf("--json: %s", out)
	}
	if !strings.Contains(errOut, "calls/s") || !strings.Contains(errOut, "in-process") {
		t.Errorf("the table did not go to stderr with --json:\n%s", errOut)
	}
	r := onlyRun(t, st)
	stored, err := null.KindCell.All(r)
	if err != nil || len(stored) != 2 || r.Kind != null.RunKind {
		t.Errorf("stored run %s: %d cells (%v)", r.Kind, len(stored), err)
	}
	if want := "numalab run null --engine sqlite --streams 1,2 --duration 300ms " +
		"--warmup 0s --repeat 1"; r.Command != want {
		t.Errorf("stored command %q; want %q", r.Command, want)
	}
}

// TestRunNullPostgres runs a managed server's matrix over both
// transports, once, and checks the table names every pairing: measured,
// or unavailable with why.
func TestRunNullPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	st := filepath.Join(t.TempDir(), "s.db")
	out, errOut, err := runCLI(t, "run", "null", "--duration", "300ms", "--warmup", "100ms",
		"--repeat", "1", "--store", st)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	t.Logf("\n%s%s", errOut, out)
	r := onlyRun(t, st)
	m, err := null.KindMatrix.Last(r)
	if err != nil || m == nil || len(*m) != len(null.Pairings) {
		t.Fatalf("stored matrix %v (%v)", m, err)
	}
	cells, err := null.KindCell.All(r)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range *m {
		if p.Unavailable != "" {
			if !strings.Contains(errOut, p.String()) {
				t.Errorf("stderr does not say %q", p)
			}
			continue
		}
		for _, tr := range []string{"unix", "tcp"} {
			n++
			if !strings.Contains(out, " "+tr+" ") || !strings.Contains(out, " "+p.Name+" ") {
				t.Errorf("no %s %s row in\n%s", tr, p.Name, out)
			}
		}
	}
	if len(cells) != n {
		t.Errorf("%d cells stored; want %d", len(cells), n)
	}
}

// TestRunNullPointSelect runs the point-select call on a managed MariaDB
// server: the cell stores it, the table shows it, the stored command
// spells it, and the run's kind is its own.
func TestRunNullPointSelect(t *testing.T) {
	if err := mariaserver.Installed(); err != nil {
		t.Skipf("MariaDB is not installed (.ci/run installs Debian's mariadb-server as root): %v", err)
	}
	st := filepath.Join(t.TempDir(), "s.db")
	out, errOut, err := runCLI(t, "run", "null", "--engine", "mariadb", "--call", "point-select", "--transport",
		"unix", "--pairing", "same-cpu",
		"--duration", "300ms", "--warmup", "0s", "--repeat", "1", "--store", st)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	r := onlyRun(t, st)
	cells, err := null.KindCell.All(r)
	if err != nil || len(cells) != 1 || cells[0].Call != null.CallPointSelect || cells[0].Cell.Total.Count == 0 {
		t.Fatalf("stored %+v (%v); want one point-select cell with calls", cells, err)
	}
	if r.Kind != null.PointSelectKind {
		t.Errorf("stored a run of kind %s; want %s, apart from the null transaction's", r.Kind, null.PointSelectKind)
	}
	if !strings.Contains(out, " point-select ") {
		t.Errorf("the table does not show the call:\n%s", out)
	}
	if !strings.Contains(r.Command, " --call point-select ") {
		t.Errorf("stored command %q does not spell the call", r.Command)
	}
}

// TestRunNullMonitorPostgres runs --monitor's pairs on a user's
// PostgreSQL server (--dsn, --allow-settings), once at saturation and
// once at --monitor-load's default half capacity: a null-monitor run of
// monitor cells, two pairs a facility, with both analyses, printed and
// stored.
func TestRunNullMonitorPostgres(t *testing.T) {
	srv := pg.Server(t)
	st := filepath.Join(t.TempDir(), "s.db")
	out, errOut, err := runCLI(t, "run", "null", "--dsn", srv.DSN(), "--allow-settings", "--monitor",
		"log_all,track_io_timing", "--pairing", "same-cpu",
		"--duration", "200ms", "--warmup", "0s", "--repeat", "1", "--store", st)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	t.Logf("\n%s%s", errOut, out)
	r := onlyRun(t, st)
	cells, err := monitor.KindCell.All(r)
	if err != nil || r.Kind != monitor.NullRunKind || len(cells) != 8 {
		t.Fatalf("stored a %s run of %d monitor cells (%v); want a %s run of 8", r.Kind, len(cells), err, monitor.NullRunKind)
	}
	var got []string
	for _, c := range cells {
		got = append(got, fmt.Sprintf("%s %s paced %v", c.Facility, c.State(), c.Paced))
	}
	slices.Sort(got)
	want := []string{"log_all off paced false", "log_all off paced true", "log_all on paced false",
		"log_all on paced true",
		"track_io_timing off paced false", "track_io_timing off paced true", "track_io_timing on paced false",
		"track_io_timing on paced true"}
	if !slices.Equal(got, want) {
		t.Errorf("cells %v; want %v", got, want)
	}
	if an, err := monitor.KindAnalysis.Last(r); err != nil || an == nil || len(an.Overheads) != 2 {
		t.Errorf("stored analysis %+v (%v); want one overhead a facility", an, err)
	}
	if pa, err := monitor.KindPacedAnalysis.Last(r); err != nil || pa == nil || len(pa.Overheads) != 2 ||
		pa.Fraction != monitor.DefaultPacedLoad {
		t.Errorf("stored paced analysis %+v (%v); want one overhead a facility at %g of capacity",
			pa, err, monitor.DefaultPacedLoad)
	}
	if !strings.Contains(r.Command, " --monitor-load 0.5") {
		t.Errorf("stored command %q does not spell --monitor-load", r.Command)
	}
	for _, want := range []string{"null-monitor: 1 stream on cpus", "What each facility costs", "track_io_timing",
		"At a paced load (0.50 of capacity"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	if !strings.Contains(errOut, "--monitor: every cell runs select1 over unix, same-cpu") ||
		!strings.Contains(errOut, "set in numalab's own sessions only") {
		t.Errorf("stderr does not say what the cells run and where the settings go:\n%s", errOut)
	}
}
