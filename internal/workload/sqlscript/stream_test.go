package sqlscript

import (
	"context"
	"testing"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/pgscript"
)

// nullConn is an engine connection that costs nothing: every statement
// succeeds, every query returns one row.
type nullConn struct{ row []any }

var _ engine.Conn = nullConn{}

func (nullConn) Exec(context.Context, string, ...any) error { return nil }
func (c nullConn) Query(_ context.Context, _ string, _ []any, row func([]any) error) error {
	return row(c.row)
}
func (nullConn) BackendPID() int { return 0 }
func (nullConn) Close() error    { return nil }

// BenchmarkStream is what a stream adds to an engine's call per
// select-only transaction, counted in the window: the interpreter, the
// Observe hook and the per-command figures (Counted).
func BenchmarkStream(b *testing.B) {
	s, err := pgscript.Builtin("select-only")
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultRunConfig()
	_, d, _ := dialectOf("postgres")
	st, err := newStream(nullConn{row: []any{int64(0)}}, cfg.options(d),
		[]pgscript.Weighted{{Script: s, Weight: 1}}, 0, &halt{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.Next(ctx); err != nil {
			b.Fatal(err)
		}
		st.Counted(true)
	}
}
