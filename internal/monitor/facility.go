package monitor

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/sweep"
)

// Facility is one thing a user turns on to watch a database, and what on
// and off mean for it.
type Facility struct {
	Name string
	// Own says it is numalab's own instrument: no server setting.
	Own bool
	// On and Off say what a cell with it on and off runs, in words (for
	// --help and the docs).
	On, Off string
	// onSQL and offSQL are what each stream's session runs first
	// (PostgreSQL facilities).
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
	{Name: "pg_stat_statements",
		On:     "pg_stat_statements.track = top: every top-level statement counted in the shared hash table",
		Off:    "pg_stat_statements.track = none: the library stays loaded (unloading takes a restart), its hooks return at once",
		onSQL:  []string{"SET pg_stat_statements.track = 'top'"},
		offSQL: []string{"SET pg_stat_statements.track = 'none'"}},
	{Name: "auto_explain",
		On:     "LOAD 'auto_explain', auto_explain.log_min_duration = 0, log_nested_statements = on: the plan of every statement, the ones inside tpcc-ro's PL/pgSQL functions too, written to the server log",
		Off:    "auto_explain not loaded by the session; auto_explain.log_min_duration = -1 should the server load it",
		onSQL:  []string{"LOAD 'auto_explain'", "SET auto_explain.log_min_duration = 0", "SET auto_explain.log_nested_statements = on", "SET auto_explain.log_analyze = off"},
		offSQL: []string{"SET auto_explain.log_min_duration = -1"}},
	{Name: "auto_explain_analyze",
		On:     "auto_explain as above with log_analyze = on (log_timing on, its default): every statement runs instrumented, per-node timing included, and its measured plan is logged",
		Off:    "as auto_explain's off",
		onSQL:  []string{"LOAD 'auto_explain'", "SET auto_explain.log_min_duration = 0", "SET auto_explain.log_nested_statements = on", "SET auto_explain.log_analyze = on"},
		offSQL: []string{"SET auto_explain.log_min_duration = -1"}},
	{Name: "log_all",
		On:     "log_min_duration_statement = 0: every top-level statement and its duration written to the server log",
		Off:    "log_min_duration_statement = -1 (other logging settings stay the server's)",
		onSQL:  []string{"SET log_min_duration_statement = 0"},
		offSQL: []string{"SET log_min_duration_statement = -1"}},
	{Name: "track_io_timing",
		On:     "track_io_timing = on: a clock read around every block read and write",
		Off:    "track_io_timing = off",
		onSQL:  []string{"SET track_io_timing = on"},
		offSQL: []string{"SET track_io_timing = off"}},
	{Name: "trace", Own: true,
		On:  "the per-call trace: start, end, type, stream and outcome of up to --trace calls per stream (default " + strconv.Itoa(DefaultTrace) + "), 40 bytes each reserved before the cell",
		Off: "no trace (run oltp's default)",
		off: sweep.Switches{NoTrace: true}},
	{Name: "sysmon", Own: true,
		On:  "sysmon: /proc and /sys read at the window's start and end, hardware counters on every thread when the kernel allows them (run oltp's default)",
		Off: "no sysmon: no CPU, context-switch or disk figures and no disk-read check for the cell",
		off: sweep.Switches{NoSysmon: true, NoTrace: true}},
	{Name: "series", Own: true,
		On:  "the per-second throughput series: a slot per second counted per call (run oltp's default)",
		Off: "no per-second series",
		off: sweep.Switches{NoSeries: true, NoTrace: true}},
}

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
// postgres, and on a user's server only with AllowSettings.
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
			return nil, fmt.Errorf("-monitor: %s is named more than once", f.Name)
		}
		fs = append(fs, f)
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("-monitor: %s not a facility numalab knows: want some of %s", strings.Join(unknown, ", ")+map[bool]string{true: " is", false: " are"}[len(unknown) == 1], strings.Join(Names(), ","))
	}
	if len(fs) == 0 {
		return nil, fmt.Errorf("-monitor: no facility named: want some of %s", strings.Join(Names(), ","))
	}
	pg := PostgreSQL(fs)
	switch {
	case len(pg) > 0 && r.Engine != "postgres":
		return nil, fmt.Errorf("-monitor: %s %s PostgreSQL's: use --engine postgres (numalab's own, trace, sysmon and series, run on any engine)", strings.Join(pg, ", "), map[bool]string{true: "is", false: "are"}[len(pg) == 1])
	case len(pg) > 0 && r.DSN && !r.AllowSettings:
		return nil, fmt.Errorf("-monitor: %s would change settings on the server --dsn names, and numalab changes a user's server only when told to: add --allow-settings (numalab then SETs them in its own sessions only; see 'numalab run oltp --help'), or monitor numalab's managed server by leaving out --dsn", strings.Join(pg, ", "))
	}
	return fs, nil
}

// PostgreSQL names the facilities of fs that are PostgreSQL settings.
func PostgreSQL(fs []Facility) []string {
	var n []string
	for _, f := range fs {
		if !f.Own {
			n = append(n, f.Name)
		}
	}
	return n
}

// ManagedSettings are the settings numalab's managed server starts with
// for fs: pg_stat_statements preloaded, with track = none so that only
// its on cells track.
func ManagedSettings(fs []Facility) map[string]string {
	if !slices.ContainsFunc(fs, func(f Facility) bool { return f.Name == "pg_stat_statements" }) {
		return nil
	}
	return map[string]string{"shared_preload_libraries": "pg_stat_statements", "pg_stat_statements.track": "none"}
}

// Session is the SQL a stream's session runs first in a cell with f on
// or off; none for numalab's own instruments.
func (f Facility) Session(on bool) []string {
	if on {
		return f.onSQL
	}
	return f.offSQL
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
