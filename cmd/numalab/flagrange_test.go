package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"runtime"
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
		{[]string{"eval", "--budget", "99999h", "--dir", t.TempDir()}, []string{`-budget: "99999h" is not valid: want a duration from 1s to 168h0m0s`}},
		{[]string{"eval", "--budget", "0s", "--dir", t.TempDir()}, []string{`-budget: "0s" is not valid`}},
		{[]string{"run", "oltp", "--store", st, "--data-node", "-5", "--repeat", "0", "--duration", "0s", "--warmup", "-1s", "--warehouses", "0", "--trace", "-1", "--streams-per-cpu", "-2"},
			[]string{`-data-node: "-5" is not valid: want a whole number from -1 to 1023`, `-repeat: "0" is not valid`, `-duration: "0s" is not valid`,
				`-warmup: "-1s" is not valid`, `-warehouses: "0" is not valid`, `-trace: "-1" is not valid`, `-streams-per-cpu: "-2" is not valid`}},
		{[]string{"run", "oltp", "--store", st, "--placement", ";;"}, []string{`-placement: ";;" names the empty selector (all CPUs) more than once`}},
		{[]string{"run", "report", "--store", st, "--duration", "0s", "--warmup", "2h", "--streams", "0", "--repeat", "0"}, []string{`-duration: "0s" is not valid`, `-warmup: "2h" is not valid`, `-streams: "0"`, `-repeat: "0" is not valid`}},
		{[]string{"model", "--local-ns", "1e308", "--remote-ns", "0.5", "--ghz", "1e300", "--sockets", "1,1000000", "--buffer-ns", "1e6"},
			[]string{`-local-ns: "1e+308" is not a plausible memory latency: want 1 to 10000 ns (--unchecked accepts it)`, `-remote-ns: "0.5" is not a plausible memory latency`,
				`-ghz: "1e+300" is not a plausible clock: want 0.1 to 10 GHz`, `-sockets: "1000000" is not a plausible socket count: want 1 to 64`, `-buffer-ns: "1e+06" is not a plausible extra latency`}},
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
		if _, _, err := runCLI(t, args...); err == nil || !strings.Contains(err.Error(), "-db: ") || !strings.Contains(err.Error(), "PostgreSQL and MariaDB take --dsn") {
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
	if err == nil || strings.Contains(out, "consistent") || !strings.Contains(err.Error(), "remove it and load again (numalab run oltp --warehouses 1") {
		t.Errorf("check of an unfinished load: %v, %q; want it refused with the command that loads one", err, out)
	}
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
		_, _, err := runCLI(t, "run", cmd, "--store", st, "--db", filepath.Join(t.TempDir(), "d.db"), "--hog", "2", "--placement", "cpus=0")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("run %s --hog 2 --placement cpus=0: %v\nwant %q", cmd, err, want)
		}
	}
	if _, err := os.Stat(st); err == nil {
		t.Error("a refused command made the store")
	}
}
