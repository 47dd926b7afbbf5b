package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
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
