package tpcc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/numalab/numalab/internal/engine"
)

// TestPrepareOpensWithoutLoading opens the shared W=1 file through Prepare:
// nothing is loaded, and a file of another size or kind is refused as it
// is.
func TestPrepareOpensWithoutLoading(t *testing.T) {
	ctx := context.Background()
	path := loaded(t)
	var where string
	w, st, err := Prepare(ctx, Source{Engine: "sqlite", Where: engine.Options{Path: path}, Load: LoadConfig{Warehouses: 1},
		Opened: func(in engine.Info) { where = in.Where }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Engine().Close()
	if st != nil || w.Meta().Warehouses != 1 || w.Path() != path || where != path {
		t.Errorf("Prepare: loaded %v, %d warehouses, path %q, told %q; want nothing loaded, 1, %q",
			st, w.Meta().Warehouses, w.Path(), where, path)
	}

	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Prepare(ctx, Source{Engine: "sqlite", Where: engine.Options{Path: path}, Load: LoadConfig{Warehouses: 2}})
	var we *WarehousesError
	if !errors.As(err, &we) || we.Have != 1 || we.Want != 2 {
		t.Errorf("Prepare W=2 on a W=1 file: %v, want a WarehousesError 1 of 2", err)
	}
	if after, err := os.Stat(path); err != nil || after.Size() != before.Size() ||
		!after.ModTime().Equal(before.ModTime()) {
		t.Error("a refused Prepare changed the file")
	}

	junk := filepath.Join(t.TempDir(), "junk.db")
	mutate(t, junk, "CREATE TABLE t (x)")
	if _, _, err := Prepare(ctx, Source{Engine: "sqlite", Where: engine.Options{Path: junk},
		Load: LoadConfig{Warehouses: 1}}); !errors.Is(err, ErrNotTPCC) {
		t.Errorf("Prepare on a foreign file: %v, want ErrNotTPCC", err)
	}
}
