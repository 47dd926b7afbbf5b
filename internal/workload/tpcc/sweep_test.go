package tpcc

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
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
	c := sweep.Cell{Point: drive.Point{Index: 3, Streams: streams}, DataNode: -1, DOP: 1,
		Place: place.Placement{DataNode: -1}}
	m, err := drive.Run(context.Background(),
		drive.Config{Types: TxNames, Streams: streams, Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond,
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
	if stop == nil || !strings.Contains(stop.Error(), "running cell 3 (2 streams") ||
		!strings.Contains(stop.Error(), "no transaction succeeded") ||
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

// sayings is a sweep.Teller that keeps what it is told.
type sayings struct {
	mu   sync.Mutex
	said []string
}

func (s *sayings) Say(l string) {
	s.mu.Lock()
	s.said = append(s.said, l)
	s.mu.Unlock()
}
func (s *sayings) Note(l string) { s.Say(l) }

// TestOpenTwoLoaders: two sweeps that load the same new --db at once take
// turns: one loads, the other waits, saying so, and opens the finished
// load (not "database disk image is malformed").
func TestOpenTwoLoaders(t *testing.T) {
	cfg := DefaultRunConfig()
	cfg.DB = filepath.Join(t.TempDir(), "w1.db")
	sweeps := []*Sweep{NewSweep(cfg, -1), NewSweep(cfg, -1)}
	tell := []*sayings{{}, {}}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range sweeps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = sweeps[i].Open(context.Background(), tell[i])
		}()
	}
	wg.Wait()
	loaded, waited := 0, 0
	for i, s := range sweeps {
		if errs[i] != nil {
			t.Fatalf("loader %d: %v", i, errs[i])
		}
		defer s.Close()
		if s.ld.Loaded {
			loaded++
		}
		for _, l := range tell[i].said {
			if strings.HasPrefix(l, "waiting for another numalab process that is loading or opening a database in ") {
				waited++
				break
			}
		}
	}
	if loaded != 1 || waited != 1 {
		t.Errorf("%d loaded and %d waited; want one of each", loaded, waited)
	}
}
