package monitor

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

func facilities(t *testing.T, names ...string) []Facility {
	t.Helper()
	fs, err := Check(Request{Names: names, Engine: "postgres"})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestPlanInterleaved: every facility's cells come in off/on pairs, one
// of each, the pair's order alternating; repeats are the outer loop.
func TestPlanInterleaved(t *testing.T) {
	fs := facilities(t, "pg_stat_statements", "log_all", "series")
	template := sweep.Cell{Point: drive.Point{Streams: 2, Placement: "cpus=0"}, DataNode: -1, DOP: 1}
	cells, slots := Plan(template, fs, 5)
	if len(cells) != 30 || len(slots) != 30 {
		t.Fatalf("%d cells, %d slots; want 3 facilities × 5 repeats × 2", len(cells), len(slots))
	}
	offFirst := map[string]int{}
	for i := 0; i < len(slots); i += 2 {
		a, b := slots[i], slots[i+1]
		if a.Facility != b.Facility || a.On == b.On || a.Repeat != b.Repeat {
			t.Fatalf("cells %d and %d: %+v, %+v; want one facility off and on", i, i+1, a, b)
		}
		if want := fs[(i/2)%3].Name; a.Facility != want || a.Repeat != i/6 {
			t.Errorf("cell %d: %s in repeat %d; want %s in repeat %d", i, a.Facility, a.Repeat, want, i/6)
		}
		if !a.On {
			offFirst[a.Facility]++
		}
	}
	for _, f := range fs {
		if n := offFirst[f.Name]; n != 2 && n != 3 {
			t.Errorf("%s runs off first in %d of 5 pairs; want the order to alternate", f.Name, n)
		}
	}
	for i, c := range cells {
		if c.Index != i || c.Repeat != slots[i].Repeat || c.Streams != 2 || c.Placement != "cpus=0" {
			t.Errorf("cell %d: index %d, repeat %d, %d streams on %q", i, c.Index, c.Repeat, c.Streams, c.Placement)
		}
	}
}

// TestSwitches: the trace only in the trace facility's on cells; sysmon
// and the series off only in their own off cells.
func TestSwitches(t *testing.T) {
	fs := facilities(t, "log_all", "trace", "sysmon", "series")
	cells, slots := Plan(sweep.Cell{}, fs, 1)
	sw := Switch(slots)
	for i, c := range cells {
		s, got := slots[i], sw(c)
		want := sweep.Switches{NoTrace: !(s.Facility == "trace" && s.On),
			NoSysmon: s.Facility == "sysmon" && !s.On, NoSeries: s.Facility == "series" && !s.On}
		if got != want {
			t.Errorf("%s %s: %+v, want %+v", s.Facility, s.State(), got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		r    Request
		want string // in the error; "" = accepted
	}{
		{Request{Names: []string{"pg_stat_statements", "bogus", "x"}, Engine: "postgres"}, `"bogus", "x" are not a facility numalab knows: want some of pg_stat_statements,auto_explain,auto_explain_analyze,log_all,track_io_timing,performance_schema,general_log,slow_log,slow_log_explain,trace,sysmon,series`},
		{Request{Names: []string{"general_log", "log_all"}, Engine: "mariadb"},
			"log_all is PostgreSQL's: use --engine postgres"},
		{Request{Names: []string{"slow_log", "general_log"}, Engine: "postgres"},
			"slow_log, general_log are MariaDB's: use --engine mariadb"},
		{Request{Names: []string{"slow_log"}, Engine: "mariadb", DSN: true}, "add --allow-settings"},
		{Request{Names: []string{"slow_log_explain", "performance_schema", "sysmon"}, Engine: "mariadb"}, ""},
		{Request{Names: []string{"log_all", "log_all"}, Engine: "postgres"}, "log_all is named more than once"},
		{Request{Names: []string{"track_io_timing"}, Engine: "sqlite"},
			"track_io_timing is PostgreSQL's: use --engine postgres"},
		{Request{Names: []string{"track_io_timing"}, Engine: "postgres", DSN: true}, "add --allow-settings"},
		{Request{Names: []string{"track_io_timing"}, Engine: "postgres", DSN: true, AllowSettings: true}, ""},
		{Request{Names: []string{"trace", "sysmon", "series"}, Engine: "sqlite"}, ""},
		{Request{Names: []string{"sysmon"}, Engine: "postgres", DSN: true}, ""}, // nothing set on the server
	} {
		_, err := Check(c.r)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.r, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: error %v; want it to say %q", c.r, err, c.want)
		}
	}
}

// TestSessions: every PostgreSQL facility sets something on and off;
// numalab's own set nothing on the server; the managed server preloads
// pg_stat_statements only when asked, not tracking between cells.
func TestSessions(t *testing.T) {
	for _, f := range Facilities {
		if f.Own != (len(f.Session(true)) == 0) || f.Own != (len(f.Session(false)) == 0) || f.On == "" || f.Off == "" {
			t.Errorf("%s: own %v, on %q, off %q", f.Name, f.Own, f.Session(true), f.Session(false))
		}
	}
	if m := ManagedSettings(facilities(t, "log_all")); m != nil {
		t.Errorf("managed settings for log_all: %v, want none", m)
	}
	m := ManagedSettings(facilities(t, "log_all", "pg_stat_statements"))
	if m["shared_preload_libraries"] != "pg_stat_statements" || m["pg_stat_statements.track"] != "none" {
		t.Errorf("managed settings for pg_stat_statements: %v", m)
	}
	fs, err := Check(Request{Names: []string{"general_log", "slow_log_explain", "performance_schema"}, Engine: "mariadb"})
	if err != nil {
		t.Fatal(err)
	}
	if m := ManagedSettings(fs); m["general-log"] != "ON" || m["slow-query-log"] != "ON" ||
		m["log-output"] != "FILE" || len(m) != 3 {
		t.Errorf("managed MariaDB settings for general_log, slow_log_explain: %v; want both logs on, to files", m)
	}
	if got := CellSession(fs, fs[2], false); strings.Join(got, "; ") !=
		"SET SESSION sql_log_off = 1; SET SESSION slow_query_log = 0; "+myInstrumented+"'NO'"+myOwnThread {
		t.Errorf("performance_schema's off cell runs %q; want the logs off, then its own off", got)
	}
	if got := CellSession(fs, fs[0], true); strings.Join(got, "; ") != "SET SESSION slow_query_log = 0; "+myInstrumented+
		"'NO'"+myOwnThread+"; SET SESSION sql_log_off = 0" {
		t.Errorf("general_log's on cell runs %q; want the slow log and performance_schema off, then the general log on", got)
	}
	if lines := Changes(facilities(t, "sysmon"), true); lines != nil {
		t.Errorf("changes for sysmon: %q, want none", lines)
	}
	lines := Changes(facilities(t, "log_all"), true)
	if len(lines) != 2 || !strings.Contains(lines[0], "SET log_min_duration_statement = 0") ||
		!strings.Contains(lines[1], "killed numalab leaves no setting") {
		t.Errorf("changes for log_all on a --dsn: %q", lines)
	}
}

// TestAnalyze: by hand, a facility whose on cells run at 0.9 of its off
// cells costs 10% and says so; one whose sides overlap cannot tell; a cut
// cell is left out.
func TestAnalyze(t *testing.T) {
	var cells []Cell
	add := func(f string, on, cut bool, tps float64) {
		n := int64(tps)
		cells = append(cells, Cell{Slot: Slot{Facility: f, On: on},
			Cell: result.Cell{Streams: 1, TPS: tps, Total: result.TxStats{Count: n}, Interrupted: cut}})
	}
	for i, x := range []float64{1000, 1010, 1020, 1030, 1040} {
		add("log_all", false, false, x)
		add("log_all", true, false, 0.9*x)
		add("series", false, false, x)
		add("series", true, false, []float64{1030, 1000, 1040, 1010, 1020}[i])
	}
	add("series", true, true, 10)
	add("series", false, false, 0) // completed no call
	a := Analyze(cells)
	if len(a.Overheads) != 2 || a.Streams != 1 {
		t.Fatalf("analysis %+v", a)
	}
	la, se := a.Overheads[0], a.Overheads[1]
	if la.Facility != "log_all" || la.Verdict != Costs || math.Abs(la.Ratio.Estimate-0.9) > 1e-9 ||
		la.Off.N != 5 || la.On.N != 5 {
		t.Errorf("log_all: %+v", la)
	}
	if !strings.HasPrefix(la.Cost(), "costs 10.0% [") {
		t.Errorf("log_all cost %q", la.Cost())
	}
	if se.Facility != "series" || se.Verdict != CannotTell || se.On.N != 5 || se.Ratio.Estimate != 1 {
		t.Errorf("series: %+v (the cut cell must be left out)", se)
	}
	if se.EmptyOff != 1 || se.EmptyOn != 0 || se.Off.N != 5 {
		t.Errorf("series: %d off and %d on cells without a call, %d off cells counted; want 1, 0, 5",
			se.EmptyOff, se.EmptyOn, se.Off.N)
	}
	if !strings.HasPrefix(se.Cost(), "cannot tell (0.0% [") ||
		!strings.HasSuffix(se.Cost(), "; left out: cells that completed no call, 1 off, 0 on") {
		t.Errorf("series cost %q", se.Cost())
	}
}

// fake is a workload whose End stores an ordinary cell and a note.
type fake struct{ begun []int }

func (f *fake) Describe() sweep.Description { return sweep.Description{Workload: "fake"} }
func (f *fake) Types() []string             { return []string{"t"} }
func (f *fake) Open(context.Context, sweep.Teller) ([]result.Entry, error) {
	return nil, nil
}
func (f *fake) Prewarm(context.Context, int, sweep.Teller) ([]result.Entry, error) { return nil, nil }
func (f *fake) Begin(_ context.Context, c sweep.Cell) error {
	f.begun = append(f.begun, c.Index)
	return nil
}
func (f *fake) Stream(context.Context, sweep.Cell, int) (drive.Stream, error) { return nil, nil }
func (f *fake) End(_ context.Context, _ sweep.Cell, m *result.Cell, _ error) sweep.Outcome[*result.Cell] {
	return sweep.Outcome[*result.Cell]{Item: m,
		Store: []result.Entry{result.KindCell.Of(*m), result.Kind[int]("other").Of(1)}}
}
func (f *fake) Close() error { return nil }

// TestWrap: each cell's session SQL is set before the inner Begin, and
// its cell is stored as a monitor.Cell, never as an ordinary one.
func TestWrap(t *testing.T) {
	fs := facilities(t, "track_io_timing", "sysmon")
	cells, slots := Plan(sweep.Cell{}, fs, 1)
	inner := &fake{}
	var sessions [][]string
	w := Wrap(Inner[result.Cell]{Sweep: inner, Session: func(s []string) { sessions = append(sessions, s) },
		Kind: result.KindCell,
		Cell: func(c *result.Cell) *result.Cell { return c }}, slots)
	for _, c := range cells {
		if err := w.Begin(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		o := w.End(context.Background(), c, &result.Cell{Index: c.Index, TPS: 1, Total: result.TxStats{Count: 1}}, nil)
		if len(o.Store) != 2 || o.Store[0].Kind() != string(KindCell) || o.Store[1].Kind() != "other" ||
			o.Item.Slot != slots[c.Index] {
			t.Errorf("cell %d: stored %v, item %+v", c.Index, o.Store, o.Item)
		}
	}
	want := []string{"SET track_io_timing = off", "SET track_io_timing = on", "", ""}
	for i, s := range sessions {
		if strings.Join(s, ";") != want[i] {
			t.Errorf("cell %d's session %q, want %q", i, s, want[i])
		}
	}
	// A cell that completed no call is stored, noted, and does not end
	// the run; one whose calls failed ends it as the inner workload says.
	o := w.End(context.Background(), cells[0], &result.Cell{Measured: time.Second}, nil)
	if len(o.Store) != 1 || o.Stop != nil || len(o.Notes) != 1 ||
		!strings.Contains(o.Notes[0], "cell 0 (track_io_timing off) completed no call in its 1s window") {
		t.Errorf("empty cell: stored %v, stop %v, notes %q", o.Store, o.Stop, o.Notes)
	}
	if len(inner.begun) != 4 {
		t.Errorf("inner Begin for %v", inner.begun)
	}
	if err := w.Begin(context.Background(), sweep.Cell{Point: drive.Point{Index: 9}}); err == nil {
		t.Error("a cell outside the plan began")
	}
}
