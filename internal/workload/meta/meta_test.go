package meta

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/engine"
)

// TestRead reads a marker table from a real SQLite file, and names the
// table when the file has none.
func TestRead(t *testing.T) {
	ctx := context.Background()
	eng, err := engine.Open(ctx, "sqlite", engine.Options{Path: filepath.Join(t.TempDir(), "m.sqlite"), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	d := engine.SQLOf("sqlite")
	if _, err := Read(ctx, eng.DB(), d, "x_meta"); err == nil || !strings.Contains(err.Error(), "reading x_meta") {
		t.Errorf("a file without x_meta: %v, want an error naming it", err)
	}
	for _, q := range []string{d.CreateMeta("x_meta"), d.WriteMeta("x_meta", "workload", "x"),
		d.WriteMeta("x_meta", "load_complete", "1")} {
		if _, err := eng.DB().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	m, err := Read(ctx, eng.DB(), d, "x_meta")
	if want := map[string]string{"workload": "x", "load_complete": "1"}; err != nil || !reflect.DeepEqual(m, want) {
		t.Errorf("read %v, %v; want %v", m, err, want)
	}
}
