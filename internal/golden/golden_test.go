package golden

import (
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that remembers failures instead of failing.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Helper()               {}

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.txt")
	*update = true
	Check(t, path, []byte("a\nb\n"))
	*update = false
	Check(t, path, []byte("a\nb\n"))
	r := &recorder{TB: t}
	Check(r, path, []byte("a\nc\n"))
	if !r.failed {
		t.Error("a different output passed")
	}
	r = &recorder{TB: t}
	Check(r, filepath.Join(t.TempDir(), "missing"), []byte("x"))
	if !r.failed {
		t.Error("a missing golden file passed")
	}
}
