package store

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/result"
)

// TestLatestIORatio: the ratio of the latest complete probe io run, not of
// a later failed one; nil with no store and with no probe io run.
func TestLatestIORatio(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	if r := LatestIORatio(path); r != nil {
		t.Errorf("no store: ratio %+v, want nil", r)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	add := func(kind, status string, ratio float64) {
		t.Helper()
		r := newRun(kind)
		if err := s.Begin(r); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Add(r.ID, result.KindIOProbe.Of(result.IOProbe{Ratio: &result.IORatio{Ratio: ratio}})); err != nil {
			t.Fatal(err)
		}
		if err := s.Finish(r.ID, time.Now(), status, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	add(result.RunOLTP, result.StatusComplete, 1)
	if r := LatestIORatio(path); r != nil {
		t.Errorf("no probe io run: ratio %+v, want nil", r)
	}
	add(result.RunProbeIO, result.StatusComplete, 2)
	add(result.RunProbeIO, result.StatusComplete, 3)
	add(result.RunProbeIO, result.StatusFailed, 4)
	if r := LatestIORatio(path); r == nil || r.Ratio != 3 {
		t.Errorf("ratio %+v, want the latest complete run's, 3", r)
	}
}
