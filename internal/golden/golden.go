// Package golden compares test output with files kept under testdata, the
// one way every numalab output format (text, JSON, CSV, HTML, SVG) is
// pinned down. Run a package's tests with -update to rewrite its files
// after an intended change, then review the diff.
//
// It is for tests only: importing it registers the -update flag.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files instead of comparing with them")

// Updating reports whether the test binary runs with -update.
func Updating() bool { return *update }

// Check compares got with the file at path, or rewrites the file with
// -update. On a difference it reports the first line that differs.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if string(got) == string(want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Errorf("output differs from %s at line %d:\n got: %q\nwant: %q\n(run with -update if the change is intended)",
				path, i+1, g, w)
			return
		}
	}
}
