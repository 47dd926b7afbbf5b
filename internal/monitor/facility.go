package monitor

import (
	"slices"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/setting"
	"github.com/numalab/numalab/internal/sweep"
)

// Facility is one thing a user turns on to watch a database, and what on
// and off mean for it.
type Facility struct {
	Name string
	// Own says it is numalab's own instrument: no server setting.
	Own bool
	// Engine is the server whose facility it is: "postgres" or
	// "mariadb" ("" for numalab's own).
	Engine string
	// Global is a MariaDB facility the managed server has on for every
	// session (performance_schema always, the logs by ManagedSettings): a
	// cell of another facility in the same run runs it off (CellSession).
	Global bool
	// On and Off say what a cell with it on and off runs, in words (for
	// --help and the docs).
	On, Off string
	// onSQL and offSQL are what each stream's session runs first
	// (the servers' facilities).
	onSQL, offSQL []string
	// off are the switches of a cell with it off (own instruments).
	off sweep.Switches
}

// DefaultTrace is how many calls per stream the trace facility records
// when --trace does not say.
const DefaultTrace = 100_000

// MinRepeat is the default number of repeats a side: the fewest whose
// ratio's interval leaves out the most extreme ratios (with 4 a side,
// stats.RatioOf's interval spans every ratio observed).
const MinRepeat = 5

// Facilities are the known facilities, in the order their cells run.
var Facilities = []Facility{
	{Name: "pg_stat_statements", Engine: "postgres",
		On: "pg_stat_statements.track = top: every top-level statement counted in the shared hash table",
		Off: "pg_stat_statements.track = none: the library stays loaded (unloading takes a restart), " +
			"its hooks return at once",
		onSQL:  []string{"SET pg_stat_statements.track = 'top'"},
		offSQL: []string{"SET pg_stat_statements.track = 'none'"}},
	{Name: "auto_explain", Engine: "postgres",
		On: "LOAD 'auto_explain', auto_explain.log_min_duration = 0, log_nested_statements = on: the plan of " +
			"every statement, the ones inside tpcc-ro's PL/pgSQL functions too, written to the server log",
		Off: "auto_explain not loaded by the session; auto_explain.log_min_duration = -1 should the server load it",
		onSQL: []string{"LOAD 'auto_explain'", "SET auto_explain.log_min_duration = 0",
			"SET auto_explain.log_nested_statements = on", "SET auto_explain.log_analyze = off"},
		offSQL: []string{"SET auto_explain.log_min_duration = -1"}},
	{Name: "auto_explain_analyze", Engine: "postgres",
		On: "auto_explain as above with log_analyze = on (log_timing on, its default): every statement runs " +
			"instrumented, per-node timing included, and its measured plan is logged",
		Off: "as auto_explain's off",
		onSQL: []string{"LOAD 'auto_explain'", "SET auto_explain.log_min_duration = 0",
			"SET auto_explain.log_nested_statements = on", "SET auto_explain.log_analyze = on"},
		offSQL: []string{"SET auto_explain.log_min_duration = -1"}},
	{Name: "log_all", Engine: "postgres",
		On:     "log_min_duration_statement = 0: every top-level statement and its duration written to the server log",
		Off:    "log_min_duration_statement = -1 (other logging settings stay the server's)",
		onSQL:  []string{"SET log_min_duration_statement = 0"},
		offSQL: []string{"SET log_min_duration_statement = -1"}},
	{Name: "track_io_timing", Engine: "postgres",
		On:     "track_io_timing = on: a clock read around every block read and write",
		Off:    "track_io_timing = off",
		onSQL:  []string{"SET track_io_timing = on"},
		offSQL: []string{"SET track_io_timing = off"}},
	{Name: "performance_schema", Engine: "mariadb", Global: true,
		On: "the session's server thread instrumented (performance_schema.threads.INSTRUMENTED = YES, " +
			"as setup_actors gives every new thread by default): the instruments and consumers the server enables, " +
			"on numalab's managed server MariaDB's defaults (statement digests, table I/O and locks, file I/O)",
		Off: "INSTRUMENTED = NO for the session's thread: nothing recorded for it (performance_schema itself " +
			"stays on: turning it off takes a restart, and numalab finds a connection's server thread there)",
		onSQL:  []string{myInstrumented + "'YES'" + myOwnThread},
		offSQL: []string{myInstrumented + "'NO'" + myOwnThread}},
	{Name: "general_log", Engine: "mariadb", Global: true,
		On: "sql_log_off = 0 with the server's general_log on: every statement the session receives (a tpcc-ro " +
			"transaction's CALL, not the statements inside its procedure) written to the general log file",
		Off:    "sql_log_off = 1: the session's statements not logged",
		onSQL:  []string{"SET SESSION sql_log_off = 0"},
		offSQL: []string{"SET SESSION sql_log_off = 1"}},
	{Name: "slow_log", Engine: "mariadb", Global: true,
		On: "slow_query_log = 1 and long_query_time = 0 in the session, with the server's slow_query_log on: " +
			"every statement (a CALL, not the statements inside) and its time, rows and lock time written to the slow log",
		Off: "slow_query_log = 0 in the session",
		onSQL: []string{"SET SESSION slow_query_log = 1", "SET SESSION long_query_time = 0",
			"SET SESSION log_slow_verbosity = ''", "SET SESSION log_slow_disabled_statements = 'sp'"},
		offSQL: []string{"SET SESSION slow_query_log = 0"}},
	{Name: "slow_log_explain", Engine: "mariadb", Global: true,
		On: "the slow log as slow_log with log_slow_verbosity = query_plan,explain and log_slow_disabled_statements " +
			"= '': every statement, those inside tpcc-ro's procedures too, logged with its plan's traits (full scan, " +
			"temporary table, filesort) and, for a top-level statement, its EXPLAIN (MariaDB's nearest to auto_explain; " +
			"a CALL has no EXPLAIN)",
		Off: "as slow_log's off",
		onSQL: []string{"SET SESSION slow_query_log = 1", "SET SESSION long_query_time = 0",
			"SET SESSION log_slow_verbosity = 'query_plan,explain'", "SET SESSION log_slow_disabled_statements = ''"},
		offSQL: []string{"SET SESSION slow_query_log = 0"}},
	{Name: "trace", Own: true,
		On: "the per-call trace: start, end, type, stream and outcome of up to --trace calls per stream (default " +
			strconv.Itoa(DefaultTrace) + "), 40 bytes each reserved before the cell",
		Off: "no trace (run oltp's default)",
		off: sweep.Switches{NoTrace: true}},
	{Name: "sysmon", Own: true,
		On: "sysmon: /proc and /sys read at the window's start and end, hardware counters on every thread when " +
			"the kernel allows them (run oltp's default)",
		Off: "no sysmon: no CPU, context-switch or disk figures and no disk-read check for the cell",
		off: sweep.Switches{NoSysmon: true, NoTrace: true}},
	{Name: "series", Own: true,
		On:  "the per-second throughput series: a slot per second counted per call (run oltp's default)",
		Off: "no per-second series",
		off: sweep.Switches{NoSeries: true, NoTrace: true}},
}

// The statement that instruments, or not, the session's own server thread.
const (
	myInstrumented = "UPDATE performance_schema.threads SET instrumented = "
	myOwnThread    = " WHERE processlist_id = connection_id()"
)

// Names are the known facilities' names.
func Names() []string {
	var n []string
	for _, f := range Facilities {
		n = append(n, f.Name)
	}
	return n
}

// Lookup is the facility of that name.
func Lookup(name string) (Facility, bool) {
	i := slices.IndexFunc(Facilities, func(f Facility) bool { return f.Name == name })
	if i < 0 {
		return Facility{}, false
	}
	return Facilities[i], true
}

// Request is what 'run oltp --monitor' asks for.
type Request struct {
	Names         []string // facility names, each once
	Engine        string
	DSN           bool // a user's server (--dsn), not numalab's managed one
	AllowSettings bool // --allow-settings
}

// Check validates a request and returns its facilities in the order
// given: every name known, each once; PostgreSQL's only on --engine
// postgres, MariaDB's only on --engine mariadb, and on a user's server
// only with AllowSettings.
func Check(r Request) ([]Facility, error) {
	var fs []Facility
	var unknown []string
	for _, n := range r.Names {
		f, ok := Lookup(strings.TrimSpace(n))
		switch {
		case !ok:
			unknown = append(unknown, strconv.Quote(n))
			continue
		case slices.ContainsFunc(fs, func(g Facility) bool { return g.Name == f.Name }):
			return nil, setting.Errorf("monitor", "%s is named more than once", f.Name)
		}
		fs = append(fs, f)
	}
	if len(unknown) > 0 {
		return nil, setting.Errorf("monitor", "%s not a facility numalab knows: want some of %s",
			strings.Join(unknown, ", ")+map[bool]string{true: " is", false: " are"}[len(unknown) == 1],
			strings.Join(Names(), ","))
	}
	if len(fs) == 0 {
		return nil, setting.Errorf("monitor", "no facility named: want some of %s", strings.Join(Names(), ","))
	}
	isAre := func(n []string) string { return map[bool]string{true: "is", false: "are"}[len(n) == 1] }
	for _, e := range engine.Specs() {
		if n := onEngine(fs, e.Name); len(n) > 0 && r.Engine != e.Name {
			return nil, setting.Errorf("monitor",
				"%s %s %s's: use --engine %s (numalab's own, trace, sysmon and series, run on any engine)", strings.Join(n, ", "),
				isAre(n), e.Title, e.Name)
		}
	}
	if srv := Server(fs); len(srv) > 0 && r.DSN && !r.AllowSettings {
		return nil, setting.Errorf("monitor", "%s would change settings on the server --dsn names, and numalab changes "+
			"a user's server only when told to: add --allow-settings (numalab then SETs them in its own sessions only; "+
			"see docs/monitoring.md), or monitor numalab's managed server by leaving out --dsn", strings.Join(srv, ", "))
	}
	return fs, nil
}

// Server names the facilities of fs that are server settings
// (PostgreSQL's or MariaDB's).
func Server(fs []Facility) []string {
	var n []string
	for _, f := range fs {
		if !f.Own {
			n = append(n, f.Name)
		}
	}
	return n
}

// onEngine names the facilities of fs that are engine's.
func onEngine(fs []Facility, engine string) []string {
	var n []string
	for _, f := range fs {
		if f.Engine == engine {
			n = append(n, f.Name)
		}
	}
	return n
}

// ManagedSettings are the settings numalab's managed server starts with
// for fs: on PostgreSQL pg_stat_statements preloaded, with track = none
// so that only its on cells track; on MariaDB the general log and the
// slow log on (a session switches them for itself: Session), written to
// files in the server's data directory, which goes with the server.
func ManagedSettings(fs []Facility) map[string]string {
	m := map[string]string{}
	for _, f := range fs {
		switch f.Name {
		case "pg_stat_statements":
			m["shared_preload_libraries"], m["pg_stat_statements.track"] = "pg_stat_statements", "none"
		case "general_log":
			m["general-log"], m["log-output"] = "ON", "FILE"
		case "slow_log", "slow_log_explain":
			m["slow-query-log"], m["log-output"] = "ON", "FILE"
		}
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// Session is the SQL a stream's session runs first in a cell with f on
// or off; none for numalab's own instruments.
func (f Facility) Session(on bool) []string {
	if on {
		return f.onSQL
	}
	return f.offSQL
}

// CellSession is the SQL a stream's session runs first in a cell of f,
// on or off, in a run of the facilities fs: f's own statements, after
// the off statements of fs's other Global facilities (the managed
// MariaDB server has them on for every session), so that a cell measures
// f alone.
func CellSession(fs []Facility, f Facility, on bool) []string {
	var out []string
	done := map[string]bool{}
	for _, g := range fs {
		if g.Global && g.Name != f.Name {
			for _, q := range g.offSQL {
				if !done[q] {
					done[q] = true
					out = append(out, q)
				}
			}
		}
	}
	return append(out, f.Session(on)...)
}

// Switches are numalab's instruments in a cell of f on or off: the
// trace off except in the trace facility's on cells, the rest of the
// instruments on unless the cell is f's off cell.
func (f Facility) Switches(on bool) sweep.Switches {
	switch {
	case !f.Own || (on && f.Name != "trace"):
		return sweep.Switches{NoTrace: true}
	case on:
		return sweep.Switches{}
	}
	return f.off
}
