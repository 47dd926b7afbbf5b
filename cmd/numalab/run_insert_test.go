package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
	"github.com/numalab/numalab/internal/workload/insert"
)

func TestRunInsertStoresEveryCell(t *testing.T) {
	dir := t.TempDir()
	st := filepath.Join(dir, "s.db")
	out, stderr, err := runCLI(t, "run", "insert", "--db", filepath.Join(dir, "ins.db"), "--store", st, "--streams", "1,2",
		"--batch", "100", "--duration", "400ms", "--warmup", "100ms")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "rows/s") || !strings.Contains(lines[2], "write lock") {
		t.Errorf("want a header and 2 rows naming SQLite's write lock, got:\n%s", out)
	}
	s, err := store.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.Get(1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != insert.RunKind || r.Status != result.StatusComplete || !strings.Contains(r.Headline, "rows/s") {
		t.Errorf("run = %s %s %q", r.Kind, r.Status, r.Headline)
	}
	stats, err := insert.KindCellStats.All(r)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := result.KindCell.All(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 2 || len(cells) != 2 || stats[1].Streams != 2 || stats[1].RowsPerSec <= 0 || cells[1].Usage == nil {
		t.Errorf("stored %d cells and %d stats: %+v", len(cells), len(stats), stats)
	}
	// The stored command parses back to the stored configuration.
	words := shellSplit(t, r.Command)
	cfg, _, _, _, err := insertFlags(&env{stdout: io.Discard, stderr: io.Discard}, words[3:])
	if err != nil {
		t.Fatalf("stored command %q: %v", r.Command, err)
	}
	if b, _ := json.Marshal(cfg); string(b) != string(r.Config) {
		t.Errorf("stored command %q parses to\n%s\nwant\n%s", r.Command, b, r.Config)
	}
}

func TestRunInsertJSON(t *testing.T) {
	dir := t.TempDir()
	out, stderr, err := runCLI(t, "run", "insert", "--engine", "duckdb", "--db", filepath.Join(dir, "ins.duckdb"),
		"--store", filepath.Join(dir, "s.db"),
		"--streams", "2", "--batch", "500", "--duration", "300ms", "--warmup", "0s", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var stats []insert.CellStats
	if err := json.Unmarshal([]byte(out), &stats); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(stats) != 1 || stats[0].Method != "appender" || stats[0].Rows <= 0 || !strings.Contains(stderr, "rows/s") {
		t.Errorf("stats %+v; stderr:\n%s", stats, stderr)
	}
}

func TestRunInsertRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "mine.db")
	os.WriteFile(foreign, []byte("someone's notes"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--batch", "0"}, `-batch: "0" is not a positive row count`},
		{[]string{"--batch", "1000000000000"}, "is larger than memory allows"},
		{[]string{"--engine", "sqlite", "--method", "insert"}, `-method: "insert" is for --engine postgres`},
		{[]string{"--max-rows", "0"}, `-max-rows: "0" is not a positive row count`},
		{[]string{"--db", foreign}, "not made by numalab's insert workload"},
	} {
		args := append([]string{"run", "insert", "--store", filepath.Join(dir, "s.db"), "--duration", "100ms",
			"--warmup", "0s"}, c.args...)
		_, _, err := runCLI(t, args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.args, err, c.want)
		}
	}
	if b, _ := os.ReadFile(foreign); !bytes.Equal(b, []byte("someone's notes")) {
		t.Error("the refused file changed")
	}
}
