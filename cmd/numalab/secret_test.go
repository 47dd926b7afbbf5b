package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The DSN shapes once found to leak their password, through every
// command that takes --dsn: the password must not reach the error, stdout,
// stderr, the store's bytes, 'runs show' or 'runs --json'. Nothing listens
// on port 1, so each command fails fast.
func TestDSNPasswordNeverLeaks(t *testing.T) {
	const pw = "Sekr3tPW"
	dsns := []string{
		"postgres//u:" + pw + "@127.0.0.1:1/udb",
		"u:" + pw + "@127.0.0.1:1/udb",
		"postgres://u:" + pw + "@127.0.0.1:1/udb?connect_timeout=5",
		"postgres://u:at@" + pw + "@127.0.0.1:1/udb?connect_timeout=5",
		"postgres://u@127.0.0.1:1/udb?connect_timeout=5&password=" + pw,
		`host=127.0.0.1 port=1 user=u password=` + pw + `\ PWesc dbname=udb connect_timeout=5`,
		`host=127.0.0.1 port=1 user=u password='` + pw + ` PWesc' dbname=udb connect_timeout=5`,
	}
	dir := t.TempDir()
	st := filepath.Join(dir, "s.db")
	for _, dsn := range dsns {
		for _, cmd := range [][]string{
			{"run", "report", "--engine", "postgres", "--rows", "1000", "--duration", "1s", "--warmup", "0s"},
			{"run", "oltp", "--engine", "postgres", "--streams", "1", "--duration", "1s", "--warmup", "0s"},
			{"inspect", "--engine", "postgres"},
			{"check", "--engine", "postgres"},
		} {
			args := append(cmd, "--dsn", dsn, "--store", st)
			out, errOut, err := runCLI(t, args...)
			if err == nil {
				t.Fatalf("%s: a DSN with nothing behind it was accepted", strings.Join(args, " "))
			}
			for what, s := range map[string]string{"error": err.Error(), "stdout": out, "stderr": errOut} {
				if strings.Contains(s, pw) || strings.Contains(s, "PWesc") {
					t.Errorf("%s %q: the password appears in the %s: %s", cmd[0], dsn, what, s)
				}
			}
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents { // the store, its WAL and anything else
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(pw)) || bytes.Contains(b, []byte("PWesc")) {
			t.Errorf("the password is in the bytes of %s", e.Name())
		}
	}
	list, _, err := runCLI(t, "runs", "--store", st, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var runs []struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(list), &runs); err != nil {
		t.Fatal(err)
	}
	if len(runs) == 0 {
		t.Fatal("no run was stored: nothing shows the stored command and error")
	}
	shown := map[string]string{"runs --json": list}
	for _, r := range runs {
		id := strconv.FormatInt(r.ID, 10)
		for _, args := range [][]string{{"runs", "show", "--store", st, id}, {"runs", "show", "--store", st, "--json", id}} {
			out, _, err := runCLI(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			shown[strings.Join(args[2:], " ")] = out
		}
	}
	for what, s := range shown {
		if strings.Contains(s, pw) || strings.Contains(s, "PWesc") {
			t.Errorf("the password appears in %s: %s", what, s)
		}
	}
}

// TestConnStringNeverLeaks: a connection string given where numalab
// expects a file, by every door (--store and --db of each command that
// has them, $NUMALAB_STORE, a sweep file's db, store copy's arguments),
// is refused before anything is opened: its password is in no output,
// no stored run, and no file is named after it.
func TestConnStringNeverLeaks(t *testing.T) {
	const pw = "Hunt3rPW"
	conns := []string{
		"host=127.0.0.1 password=" + pw + " dbname=x",
		"mysql://u:" + pw + "@127.0.0.1:1/db",
		"u:" + pw + "@tcp(127.0.0.1:1)/db",
	}
	dir := t.TempDir()
	t.Chdir(dir) // a file named after the string would land here
	st := filepath.Join(dir, "s.db")
	sweeps := t.TempDir() // holds the password: the user wrote it there
	type door struct {
		name string
		args []string
		env  string // $NUMALAB_STORE
	}
	var doors []door
	for _, c := range conns {
		for _, cmd := range [][]string{
			{"run", "oltp", "--engine", "sqlite", "--streams", "1", "--duration", "1s", "--warmup", "0s"},
			{"run", "insert", "--engine", "sqlite", "--max-rows", "1000"},
			{"run", "tpch", "--engine", "sqlite", "--sf", "0.001"},
			{"run", "report", "--engine", "sqlite", "--rows", "1000"},
			{"run", "pages"},
		} {
			doors = append(doors, door{"--db", append(slices.Clone(cmd), "--db", c, "--store", st), ""})
		}
		for _, cmd := range [][]string{{"inspect"}, {"check"}} {
			doors = append(doors, door{"--db", append(slices.Clone(cmd), "--db", c), ""})
		}
		for _, cmd := range [][]string{
			{"run", "oltp", "--engine", "sqlite", "--streams", "1", "--duration", "1s", "--warmup", "0s"},
			{"probe", "mem", "--quick"},
			{"runs"},
			{"report"},
			{"fleet"},
			{"model", "fit"},
		} {
			doors = append(doors, door{"--store", append(slices.Clone(cmd), "--store", c), ""})
			doors = append(doors, door{"$NUMALAB_STORE", cmd, c})
		}
		doors = append(doors, door{"store copy", []string{"store", "copy", c, st}, ""},
			door{"store copy", []string{"store", "copy", st, c}, ""})
		for _, cmd := range []string{"oltp", "insert"} {
			sweep := filepath.Join(sweeps, cmd+".toml")
			if err := os.WriteFile(sweep, []byte("engine = \"sqlite\"\ndb = "+strconv.Quote(c)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			doors = append(doors, door{"a sweep file", []string{"run", cmd, "-f", sweep, "--store", st}, ""})
		}
	}
	for _, d := range doors {
		t.Setenv("NUMALAB_STORE", d.env)
		out, errOut, err := runCLI(t, d.args...)
		if err == nil {
			t.Errorf("%s: numalab %s: a connection string was taken for a file", d.name, strings.Join(d.args, " "))
			continue
		}
		for what, s := range map[string]string{"error": err.Error(), "stdout": out, "stderr": errOut} {
			if strings.Contains(s, pw) {
				t.Errorf("%s: numalab %s: the password appears in the %s: %s", d.name, strings.Join(d.args, " "), what, s)
			}
		}
		if !strings.Contains(err.Error(), "looks like a connection string") {
			t.Errorf("%s: numalab %s: refused as %q, not as a connection string", d.name, strings.Join(d.args, " "), err)
		}
	}
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(p, pw) || strings.Contains(p, "host=") || strings.Contains(p, "dbname") {
			t.Errorf("a file is named after a connection string: %s", p)
		}
		if e.Type().IsRegular() {
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(pw)) {
				t.Errorf("the password is in the bytes of %s", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
