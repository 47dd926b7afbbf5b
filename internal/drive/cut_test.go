package drive

import (
	"context"
	"database/sql/driver"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/numalab/numalab/internal/engine"
)

// stuckStream's first call never returns until release is closed, whatever
// its context says: a stuck engine call.
type stuckStream struct {
	release <-chan struct{}
	calls   *atomic.Int64
}

func (s stuckStream) Next(context.Context) (int, error) {
	s.calls.Add(1)
	<-s.release
	return 0, nil
}
func (stuckStream) Close() error { return nil }

func TestRunCutsStuckStream(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var stuckCalls atomic.Int64
	open := func(ctx context.Context, i int) (Stream, error) {
		if i == 0 {
			return stuckStream{release, &stuckCalls}, nil
		}
		return spinOpener(nil)(ctx, i)
	}
	start := time.Now()
	cell, err := Run(context.Background(),
		Config{Types: spinTypes, Streams: 2, Duration: 300 * ms, CutGrace: 200 * ms}, open)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 30*s {
		t.Errorf("Run returned %v after it started, for a 300ms window and a 200ms grace", took)
	}
	if !cell.Interrupted || !strings.Contains(cell.Cut, "1 stream still in a call") || !strings.Contains(cell.Cut, "[0]") {
		t.Errorf("interrupted %v, cut %q: want the cell cut without stream 0", cell.Interrupted, cell.Cut)
	}
	if cell.Total.Count == 0 || cell.Total.Errors != 0 || stuckCalls.Load() != 1 {
		t.Errorf("count %d, errors %d, stuck calls %d: want stream 1's calls counted",
			cell.Total.Count, cell.Total.Errors, stuckCalls.Load())
	}
	if cell.Measured != 300*ms {
		t.Errorf("measured %v, want the whole 300ms window", cell.Measured)
	}
}

// TestRunCutsStuckDuckDBCall: a DuckDB query stuck in a function that
// neither returns nor heeds DuckDB's interrupt is cut after the grace.
func TestRunCutsStuckDuckDBCall(t *testing.T) {
	ctx := context.Background()
	eng, err := engine.Open(ctx, "duckdb", engine.Options{Path: filepath.Join(t.TempDir(), "s.duckdb"), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer eng.Close()
	defer close(release)
	var calls atomic.Int64
	open := func(ctx context.Context, _ int) (Stream, error) {
		c, err := eng.Connect(ctx)
		if err != nil {
			return nil, err
		}
		// A function registered on one connection is in the database's
		// catalog: the stream's connection finds it.
		reg, err := eng.DB().Conn(ctx)
		if err == nil {
			err = duckdb.RegisterScalarUDF(reg, "numalab_stuck", stuckUDF{release})
			reg.Close()
		}
		if err != nil {
			c.Close()
			return nil, err
		}
		return &queryStream{c: c, q: "SELECT numalab_stuck()", calls: &calls}, nil
	}
	cell, err := Run(ctx, Config{Types: spinTypes, Streams: 1, Duration: 200 * ms, CutGrace: 500 * ms}, open)
	if err != nil {
		t.Fatal(err)
	}
	if !cell.Interrupted || !strings.Contains(cell.Cut, "still in a call") || cell.Total.Count != 0 || calls.Load() != 1 {
		t.Errorf("interrupted %v, cut %q, count %d, calls %d: want the stuck call cut",
			cell.Interrupted, cell.Cut, cell.Total.Count, calls.Load())
	}
}

type queryStream struct {
	c     engine.Conn
	q     string
	calls *atomic.Int64
}

func (s *queryStream) Next(ctx context.Context) (int, error) {
	s.calls.Add(1)
	return 0, s.c.Query(ctx, s.q, nil, func([]any) error { return nil })
}
func (s *queryStream) Close() error { return s.c.Close() }

// stuckUDF is a scalar function that waits for release.
type stuckUDF struct{ release <-chan struct{} }

func (stuckUDF) Config() duckdb.ScalarFuncConfig {
	ti, _ := duckdb.NewTypeInfo(duckdb.TYPE_INTEGER)
	return duckdb.ScalarFuncConfig{ResultTypeInfo: ti, Volatile: true}
}

func (u stuckUDF) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: func([]driver.Value) (any, error) {
		<-u.release
		return int32(1), nil
	}}
}
