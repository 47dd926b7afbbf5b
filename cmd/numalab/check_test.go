package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDBFlagsOneWay checks that check and inspect tell the engine from
// --engine, --db and --dsn the same way: each bad combination is refused
// by both, with the same words.
func TestDBFlagsOneWay(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("just some text, long enough to be read as a header by anyone\n"),
		0o644); err != nil {
		t.Fatal(err)
	}
	sqliteFile := inspectFixture(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--db", "a.db", "--dsn", "postgres://x@y/z"}, "-db and -dsn: give one database, not both"},
		{[]string{"--engine", "oracle", "--db", sqliteFile}, `-engine: "oracle" is not an engine`},
		{[]string{"--engine", "postgres", "--db", sqliteFile}, "reads a server: give --dsn DSN"},
		{[]string{"--engine", "duckdb", "--dsn", "postgres://x@y/z"}, "reads a file: give --db FILE, not --dsn"},
		{[]string{"--engine", "duckdb", "--db", sqliteFile}, "is an SQLite database, not DuckDB"},
		{[]string{"--db", filepath.Join(dir, "missing.db")}, "is no such database file"},
		{[]string{"--engine", "sqlite", "--db", filepath.Join(dir, "missing.db")}, "is no such database file"},
		{[]string{"--db", text}, "is neither SQLite nor DuckDB by its first bytes: give --engine"},
	} {
		for _, cmd := range []string{"check", "inspect"} {
			_, _, err := runCLI(t, append([]string{cmd}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s %v: %v; want it to say %q", cmd, tc.args, err, tc.want)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); err == nil {
		t.Error("a missing --db file was created")
	}
}
