package main

import (
	"cmp"
	"database/sql"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestFlagRanges: every numeric flag has a range checked at parse time,
// and all the flags out of range are named in one error; nothing runs.
func TestFlagRanges(t *testing.T) {
	st := filepath.Join(t.TempDir(), "s.db")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"eval", "--budget", "99999h", "--dir", t.TempDir()},
			[]string{`-budget: "99999h" is not valid: want a duration from 1s to 168h0m0s`}},
		{[]string{"eval", "--budget", "0s", "--dir", t.TempDir()}, []string{`-budget: "0s" is not valid`}},
		{[]string{"run", "oltp", "--store", st, "--data-node", "-5", "--repeat", "0", "--duration", "0s", "--warmup",
			"-1s", "--warehouses", "0", "--trace", "-1", "--streams-per-cpu", "-2"},
			[]string{`-data-node: "-5" is not valid: want a whole number from -1 to 1023`, `-repeat: "0" is not valid`,
				`-duration: "0s" is not valid`,
				`-warmup: "-1s" is not valid`, `-warehouses: "0" is not valid`, `-trace: "-1" is not valid`,
				`-streams-per-cpu: "-2" is not valid`}},
		{[]string{"run", "oltp", "--store", st, "--placement", ";;"},
			[]string{`-placement: ";;" names the empty selector (all CPUs) more than once`}},
		{[]string{"run", "report", "--store", st, "--duration", "0s", "--warmup", "2h", "--streams", "0", "--repeat", "0"},
			[]string{`-duration: "0s" is not valid`, `-warmup: "2h" is not valid`, `-streams: "0"`,
				`-repeat: "0" is not valid`}},
		{[]string{"model", "--local-ns", "1e308", "--remote-ns", "0.5", "--ghz", "1e300", "--sockets", "1,1000000",
			"--buffer-ns", "1e6"},
			[]string{`-local-ns: "1e+308" is not a plausible memory latency: want 1 to 10000 ns (--unchecked accepts it)`,
				`-remote-ns: "0.5" is not a plausible memory latency`,
				`-ghz: "1e+300" is not a plausible clock: want 0.1 to 10 GHz`,
				`-sockets: "1000000" is not a plausible socket count: want 1 to 64`,
				`-buffer-ns: "1e+06" is not a plausible extra latency`}},
		{[]string{"model", "--local-ns", "67", "--ghz-list", "3,40"}, []string{`-ghz-list: "40" is not a plausible clock`}},
	} {
		_, _, err := runCLI(t, tc.args...)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v\nwant it to say %q", tc.args, err, w)
			}
		}
	}
	if _, err := os.Stat(st); err == nil {
		t.Error("a refused command made the store")
	}
	// --unchecked lets an implausible machine through.
	out, _, err := runCLI(t, "model", "--unchecked", "--local-ns", "20000", "--ghz", "12", "--sockets", "1")
	if err != nil || !strings.Contains(out, "20000") {
		t.Errorf("model --unchecked: %v\n%s", err, out)
	}
}

// sqliteFile makes a small SQLite database that is not a numalab one.
func sqliteFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("create table t (x int)"); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDBEngineMismatch: a --db file of another engine is refused by its
// first bytes, naming the engine it is and the flag that fixes it, before
// any engine opens it (DuckDB would try to download its SQLite scanner);
// --db with PostgreSQL is refused, not ignored.
func TestDBEngineMismatch(t *testing.T) {
	lite := sqliteFile(t)
	before, _ := os.ReadFile(lite)
	st := filepath.Join(t.TempDir(), "s.db")
	want := `-db: "` + lite + `" is an SQLite database, not DuckDB: give --engine sqlite`
	for _, args := range [][]string{
		{"run", "oltp", "--engine", "duckdb", "--db", lite, "--store", st},
		{"run", "report", "--engine", "duckdb", "--db", lite, "--store", st},
		{"check", "--engine", "duckdb", "--db", lite},
		{"inspect", "--engine", "duckdb", "--db", lite},
	} {
		if _, _, err := runCLI(t, args...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: %v\nwant %q", args, err, want)
		}
	}
	for _, args := range [][]string{
		{"run", "oltp", "--engine", "postgres", "--db", "foo.db", "--store", st},
		{"check", "--engine", "postgres", "--dsn", "postgres://u@127.0.0.1:1/x", "--db", "foo.db"},
	} {
		if _, _, err := runCLI(t, args...); err == nil || !strings.Contains(err.Error(), "-db: ") ||
			!strings.Contains(err.Error(), "PostgreSQL and MariaDB take --dsn") {
			t.Errorf("%v: %v\nwant --db refused for PostgreSQL", args, err)
		}
	}
	if after, _ := os.ReadFile(lite); string(after) != string(before) {
		t.Error("the SQLite file was changed")
	}
	if _, err := os.Stat(st); err == nil {
		t.Error("a refused command made the store")
	}
}

// TestCheckRefusesUnfinishedLoad: check refuses a load that never
// finished, as run oltp does, instead of calling it consistent.
func TestCheckRefusesUnfinishedLoad(t *testing.T) {
	src, err := os.ReadFile(tpccDB(t))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "w1.db")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("DELETE FROM numalab_meta WHERE key = 'load_complete'"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out, _, err := runCLI(t, "check", "--db", path)
	if err == nil || strings.Contains(out, "consistent") ||
		!strings.Contains(err.Error(), "remove it and load again (numalab run oltp --warehouses 1") {
		t.Errorf("check of an unfinished load: %v, %q; want it refused with the command that loads one", err, out)
	}
}

// hostile are the values TestHostileFlags feeds each flag of a kind: a
// zero, a negative, a NaN, an absurdly large value, a wrong unit and a
// wrong type, in that order.
var hostile = map[string][6]string{
	"int":   {"0", "-3", "NaN", "1000000000000", "4KiB", "1.5"},
	"ints":  {"0", "-3", "NaN", "1000000000000", "4KiB", "1.5"},
	"dur":   {"0", "-3s", "NaN", "100000h", "3parsecs", "abc"},
	"size":  {"0", "-3GiB", "NaN", "1000EiB", "3parsecs", "abc"},
	"sizes": {"0", "-3GiB", "NaN", "1000EiB", "3parsecs", "abc"},
	"float": {"0", "-3", "NaN", "1e300", "3parsecs", "abc"},
}

// TestHostileFlags feeds every numeric, size and duration flag of the
// measuring commands each hostile value of its kind. A value the flag
// must refuse is refused at validation, naming the flag and the value; a
// value it may take (listed in ok) passes validation. Either way nothing
// runs: the store is in a directory that does not exist, which stops the
// command when it opens it, after every flag was checked, and nothing is
// made. Every flag with a value that --help lists is either here or named
// as not numeric, so a new flag cannot go untested.
func TestHostileFlags(t *testing.T) {
	notNumeric := map[string]bool{"arrivals": true, "db": true, "dsn": true, "engine": true, "f": true, "monitor": true,
		"placement": true, "store": true, "think-dist": true, "key": true, "method": true, "call": true, "pairing": true,
		"protocol": true, "transport": true, "query": true, "threshold": true, "curve-at": true, "path": true,
		"nodes": true, "pages": true}
	// Flags of every run command (pacing, --connect-timeout).
	common := map[string]string{"think": "dur", "rate": "float", "connect-timeout": "dur"}
	// with are the flags a flag is for, given beside it.
	with := map[string][]string{"monitor-load": {"--monitor", "trace"}, "knee-factor": {"--curve"},
		"neighbour-pairs": {"--neighbour"}}
	for _, c := range []struct {
		cmd   []string
		kinds map[string]string
		ok    map[string][]string // hostile values the flag takes
	}{
		{[]string{"run", "oltp"},
			map[string]string{"warehouses": "int", "data-node": "int", "duration": "dur", "warmup": "dur", "repeat": "int",
				"streams-per-cpu": "int", "trace": "int", "seed": "int", "streams": "ints", "knee-factor": "float",
				"monitor-load": "float", "neighbour-pairs": "int"},
			map[string][]string{"data-node": {"0"}, "warmup": {"0"}, "streams-per-cpu": {"0"}, "trace": {"0"},
				"seed": {"0", "-3", "1000000000000"}, "neighbour-pairs": {"0"},
				"think": {"0"}, "rate": {"0"}, "monitor-load": {"0"}, "knee-factor": {"0"}}}, // knee-factor 0: the default
		{[]string{"run", "insert"},
			map[string]string{"batch": "int", "max-rows": "int", "duration": "dur", "warmup": "dur", "repeat": "int",
				"wait-every": "dur", "seed": "int", "streams": "ints"},
			map[string][]string{"warmup": {"0"}, "seed": {"0", "-3", "1000000000000"}, "think": {"0"}, "rate": {"0"}}},
		{[]string{"run", "null"},
			map[string]string{"duration": "dur", "warmup": "dur", "repeat": "int", "streams": "ints", "monitor-load": "float"},
			map[string][]string{"warmup": {"0"}, "think": {"0"}, "rate": {"0"}, "monitor-load": {"0"}}},
		{[]string{"run", "report"}, map[string]string{"rows": "int", "rate": "int", "duration": "dur", "warmup": "dur",
			"data-node": "int", "seed": "int",
			"repeat": "int", "hog": "int", "streams": "ints", "dop": "ints", "arrival-rate": "float", "monitor-load": "float"},
			// --rate is the data's shape (rows per second of tran_begin), any positive one a shape.
			map[string][]string{"data-node": {"0"}, "warmup": {"0"}, "seed": {"0", "-3", "1000000000000"}, "hog": {"0"},
				"think": {"0"}, "arrival-rate": {"0"},
				"monitor-load": {"0"}, "rate": {"1000000000000"}}},
		{[]string{"run", "tpch"}, map[string]string{"sf": "float", "seed": "int", "repeats": "int", "duration": "dur",
			"warmup": "dur", "data-node": "int",
			"hog": "int", "streams": "ints", "dop": "ints"},
			map[string][]string{"seed": {"0", "-3", "1000000000000"}, "warmup": {"0"}, "data-node": {"0"}, "hog": {"0"},
				"think": {"0"}, "rate": {"0"},
				"streams": {"0"}}}, // --streams 0: no throughput test
		{[]string{"probe", "mem"}, map[string]string{"max": "size", "min": "size", "samples": "int", "window": "int",
			"repeats": "int", "per-doubling": "int"},
			map[string][]string{"max": {"0"}, "min": {"0"}}}, // 0: the default
		{[]string{"probe", "io"}, map[string]string{"size": "size", "span": "size", "duration": "dur", "seq-qd": "int",
			"mix-qd": "int", "mix-read": "int",
			"readers": "int", "seed": "int", "qd": "ints", "seq": "sizes"},
			map[string][]string{"mix-qd": {"0"}, "mix-read": {"0"}, "readers": {"0"}, "seed": {"0", "1000000000000"},
				"size": {"0"}, "span": {"0"}}}, // size, span 0: the default
	} {
		help, _, err := runCLI(t, append(c.cmd, "--help")...)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range valueFlags(help) {
			kind := cmp.Or(c.kinds[name], common[name])
			if kind == "" {
				if !notNumeric[name] {
					t.Errorf("%v --%s: a flag with a value that TestHostileFlags does not know: give its kind", c.cmd, name)
				}
				continue
			}
			for _, v := range hostile[kind] {
				missing := filepath.Join(t.TempDir(), "missing")
				args := append(append(slices.Clone(c.cmd), with[name]...), "--store",
					filepath.Join(missing, "s.db"), "--"+name+"="+v)
				_, stderr, err := runCLI(t, args...)
				msg := stderr
				if err != nil {
					msg = err.Error() + "\n" + stderr
				}
				stopped := strings.Contains(msg, `opening store "`+missing)
				switch {
				case slices.Contains(c.ok[name], v) && !stopped:
					t.Errorf("numalab %s: refused a value the flag takes, or did not stop at the store:\n%s",
						strings.Join(args, " "), msg)
				case !slices.Contains(c.ok[name], v) && (stopped || !strings.Contains(msg, "-"+name) || !namesValue(msg, v)):
					t.Errorf("numalab %s: want an error naming -%s and %q before anything runs, got:\n%s",
						strings.Join(args, " "), name, v, msg)
				}
				if _, err := os.Stat(missing); err == nil {
					t.Errorf("numalab %s --%s=%s made %s", strings.Join(c.cmd, " "), name, v, missing)
				}
			}
		}
	}
}

// namesValue says whether msg names v: as given, or as Go prints the
// number it reads (1e300 as 1e+300).
func namesValue(msg, v string) bool {
	if strings.Contains(msg, v) {
		return true
	}
	f, err := strconv.ParseFloat(v, 64)
	return err == nil && strings.Contains(msg, strconv.FormatFloat(f, 'g', -1, 64))
}

// valueFlags are the flags that --help lists with a value ("-name value").
func valueFlags(help string) []string {
	var names []string
	for _, line := range strings.Split(help, "\n") {
		f := strings.Fields(line)
		if strings.HasPrefix(line, "  -") && len(f) == 2 {
			names = append(names, strings.TrimPrefix(f[0], "-"))
		}
	}
	return names
}

// TestHogAbovePlacement: a --hog of more CPUs than the placement has is
// refused before anything runs, naming the flag, the value and the
// placement, rather than run on fewer CPUs and labelled with more.
func TestHogAbovePlacement(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("--hog 2 is out of --hog's range on one CPU")
	}
	st := filepath.Join(t.TempDir(), "s.db")
	want := `-hog: "2" is more than placement cpus=0 has: 2 busy threads need 2 CPUs, and there are 1 (0)`
	for _, cmd := range []string{"report", "tpch"} {
		_, _, err := runCLI(t, "run", cmd, "--store", st, "--db", filepath.Join(t.TempDir(), "d.db"), "--hog", "2",
			"--placement", "cpus=0")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("run %s --hog 2 --placement cpus=0: %v\nwant %q", cmd, err, want)
		}
	}
	if _, err := os.Stat(st); err == nil {
		t.Error("a refused command made the store")
	}
}
