package record

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
)

// TestOutcomes records three runs in a real store, finished complete,
// interrupted and failed, and reads back what was stored.
func TestOutcomes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		ctx    context.Context
		err    error
		status string
		msg    string
	}{
		{context.Background(), nil, result.StatusComplete, ""},
		{canceled, context.Canceled, result.StatusInterrupted, ""},
		{context.Background(), errors.New("dsn postgres://u:secret@h/db refused"), result.StatusFailed,
			"postgres://u:xxxxx@h/db"},
	} {
		var log bytes.Buffer
		var heard []int64
		r, err := Start(c.ctx, path, "probe-io", "numalab probe io --store postgres://u:secret@h/db",
			struct{ N int }{7}, &log,
			func(kind string, id int64) { heard = append(heard, id) })
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Add(result.KindCell.Of(result.Cell{Index: 3})); err != nil {
			t.Fatal(err)
		}
		if err := r.Finish(c.err, "1 cell"); err != nil {
			t.Fatal(err)
		}
		if len(heard) != 1 || heard[0] != r.ID() || !strings.Contains(log.String(), "stored as run") ||
			!strings.Contains(log.String(), "("+c.status+")") {
			t.Errorf("%s: heard %v, log %q", c.status, heard, log.String())
		}
		st, err := store.OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		run, err := st.Get(r.ID())
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		cells, err := result.KindCell.All(run)
		if err != nil || len(cells) != 1 || cells[0].Index != 3 {
			t.Errorf("%s: cells %+v, %v", c.status, cells, err)
		}
		if run.Status != c.status || run.Headline != "1 cell" || string(run.Config) != `{"N":7}` ||
			strings.Contains(run.Command, "secret") || strings.Contains(run.Error, "secret") ||
			!strings.Contains(run.Error, c.msg) {
			t.Errorf("%s: stored %s %q %s %q %q", c.status, run.Status, run.Headline, run.Config, run.Command, run.Error)
		}
	}
}
