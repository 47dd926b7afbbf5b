package transtats

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/engine"
)

func TestLoadBytes(t *testing.T) {
	for _, tc := range []struct {
		d    string
		rows int64
		want int64
	}{
		{SQLite, 1000, 400_000},
		{DuckDB, 1000, 40_000},
		{Postgres, 1000, 2 * (560_000 + 90<<20)},          // data, dimension's key and as much WAL
		{Postgres, MaxRows, MaxRows*560 + 90<<20 + 4<<30}, // WAL bounded by max_wal_size
		{MariaDB, 1000, 480_000 + 132<<20},                // and the dimension table, whatever the rows
		{SQLite, -1, 0},
	} {
		if got := LoadBytes(tc.d, tc.rows); got != tc.want {
			t.Errorf("LoadBytes(%s, %d) = %d, want %d", tc.d, tc.rows, got, tc.want)
		}
	}
	path := filepath.Join(t.TempDir(), "t.sqlite")
	if err := CheckFits(SQLite, engine.Options{Path: path}, 1e15); !errors.Is(err, engine.ErrNoRoom) ||
		!strings.Contains(err.Error(), "more than the whole filesystem") {
		t.Errorf("CheckFits(1e15 rows) = %v, want a refusal", err)
	}
	if err := CheckFits(Postgres, engine.Options{DSN: "host=elsewhere"}, 1e15); err != nil {
		t.Errorf("CheckFits on a server reached by DSN = %v, want no judgement", err)
	}
	if err := CheckFits(SQLite, engine.Options{Path: path}, DefaultRows); err != nil {
		t.Errorf("CheckFits(%d rows) = %v", DefaultRows, err)
	}
}

// TestLoadRefusesToFillTheDisk asks for rows that would leave the test
// directory's filesystem 2.5% free: Open must refuse before loading, with
// the estimate and the free space, and leave no file.
func TestLoadRefusesToFillTheDisk(t *testing.T) {
	dir := t.TempDir()
	r, err := engine.RoomAt(dir)
	if err != nil {
		t.Fatal(err)
	}
	rows := max(1, (r.Free-r.Total/40)/layoutOf(specOf(SQLite)).bytesPerRow)
	if rows > MaxRows {
		t.Skipf("%s has more room than %d rows take", dir, MaxRows)
	}
	path := filepath.Join(dir, "t.sqlite")
	_, err = Open(context.Background(), Config{EngineName: SQLite, Rows: rows, Engine: engine.Options{Path: path}})
	t.Logf("%d rows: %v", rows, err)
	if !errors.Is(err, engine.ErrNoRoom) || !strings.Contains(err.Error(), "free of") ||
		!strings.Contains(err.Error(), "less than 5% free") {
		t.Errorf("Open with %d rows: %v, want a refusal with the estimate and the free space", rows, err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("refused load left %v", left)
	}
}
