package sweep

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
)

// counter is a workload whose one transaction does nothing; it logs what
// Run asks of it.
type counter struct {
	log     []string
	stopAt  int // End returns Stop at this cell index (-1: never)
	cancel  context.CancelFunc
	cancelI int // cancel ctx once this cell is running (-1: never)
	// stuck, when not nil, makes cell 0's first stream a call that waits
	// for it to close, whatever its context says.
	stuck chan struct{}
	// openErr, when not nil, is what Open returns, after what it opened.
	openErr error
}

// stuckCall is a call that returns only when release closes.
type stuckCall struct{ release <-chan struct{} }

func (s stuckCall) Next(ctx context.Context) (int, error) { <-s.release; return 0, nil }
func (stuckCall) Close() error                            { return nil }

type noop struct{}

func (noop) Next(ctx context.Context) (int, error) { return 0, nil }
func (noop) Close() error                          { return nil }

func (w *counter) Describe() Description { return Description{Workload: "noop", Engine: "none"} }
func (w *counter) Types() []string       { return []string{"noop"} }
func (w *counter) Open(ctx context.Context, tell Teller) ([]result.Entry, error) {
	w.log = append(w.log, "open")
	return []result.Entry{result.Kind[int]("noop.Load").Of(1)}, w.openErr
}
func (w *counter) Prewarm(ctx context.Context, node int, tell Teller) ([]result.Entry, error) {
	w.log = append(w.log, fmt.Sprintf("prewarm %d", node))
	return []result.Entry{result.Kind[int]("noop.Prewarm").Of(node)}, nil
}
func (w *counter) Begin(ctx context.Context, c Cell) error {
	w.log = append(w.log, fmt.Sprintf("begin %d", c.Index))
	return nil
}
func (w *counter) Stream(ctx context.Context, c Cell, stream int) (drive.Stream, error) {
	if c.Index == w.cancelI && stream == 0 {
		go func() { time.Sleep(20 * time.Millisecond); w.cancel() }()
	}
	if w.stuck != nil && c.Index == 0 && stream == 0 {
		return stuckCall{w.stuck}, nil
	}
	return noop{}, nil
}
func (w *counter) End(ctx context.Context, c Cell, m *result.Cell, err error) Outcome[*result.Cell] {
	w.log = append(w.log, fmt.Sprintf("end %d", c.Index))
	o := Outcome[*result.Cell]{Item: m, Store: []result.Entry{result.Kind[*result.Cell]("noop.Cell").Of(m)}}
	if c.Index == w.stopAt {
		o.Stop = errors.New("stop here")
	}
	return o
}
func (w *counter) Close() error { w.log = append(w.log, "close"); return nil }

type memRecorder struct{ kinds []string }

func (r *memRecorder) Add(e result.Entry) error { r.kinds = append(r.kinds, e.Kind()); return nil }

type lines struct {
	measured []int
	notes    []string
}

func (l *lines) Say(string)                      {}
func (l *lines) Note(s string)                   { l.notes = append(l.notes, s) }
func (l *lines) Measured(c Cell, _ *result.Cell) { l.measured = append(l.measured, c.Index) }

func cells(dataNodes ...int) []Cell {
	var out []Cell
	for i, dn := range dataNodes {
		out = append(out,
			Cell{Point: drive.Point{Index: i, Streams: 1 + i%2}, DataNode: dn, DOP: 1, Place: place.Placement{DataNode: -1}})
	}
	return out
}

// TestRunClosesAFailedOpen: an Open that fails part-way (cancelled once
// its engine opened) is closed all the same, so that what it opened is
// given back, and nothing runs.
func TestRunClosesAFailedOpen(t *testing.T) {
	w := &counter{stopAt: -1, cancelI: -1, openErr: context.Canceled}
	got, err := Run(context.Background(), Plan{Cells: cells(-1), Duration: 30 * time.Millisecond},
		w, &memRecorder{}, &lines{})
	if !errors.Is(err, context.Canceled) || len(got) != 0 {
		t.Errorf("Run = %d cells, %v; want none and the Open's error", len(got), err)
	}
	if want := []string{"open", "close"}; !slices.Equal(w.log, want) {
		t.Errorf("calls %q, want %q", w.log, want)
	}
}

// TestRun: open, a prewarm whenever the data node changes, each cell
// stored and reported as it ends, close; a workload's Stop ends the sweep
// after its cell is stored.
func TestRun(t *testing.T) {
	plan := Plan{Cells: cells(-1, -1, -1), Duration: 30 * time.Millisecond}
	w := &counter{stopAt: -1, cancelI: -1}
	rec, prog := &memRecorder{}, &lines{}
	got, err := Run(context.Background(), plan, w, rec, prog)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"open", "prewarm -1", "begin 0", "end 0", "begin 1", "end 1", "begin 2", "end 2",
		"close"}; !slices.Equal(w.log, want) {
		t.Errorf("calls %q\nwant  %q", w.log, want)
	}
	if want := []string{"noop.Load", "noop.Prewarm", "noop.Cell", "noop.Cell",
		"noop.Cell"}; !slices.Equal(rec.kinds, want) {
		t.Errorf("stored %q; want %q", rec.kinds, want)
	}
	if len(got) != 3 || !slices.Equal(prog.measured, []int{0, 1, 2}) {
		t.Fatalf("%d cells returned, %v reported; want 3", len(got), prog.measured)
	}
	for i, m := range got {
		if m.Workload != "noop" || m.Engine != "none" || m.DOP != 1 || m.DataNode != -1 || m.Total.Count == 0 ||
			m.Streams != 1+i%2 {
			t.Errorf("cell %d: %s on %s, DOP %d, data node %d, %d calls, %d streams",
				i, m.Workload, m.Engine, m.DOP, m.DataNode, m.Total.Count, m.Streams)
		}
	}

	w = &counter{stopAt: 1, cancelI: -1}
	rec = &memRecorder{}
	got, err = Run(context.Background(), plan, w, rec, &lines{})
	if err == nil || err.Error() != "stop here" || len(got) != 2 || len(rec.kinds) != 4 {
		t.Errorf("Stop at cell 1: %d cells, %d items stored, err %v; want 2 cells stored and the workload's error",
			len(got), len(rec.kinds), err)
	}
}

// TestRunDiskReads: a cell whose window read from disk is noted.
func TestRunDiskReads(t *testing.T) {
	disk := func() (func() (*result.Usage, error), error) {
		return func() (*result.Usage, error) { return &result.Usage{ReadFromDisk: true}, nil }, nil
	}
	prog := &lines{}
	got, err := Run(context.Background(), Plan{Cells: cells(-1), Duration: 20 * time.Millisecond, Monitor: disk},
		&counter{stopAt: -1, cancelI: -1}, &memRecorder{}, prog)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(prog.notes) != 1 || !strings.Contains(prog.notes[0], "cell 0 read from disk") {
		t.Errorf("notes %q; want one saying cell 0 read from disk", prog.notes)
	}
}

// TestRunInterrupted: Ctrl-C in a cell keeps it, marked cut short, and
// ends the sweep with the context's error before the next cell.
func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &counter{stopAt: -1, cancelI: 0, cancel: cancel}
	rec := &memRecorder{}
	got, err := Run(ctx, Plan{Cells: cells(-1, -1, -1), Duration: 5 * time.Second}, w, rec, &lines{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want context.Canceled", err)
	}
	if len(got) != 1 || !got[0].Interrupted || len(rec.kinds) != 3 {
		t.Fatalf("%d cells, %d items stored; want the first cell stored, cut short", len(got), len(rec.kinds))
	}
	if got[0].Measured >= 5*time.Second {
		t.Errorf("cut cell measured %v; want less than its 5s window", got[0].Measured)
	}
	if !slices.Contains(w.log, "close") || slices.Contains(w.log, "begin 1") {
		t.Errorf("calls %q: want the workload closed and cell 1 never begun", w.log)
	}
}

// TestRunCut: a cell whose stream is stuck in a call is cut after the
// grace, stored with why even though it counted nothing, and the sweep
// stops with an error saying so; the workload is closed.
func TestRunCut(t *testing.T) {
	w := &counter{stopAt: -1, cancelI: -1, stuck: make(chan struct{})}
	defer close(w.stuck)
	rec := &memRecorder{}
	got, err := Run(context.Background(),
		Plan{Cells: cells(-1, -1), Duration: 100 * time.Millisecond, CutGrace: 100 * time.Millisecond}, w, rec, &lines{})
	if err == nil || !strings.Contains(err.Error(), "cell 0") || !strings.Contains(err.Error(), "was cut") {
		t.Fatalf("err = %v; want the sweep stopped at the cut cell", err)
	}
	if len(got) != 1 || got[0].Cut == "" || !got[0].Interrupted || got[0].Total.Count != 0 ||
		!slices.Contains(rec.kinds, "noop.Cell") {
		t.Fatalf("cells %+v, stored %q: want cell 0 stored, cut", got, rec.kinds)
	}
	if !slices.Contains(w.log, "close") || slices.Contains(w.log, "begin 1") {
		t.Errorf("calls %q: want the workload closed and cell 1 never begun", w.log)
	}
}

// TestRunInterruptedInWarmup: Ctrl-C during a cell's warm-up stores no
// cell (a 0 would read as a figure), notes why, and ends the sweep with
// the context's error.
func TestRunInterruptedInWarmup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &counter{stopAt: -1, cancelI: 0, cancel: cancel}
	rec, prog := &memRecorder{}, &lines{}
	got, err := Run(ctx, Plan{Cells: cells(-1, -1), Warmup: 5 * time.Second, Duration: time.Second}, w, rec, prog)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want context.Canceled", err)
	}
	if len(got) != 0 || slices.Contains(rec.kinds, "noop.Cell") || len(prog.measured) != 0 {
		t.Errorf("%d cells returned, stored %q, reported %v; want no cell", len(got), rec.kinds, prog.measured)
	}
	if len(prog.notes) != 1 || !strings.Contains(prog.notes[0], "cell 0 (") ||
		!strings.Contains(prog.notes[0], "interrupted during its 5s warm-up: nothing measured, not stored") {
		t.Errorf("notes %q; want one saying cell 0 was cut in its warm-up and not stored", prog.notes)
	}
	if !slices.Contains(w.log, "close") || slices.Contains(w.log, "end 0") {
		t.Errorf("calls %q: want the workload closed and no End for the unmeasured cell", w.log)
	}
}

// TestRunSwitches: a plan's Switch turns the monitor, the series and the
// trace off for the cells it names, and only for those.
func TestRunSwitches(t *testing.T) {
	usage := func() (func() (*result.Usage, error), error) {
		return func() (*result.Usage, error) { return &result.Usage{}, nil }, nil
	}
	plan := Plan{Cells: cells(-1, -1, -1, -1), Duration: 20 * time.Millisecond, Trace: 10, Monitor: usage,
		Switch: func(c Cell) Switches {
			return Switches{NoSysmon: c.Index == 1, NoSeries: c.Index == 2, NoTrace: c.Index == 3}
		}}
	got, err := Run(context.Background(), plan, &counter{stopAt: -1, cancelI: -1}, &memRecorder{}, &lines{})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range got {
		sysmon, series, trace := m.Usage != nil, m.PerSecond != nil, len(m.Trace) > 0
		if sysmon != (i != 1) || series != (i != 2) || trace != (i != 3) {
			t.Errorf("cell %d: sysmon %v, series %v, trace %v; want only cell 1 without sysmon, 2 without the series, "+
				"3 without the trace", i, sysmon, series, trace)
		}
	}
}
