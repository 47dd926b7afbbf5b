package store

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/result"
)

// TestGetRuns: named runs in the order named; with none, the latest of
// each kind asked for; OpenToRead refuses a missing store and creates none.
func TestGetRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	if _, err := OpenToRead(path); err == nil || !strings.Contains(err.Error(), "no store at "+path+" yet") {
		t.Fatalf("OpenToRead of a missing store: %v", err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{result.RunProbeMem, result.RunOLTP, result.RunProbeMem, result.RunProbeIO} {
		r := newRun(kind)
		if err := s.Begin(r); err != nil {
			t.Fatal(err)
		}
		if err := s.Finish(r.ID, time.Now(), result.StatusComplete, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s, err = OpenToRead(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids := func(runs []*result.Run, err error) []int64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, r := range runs {
			out = append(out, r.ID)
		}
		return out
	}
	if got := ids(s.GetRuns(nil, []string{result.RunProbeMem, result.RunOLTP})); len(got) != 2 ||
		got[0] != 3 || got[1] != 2 {
		t.Errorf("latest probe-mem and oltp runs = %v, want [3 2]", got)
	}
	if got := ids(s.GetRuns([]int64{4, 1}, nil)); len(got) != 2 || got[0] != 4 || got[1] != 1 {
		t.Errorf("runs 4 and 1 = %v, want [4 1]", got)
	}
	if got := ids(s.GetRuns(nil, []string{result.RunQueries})); len(got) != 0 {
		t.Errorf("no run of the kind: %v, want none", got)
	}
	if _, err := s.GetRuns([]int64{9}, nil); err == nil {
		t.Error("a run the store does not hold: no error")
	}
}
