package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProbeCutRenders: a memory probe stopped at any moment (its
// deadline, Ctrl-C) prints what it measured and stores it, and every
// format of the report renders the stored run: eval's probe, cut at its
// share of the budget inside the NUMA matrix, once panicked in the text
// renderer on a row with no cells. The cuts fall at spread moments of a
// small probe (its clock, ladders, bandwidth, matrix, repeats); the first
// of them also before any result.
func TestProbeCutRenders(t *testing.T) {
	dir := t.TempDir()
	st := filepath.Join(dir, "s.db")
	probe := []string{"probe", "mem", "--max", "16m", "--window", "5", "--samples", "1", "--per-doubling", "1", "--repeats", "2", "--store", st}
	start := time.Now()
	if _, stderr, err := runCLI(t, probe...); err != nil {
		t.Fatalf("the whole probe: %v\n%s", err, stderr)
	}
	whole := time.Since(start)
	id := 1
	for _, f := range []float64{0.02, 0.1, 0.25, 0.4, 0.55, 0.7, 0.85} {
		cut := time.Duration(f * float64(whole))
		t.Run(fmt.Sprintf("at %.0f%%", 100*f), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), cut)
			defer cancel()
			var out, errb bytes.Buffer
			err := runChecked(t, ctx, probe, &out, &errb)
			if err == nil {
				t.Skipf("the probe ended within %v (the whole one took %v): nothing was cut", cut, whole)
			}
			id++
			if !strings.Contains(err.Error(), "deadline exceeded") {
				t.Fatalf("probe cut at %v: %v, want it to say it was stopped\n%s", cut, err, errb.String())
			}
			if strings.Contains(errb.String(), "panic") {
				t.Fatalf("probe cut at %v panicked:\n%s", cut, errb.String())
			}
			for _, format := range []string{"text", "json", "csv", "html"} {
				args := []string{"report", "--store", st, "--format", format, "--out", filepath.Join(dir, fmt.Sprintf("r%d.%s", id, format)), fmt.Sprint(id)}
				if _, stderr, err := runCLI(t, args...); err != nil {
					t.Errorf("numalab %s: %v\n%s", strings.Join(args, " "), err, stderr)
				}
			}
		})
	}
}
