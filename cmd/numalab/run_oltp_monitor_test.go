package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/monitor"
	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/pgserver/pgtest"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
)

// serverSettings are the facilities' settings as a new session on dsn
// sees them, with their sources, and what postgresql.auto.conf holds.
func serverSettings(t *testing.T, dsn string) string {
	t.Helper()
	ctx := context.Background()
	c, err := engine.ConnectPG(ctx, dsn, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var s string
	err = c.QueryRow(ctx, `SELECT string_agg(name || '=' || setting || ' (' || source || ')', ', ' ORDER BY name) ||
			' | auto.conf: ' || coalesce((SELECT string_agg(name || '=' || setting, ', ') FROM pg_file_settings WHERE sourcefile LIKE '%postgresql.auto.conf'), '')
		FROM pg_settings WHERE name IN ('pg_stat_statements.track', 'log_min_duration_statement', 'track_io_timing',
			'session_preload_libraries', 'shared_preload_libraries', 'auto_explain.log_min_duration')`).Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRunOLTPMonitorRefusals: an unknown facility, a PostgreSQL facility
// on SQLite, a --dsn without --allow-settings, and pg_stat_statements on
// a user's server that has not preloaded it are refused before anything
// is stored or set.
func TestRunOLTPMonitorRefusals(t *testing.T) {
	dir := t.TempDir()
	st := filepath.Join(dir, "s.db")
	srv := pg.Server(t) // plays a user's server without pg_stat_statements
	before := serverSettings(t, srv.DSN())
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--engine", "postgres", "--monitor", "log_all,statement_log"},
			[]string{`"statement_log" is not a facility numalab knows: want some of pg_stat_statements,auto_explain,auto_explain_analyze,log_all,track_io_timing,performance_schema,general_log,slow_log,slow_log_explain,trace,sysmon,series`}},
		{[]string{"--monitor", "track_io_timing"}, []string{"track_io_timing is PostgreSQL's: use --engine postgres"}},
		{[]string{"--engine", "postgres", "--dsn", srv.DSN(), "--monitor", "log_all,track_io_timing"},
			[]string{"log_all, track_io_timing would change settings on the server --dsn names", "add --allow-settings"}},
		{[]string{"--engine", "postgres", "--dsn", srv.DSN(), "--allow-settings", "--monitor", "log_all,pg_stat_statements"},
			[]string{"pg_stat_statements is not loaded", "shared_preload_libraries", "numalab never restarts a user's server",
				"ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'"}},
		{[]string{"--allow-settings"}, []string{"-allow-settings: is for --monitor"}},
	} {
		_, _, err := runCLI(t,
			append([]string{"run", "oltp", "--store", st, "--streams", "1", "--duration", "100ms"}, c.args...)...)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %v\nwant it to say %q", c.args, err, w)
			}
		}
	}
	if _, err := os.Stat(st); !os.IsNotExist(err) {
		t.Errorf("a refused run made the store %s (%v)", st, err)
	}
	if after := serverSettings(t, srv.DSN()); after != before {
		t.Errorf("a refused run changed the server's settings:\nbefore %s\nafter  %s", before, after)
	}
}

// TestRunOLTPMonitorDSN: on a server that plays a user's, with
// pg_stat_statements preloaded and not tracking, every PostgreSQL
// facility is switched per cell in interleaved pairs: the on cells'
// calls, and only theirs (within their warm-ups), reach the log and
// pg_stat_statements; the server's settings are as before; the run, its
// cells and its analysis are stored and printed as JSON.
func TestRunOLTPMonitorDSN(t *testing.T) {
	srv := pgtest.New(pgserver.Config{SharedBuffers: 32 << 20,
		Settings: map[string]string{"shared_preload_libraries": "pg_stat_statements",
			"pg_stat_statements.track": "none"}}).Server(t)
	t.Cleanup(func() { srv.Stop() })
	before := serverSettings(t, srv.DSN())
	st := filepath.Join(t.TempDir(), "s.db")
	out, stderr, err := runCLI(t, "run", "oltp", "--engine", "postgres", "--dsn", srv.DSN(),
		"--allow-settings", "--store", st,
		"--streams", "1", "--duration", "500ms", "--warmup", "0s", "--repeat", "2", "--json",
		"--monitor", "pg_stat_statements,auto_explain,log_all,track_io_timing", "--monitor-load", "0")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "--monitor: log_all: on, each stream's session runs SET log_min_duration_statement = 0; "+
		"off, SET log_min_duration_statement = -1") ||
		!strings.Contains(stderr, "killed numalab leaves no setting behind") {
		t.Errorf("stderr does not say what is set and how it is undone:\n%s", stderr)
	}
	if after := serverSettings(t, srv.DSN()); after != before {
		t.Errorf("the server's settings changed:\nbefore %s\nafter  %s", before, after)
	}
	var got struct {
		Cells    []monitor.Cell   `json:"cells"`
		Analysis monitor.Analysis `json:"analysis"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if len(got.Cells) != 16 || len(got.Analysis.Overheads) != 4 {
		t.Fatalf("%d cells, %d overheads; want 4 facilities × 2 repeats × off and on",
			len(got.Cells), len(got.Analysis.Overheads))
	}
	onCalls := map[string]int64{}
	empty := 0
	for i := 0; i < len(got.Cells); i += 2 {
		a, b := got.Cells[i], got.Cells[i+1]
		if a.Facility != b.Facility || a.On == b.On {
			t.Errorf("cells %d and %d: %s %s, %s %s; want a pair", i, i+1, a.Facility, a.State(), b.Facility, b.State())
		}
		for _, c := range []monitor.Cell{a, b} {
			if c.Cell.Total.Count == 0 && c.Cell.Total.Errors == 0 {
				// Known, not yet understood (see the null test): now and
				// then a PostgreSQL cell completes no call in its window.
				t.Logf("KNOWN ISSUE: cell %d completed no call in its window", c.Cell.Index)
				empty++
			} else if c.Cell.Total.Errors != 0 {
				t.Errorf("cell %d: %d calls, %d errors", c.Cell.Index, c.Cell.Total.Count, c.Cell.Total.Errors)
			}
			if c.On {
				onCalls[c.Facility] += c.Cell.Total.Count
			}
		}
	}
	if empty > 1 {
		t.Errorf("%d cells completed no call; one is tolerated", empty)
	}
	for _, o := range got.Analysis.Overheads {
		if o.Off.N+o.EmptyOff != 2 || o.On.N+o.EmptyOn != 2 || o.Verdict != monitor.CannotTell {
			t.Errorf("%s: %+v; want 2 cells a side, too few for an interval", o.Facility, o)
		}
	}

	// The log: an execute line per log_all on call, a plan per statement
	// of auto_explain's on calls (two to five per call), nothing from
	// off cells: the on cells' measured calls and the one call each (one
	// stream, no warm-up) in flight when its window closed. (With a
	// warm-up its calls are logged too, and they are not a fixed share:
	// a loaded machine slowed one window and not its warm-up, 922 lines
	// for 515 calls.)
	logb, err := os.ReadFile(filepath.Join(srv.Dir, "postgres.log"))
	if err != nil {
		t.Fatal(err)
	}
	durations := int64(strings.Count(string(logb), " ms  execute numalab_"))
	plans := int64(strings.Count(string(logb), " ms  plan:"))
	const inFlight = 2 // one a cell, two on cells a facility
	if n := onCalls["log_all"]; durations < n || durations > n+inFlight {
		t.Errorf("%d statements logged with their duration; log_all's on cells made %d calls", durations, n)
	}
	if n := onCalls["auto_explain"]; plans < 2*n || plans > 5*(n+inFlight) {
		t.Errorf("%d plans logged; auto_explain's on cells made %d calls", plans, n)
	}
	ctx := context.Background()
	c, err := engine.ConnectPG(ctx, srv.DSN(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var tracked int64
	if _, err := c.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, `SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements WHERE query LIKE '%order_status%' OR query LIKE '%stock_level%'`).Scan(&tracked); err != nil {
		t.Fatal(err)
	}
	if n := onCalls["pg_stat_statements"]; tracked < n || tracked > n+inFlight {
		t.Errorf("pg_stat_statements counted %d calls; its on cells made %d", tracked, n)
	}

	r := onlyRun(t, st)
	checkStored(t, r)
	cells, err := monitor.KindCell.All(r)
	if err != nil || len(cells) != 16 {
		t.Errorf("stored %d monitor cells (%v), want 16", len(cells), err)
	}
	if plain, _ := result.KindCell.All(r); len(plain) != 0 {
		t.Errorf("stored %d ordinary OLTP cells, want none", len(plain))
	}
	if an, err := monitor.KindAnalysis.Last(r); err != nil || an == nil || len(an.Overheads) != 4 {
		t.Errorf("stored analysis %+v, %v", an, err)
	}
	if r.Kind != monitor.RunKind || r.Status != result.StatusComplete ||
		!strings.Contains(r.Command, "--monitor pg_stat_statements,auto_explain,log_all,track_io_timing") {
		t.Errorf("run %s %s %q", r.Kind, r.Status, r.Command)
	}
}

// TestRunOLTPMonitorManaged: numalab's managed server starts with
// pg_stat_statements preloaded, and numalab's own instruments are off in
// their off cells only: the trace only in its on cell, sysmon's figures
// missing only from its off cell, the series only from its.
func TestRunOLTPMonitorManaged(t *testing.T) {
	st := filepath.Join(t.TempDir(), "s.db")
	_, stderr, err := runCLI(t, "run", "oltp", "--engine", "postgres", "--store", st, "--streams", "1", "--duration",
		"500ms", "--warmup", "100ms",
		"--repeat", "1", "--trace", "20", "--monitor", "pg_stat_statements,auto_explain_analyze,trace,sysmon,series",
		"--monitor-load", "0")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "on numalab's managed server, which it stops and removes afterwards") {
		t.Errorf("stderr does not say where the settings go:\n%s", stderr)
	}
	r := onlyRun(t, st)
	cells, err := monitor.KindCell.All(r)
	if err != nil || len(cells) != 10 {
		t.Fatalf("stored %d cells (%v), want 10", len(cells), err)
	}
	for _, c := range cells {
		if c.Cell.Total.Count == 0 {
			t.Logf("KNOWN ISSUE: cell %d completed no call in its window", c.Cell.Index)
			continue
		}
		trace, sysmon, series := len(c.Cell.Trace) > 0, c.Cell.Usage != nil, c.Cell.PerSecond != nil
		if trace != (c.Facility == "trace" && c.On) || sysmon != (c.Facility != "sysmon" || c.On) ||
			series != (c.Facility != "series" || c.On) {
			t.Errorf("cell %d, %s %s: trace %v, sysmon %v, series %v",
				c.Cell.Index, c.Facility, c.State(), trace, sysmon, series)
		}
		if trace && len(c.Cell.Trace) > 20 {
			t.Errorf("cell %d traced %d calls, want at most --trace 20", c.Cell.Index, len(c.Cell.Trace))
		}
	}
}

// TestRunOLTPMonitorInterrupted: Ctrl-C keeps the cells measured, the cut
// one marked and left out of the analysis, which is stored all the same.
func TestRunOLTPMonitorInterrupted(t *testing.T) {
	db := tpccDB(t)
	st := filepath.Join(t.TempDir(), "s.db")
	stored := func() int {
		s, err := store.OpenReadOnly(st)
		if err != nil {
			return 0
		}
		defer s.Close()
		r, err := s.Get(1)
		if err != nil {
			return 0
		}
		cells, _ := monitor.KindCell.All(r)
		return len(cells)
	}
	// Ctrl-C comes 300 ms after the second cell is stored, so the third
	// (1 s long) is cut short however slow the machine is.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
			if stored() >= 2 {
				time.Sleep(300 * time.Millisecond)
				cancel()
			}
		}
	}()
	var out, errb strings.Builder
	err := runChecked(t,
		ctx, []string{"run", "oltp", "--db", db, "--store", st, "--streams", "1", "--duration", "1s", "--warmup", "0s",
			"--monitor", "sysmon,series", "--monitor-load", "0"}, &out, &errb)
	if err == nil {
		t.Fatal("an interrupted run returned no error")
	}
	r := storedRun(t, st, 1)
	cells, _ := monitor.KindCell.All(r)
	an, aerr := monitor.KindAnalysis.Last(r)
	if r.Status != result.StatusInterrupted || len(cells) != 3 || !cells[2].Cell.Interrupted || cells[1].Cell.Interrupted {
		t.Fatalf("status %s, %d cells; want interrupted, 2 full cells and a cut one\n%s", r.Status, len(cells), errb.String())
	}
	if aerr != nil || an == nil || len(an.Overheads) != 1 || an.Overheads[0].Off.N != 1 || an.Overheads[0].On.N != 1 {
		t.Errorf("stored analysis %+v (%v); want sysmon's pair, the cut cell left out", an, aerr)
	}
	if !strings.Contains(out.String(), "sysmon") {
		t.Errorf("the table was not printed:\n%s", out.String())
	}
}
