package tpcc

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/engine"
)

func TestLoadBytes(t *testing.T) {
	for _, tc := range []struct {
		engine string
		w      int
		want   int64
	}{
		{"sqlite", 1, 84 << 20},
		{"duckdb", 10, 660 << 20},
		{"postgres", 1, 240 << 20},             // data and as much WAL
		{"postgres", 100, 100*120<<20 + 4<<30}, // WAL bounded by max_wal_size
		{"sqlite", 0, 0},
		{"postgres", math.MaxInt, math.MaxInt64},
	} {
		if got := LoadBytes(tc.engine, tc.w); got != tc.want {
			t.Errorf("LoadBytes(%s, %d) = %d, want %d", tc.engine, tc.w, got, tc.want)
		}
	}
	if got := EstimatedBytes(math.MaxInt); got != math.MaxInt64 {
		t.Errorf("EstimatedBytes(MaxInt) = %d, want it saturated", got)
	}
}

// TestCheckFits refuses, before any work, warehouses more than the whole
// filesystem could hold, and judges nothing it cannot see.
func TestCheckFits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	for _, tc := range []struct {
		engine string
		where  engine.Options
		w      int
		refuse bool
	}{
		{"sqlite", engine.Options{Path: path}, 1, false},
		{"sqlite", engine.Options{Path: path}, 99999999, true},
		{"duckdb", engine.Options{Path: path}, math.MaxInt, true},
		{"postgres", engine.Options{}, 99999999, true}, // a managed server, in $TMPDIR
		{"postgres", engine.Options{DSN: "host=elsewhere"}, 99999999, false},
		{"sqlite", engine.Options{Path: "/nonexistent-numalab/w.db"}, 99999999, false},
	} {
		err := CheckFits(tc.engine, tc.where, tc.w)
		if tc.refuse != (err != nil) || err != nil &&
			(!errors.Is(err, engine.ErrNoRoom) || !strings.Contains(err.Error(), "more than the whole filesystem")) {
			t.Errorf("CheckFits(%s, %+v, %d) = %v, want refused %v", tc.engine, tc.where, tc.w, err, tc.refuse)
		}
	}
	if _, _, err := Prepare(context.Background(), Source{Engine: "sqlite", Where: engine.Options{Path: path},
		Load: LoadConfig{Warehouses: 99999999}}); !errors.Is(err, engine.ErrNoRoom) {
		t.Errorf("Prepare of 99999999 warehouses: %v, want a refusal", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("refused Prepare left %s: %v", path, err)
	}
}

// TestLoadRefusesToFillTheDisk asks for more warehouses than the
// filesystem holding the test's directory has free, though fewer than it
// holds in all: Prepare must refuse before loading, with the estimate and
// the free space, and leave no file. (Halfway between free and total, so
// that space others free meanwhile cannot start a real load; engine's
// TestRoomCheck tests the 5% boundary itself.)
func TestLoadRefusesToFillTheDisk(t *testing.T) {
	dir := t.TempDir()
	r, err := engine.RoomAt(dir)
	if err != nil {
		t.Fatal(err)
	}
	w := int((r.Free + (r.Total-r.Free)/2) / sqliteBytesPerWarehouse)
	if LoadBytes("sqlite", w) <= r.Free || LoadBytes("sqlite", w) > r.Total {
		t.Skipf("%s: %d warehouses would not fit at all (%d of %d bytes free)", dir, w, r.Free, r.Total)
	}
	path := filepath.Join(dir, "w.db")
	_, _, err = Prepare(context.Background(),
		Source{Engine: "sqlite", Where: engine.Options{Path: path}, Load: LoadConfig{Warehouses: w}})
	t.Logf("%d warehouses: %v", w, err)
	if !errors.Is(err, engine.ErrNoRoom) || !strings.Contains(err.Error(), "free of") ||
		!strings.Contains(err.Error(), "less than 5% free") {
		t.Errorf("Prepare of %d warehouses: %v, want a refusal with the estimate and the free space", w, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("refused load left %s: %v", path, err)
	}
}
