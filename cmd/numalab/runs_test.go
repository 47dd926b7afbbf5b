package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/store"
)

// TestRunsOnEmptyAndBadStore: without a store, runs says so and creates
// none; with an empty one, it says there are no runs.
func TestRunsOnEmptyAndBadStore(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "new.db")
	out, _, err := runCLI(t, "runs", "--store", db)
	if err != nil || !strings.Contains(out, "no runs: there is no store at") {
		t.Errorf("no store: %v %q", err, out)
	}
	out, _, err = runCLI(t, "runs", "--json", "--store", db)
	if err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("no store, --json: %v %q", err, out)
	}
	_, _, err = runCLI(t, "runs", "show", "--store", db, "7")
	if err == nil || !strings.Contains(err.Error(), "no store at") {
		t.Errorf("show without a store: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("runs without a store created %v", entries)
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	out, _, err = runCLI(t, "runs", "--store", db)
	if err != nil || !strings.Contains(out, "no runs in") {
		t.Errorf("empty store: %v %q", err, out)
	}
	_, _, err = runCLI(t, "runs", "show", "--store", db, "7")
	if err == nil || !strings.Contains(err.Error(), "no such run") {
		t.Errorf("missing run: %v", err)
	}
	_, _, err = runCLI(t, "runs", "show", "--store", db, "x")
	if err == nil || !strings.Contains(err.Error(), "not a run ID") {
		t.Errorf("bad id: %v", err)
	}
}
