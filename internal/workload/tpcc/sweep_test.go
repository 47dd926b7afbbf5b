package tpcc

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

// goneServer is a stream whose server has gone: every call fails as a
// connection to a dead PostgreSQL does.
type goneServer struct{}

func (goneServer) Next(context.Context) (int, error) {
	return 0, errors.New("connecting to postgres managed: dial unix /tmp/.s.PGSQL.5432: " + syscall.ECONNREFUSED.Error())
}
func (goneServer) Close() error { return nil }

// flaky succeeds for a while, then its server goes.
type flaky struct{ until time.Time }

func (f flaky) Next(ctx context.Context) (int, error) {
	if time.Now().Before(f.until) {
		time.Sleep(time.Millisecond)
		return 0, nil
	}
	return goneServer{}.Next(ctx)
}
func (flaky) Close() error { return nil }

// driveCell runs a cell of streams through drive and has End judge it.
func driveCell(t *testing.T, streams int, open func() drive.Stream) sweep.Outcome[*result.Cell] {
	t.Helper()
	c := sweep.Cell{Point: drive.Point{Index: 3, Streams: streams}, DataNode: -1, DOP: 1, Place: place.Placement{DataNode: -1}}
	m, err := drive.Run(context.Background(), drive.Config{Types: TxNames, Streams: streams, Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond,
		MaxConsecutiveErrors: 3, Point: c.Point}, func(context.Context, int) (drive.Stream, error) { return open(), nil })
	if m == nil {
		t.Fatalf("the cell did not start: %v", err)
	}
	s := NewSweep(DefaultRunConfig(), -1)
	return s.End(context.Background(), c, m, err)
}

// TestEndServerGone: a cell whose server went before its window counted
// nothing; it is not stored as a zero cell but ends the sweep with the
// streams' reason, so the run is stored as failed.
func TestEndServerGone(t *testing.T) {
	out := driveCell(t, 2, func() drive.Stream { return goneServer{} })
	stop := out.Stop
	if len(out.Store) != 0 || out.Item != nil {
		t.Errorf("a cell that measured nothing was stored: %d entries", len(out.Store))
	}
	if stop == nil || !strings.Contains(stop.Error(), "running cell 3 (2 streams") || !strings.Contains(stop.Error(), "no transaction succeeded") ||
		!strings.Contains(stop.Error(), "connection refused") {
		t.Errorf("Stop = %v; want the cell named, no success, and the server's error", stop)
	}
}

// TestEndEveryStreamStopped: a cell whose server went in its window is
// stored with the streams' stops (it measured until then) and ends the
// sweep.
func TestEndEveryStreamStopped(t *testing.T) {
	until := time.Now().Add(200 * time.Millisecond)
	out := driveCell(t, 1, func() drive.Stream { return flaky{until} })
	stop := out.Stop
	if len(out.Store) != 1 || out.Item == nil || out.Item.Total.Count == 0 || len(out.Item.Stopped) != 1 {
		t.Fatalf("stored %d entries; want the cell with its count and its stopped stream", len(out.Store))
	}
	if stop == nil || !strings.Contains(stop.Error(), "every stream stopped before the window closed") {
		t.Errorf("Stop = %v; want the sweep ended", stop)
	}
}
