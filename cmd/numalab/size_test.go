package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAbsurdWarehousesRefused: a count of warehouses no filesystem here
// could hold is refused before any work, naming the flag.
func TestAbsurdWarehousesRefused(t *testing.T) {
	dir := t.TempDir()
	st := filepath.Join(dir, "s.db")
	for _, eng := range []string{"sqlite", "postgres"} {
		args := []string{"run", "oltp", "--engine", eng, "--warehouses", "99999999", "--store", st}
		if eng == "sqlite" {
			args = append(args, "--db", filepath.Join(dir, "w.db"))
		}
		_, _, err := runCLI(t, args...)
		if err == nil || !strings.Contains(err.Error(), `-warehouses: "99999999"`) ||
			!strings.Contains(err.Error(), "more than the whole filesystem") {
			t.Errorf("%s: --warehouses 99999999: %v, want a refusal naming the flag", eng, err)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("refused runs left %v", left)
	}
}
