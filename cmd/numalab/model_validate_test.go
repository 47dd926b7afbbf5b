package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/published"
)

// TestModelValidate runs 'model validate' on the built-in results: the
// summary, every pair with its published and predicted ratio, every
// source; --json carries the same checks; --results takes a user's file
// and refuses a broken one naming the file, the row and the field.
func TestModelValidate(t *testing.T) {
	out, _, err := runCLI(t, "model", "validate")
	if err != nil {
		t.Fatal(err)
	}
	r, err := published.BuiltinResults()
	if err != nil {
		t.Fatal(err)
	}
	v, err := published.Validate(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, v.Summary()+"\n") {
		t.Errorf("output does not open with the summary %q:\n%s", v.Summary(), out)
	}
	for _, want := range []string{"1.721×", "1.877×", "+9.0%", "+2.7%", "[berry-2016]", "Lenovo System x3850 X6",
		"TPC-E 4 to 8 sockets", "Fujitsu PRIMERGY RX900 S1", "two hops 228.475 ns"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}

	js, _, err := runCLI(t, "model", "validate", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got published.Validation
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Checks) != len(v.Checks) || got.Checks[0].Predicted != v.Checks[0].Predicted {
		t.Errorf("--json: %d checks, first predicted %v: want %d, %v",
			len(got.Checks), got.Checks[0].Predicted, len(v.Checks), v.Checks[0].Predicted)
	}

	// A user's file: the built-in one with one pair left, then broken.
	var raw map[string]any
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	raw["pairs"] = raw["pairs"].([]any)[:1]
	dir := t.TempDir()
	one := filepath.Join(dir, "one.json")
	b, _ := json.Marshal(raw)
	if err := os.WriteFile(one, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err = runCLI(t, "model", "validate", "--results", one)
	if err != nil || !strings.Contains(out, "Against 1 pairs") {
		t.Errorf("--results %s: %v\n%s", one, err, out)
	}
	raw["results"].([]any)[0].(map[string]any)["source"] = "hearsay"
	broken := filepath.Join(dir, "broken.json")
	b, _ = json.Marshal(raw)
	if err := os.WriteFile(broken, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = runCLI(t, "model", "validate", "--results", broken)
	if err == nil || !strings.Contains(err.Error(), broken) ||
		!strings.Contains(err.Error(), `source = "hearsay" names no source`) {
		t.Errorf("--results with an unsourced row: err = %v: want the file, the row and the field", err)
	}
}
