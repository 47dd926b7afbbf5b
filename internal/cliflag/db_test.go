package cliflag

import (
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/engine"
)

// TestEngineSettings checks --engine, --dsn and --db against every engine
// of the registry: a DSN only for a server, a file only for an embedded
// engine, and an unknown engine refused with the registry's list.
func TestEngineSettings(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // "" for none refused
	}{
		{[]string{"--engine", "oracle"}, `-engine: "oracle" is not an engine: want ` + engine.List(nil)},
		{[]string{"--engine", "sqlite", "--dsn", "x"},
			"-dsn: a DSN is for --engine postgres or mariadb (the sqlite data is a file: use --db)"},
		{[]string{"--engine", "duckdb", "--db", "t.duckdb"}, ""},
		{[]string{"--engine", "mariadb", "--db", "t.db"}, ErrPostgresFile.Error()},
		{[]string{"--engine", "postgres", "--dsn", "host=/tmp"}, ""},
	} {
		name, dsn, db := "sqlite", "", ""
		var timeout time.Duration
		ss := EngineSettings(&name, &dsn, &timeout, &db, "", "t.db")
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		ss.Define(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		bad := ss.Apply(fs, true)
		switch {
		case c.want == "" && len(bad) > 0:
			t.Errorf("%q: refused %v", c.args, bad)
		case c.want != "" && (len(bad) != 1 || !strings.HasPrefix(bad[0].Error(), c.want)):
			t.Errorf("%q: refused %v; want %q", c.args, bad, c.want)
		}
	}
	var name, dsn, db string
	var timeout time.Duration
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	EngineSettings(&name, &dsn, &timeout, &db, "", "t.db").Define(fs)
	for flag, want := range map[string]string{"engine": "engine: sqlite, duckdb, postgres or mariadb",
		"db": "database `file` for sqlite or duckdb (default t.db)",
		"dsn": "for postgres or mariadb (mariadb: MySQL 8 too), the server's `DSN` (default: a throwaway server " +
			"numalab starts and stops)"} {
		if f := fs.Lookup(flag); f == nil || f.Usage != want {
			t.Errorf("--%s's help: %v; want %q", flag, f, want)
		}
	}
	if want := "-db: a file is for --engine sqlite or duckdb " +
		"(PostgreSQL and MariaDB take --dsn)"; ErrPostgresFile.Error() != want {
		t.Errorf("ErrPostgresFile = %q; want %q", ErrPostgresFile, want)
	}
}
