package null

import (
	"context"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/topo"
)

// recorder keeps what a sweep stores, and what it notes.
type recorder struct {
	entries []result.Entry
	notes   []string
}

func (r *recorder) Add(e result.Entry) error   { r.entries = append(r.entries, e); return nil }
func (r *recorder) Say(string)                 {}
func (r *recorder) Note(line string)           { r.notes = append(r.notes, line) }
func (r *recorder) Measured(sweep.Cell, *Cell) {}

func (r *recorder) kinds() []string {
	var k []string
	for _, e := range r.entries {
		k = append(k, e.Kind())
	}
	return k
}

// cellsHere checks cfg and lays its cells out on this host.
func cellsHere(t *testing.T, cfg RunConfig) ([]sweep.Cell, []Layout, []Pairing) {
	t.Helper()
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	host, err := topo.FromSysfs("/")
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Cells(host)
}

// short runs cfg's sweep on this host, briefly.
func short(t *testing.T, cfg RunConfig) ([]*Cell, *recorder) {
	t.Helper()
	cfg.Duration, cfg.Warmup, cfg.Repeat = time.Second, 300*time.Millisecond, 1
	cells, layout, m := cellsHere(t, cfg)
	rec := &recorder{}
	out, err := sweep.Run(context.Background(), cfg.Plan(cells), NewSweep(cfg, layout, m), rec, rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(cells) {
		t.Fatalf("%d cells measured; want %d", len(out), len(cells))
	}
	for _, c := range out {
		t.Logf("%s %s %s: %.0f calls/s, p50 %.1f µs, %.2f context switches per call",
			c.Transport, c.Protocol, c.Pairing, c.Cell.TPS, c.Cell.Total.P50US, c.CtxSwitchesPerCall)
		if c.Cell.Total.Count == 0 || c.Cell.Total.Errors != 0 || c.PerStream != c.Cell.TPS/float64(c.Cell.Streams) {
			t.Errorf("cell %d: %+v; want calls, no errors, per stream the total over streams", c.Cell.Index, c.Cell.Total)
		}
		if c.Cell.Usage == nil || c.CtxSwitchesPerSec <= 0 || c.CtxSwitchesPerCall <= 0 {
			t.Errorf("cell %d: no context switches (%s)", c.Cell.Index, c.Cell.UsageError)
		}
	}
	return out, rec
}

func TestSweepSQLite(t *testing.T) {
	cfg := DefaultRunConfig()
	cfg.Engine, cfg.Streams = "sqlite", []int{1, 2}
	out, rec := short(t, cfg)
	if out[0].Transport != InProcess || out[0].Protocol != "" || out[1].Cell.Streams != 2 {
		t.Errorf("cells %+v, %+v; want in-process cells of 1 and 2 streams", out[0], out[1])
	}
	if !slices.Equal(rec.kinds(), []string{string(KindMatrix), string(KindCell), string(KindCell)}) {
		t.Errorf("stored %v; want the matrix and two cells", rec.kinds())
	}
}

// TestSweepPostgres runs every pairing this host offers over both
// transports on a managed server, and checks that each backend ran
// where its pairing put it.
func TestSweepPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	cfg := DefaultRunConfig()
	cfg.Protocol = Simple
	host, err := topo.FromSysfs("/")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Duration, cfg.Warmup, cfg.Repeat = time.Second, 300*time.Millisecond, 1
	cells, layout, m := cfg.Cells(host)
	// The process's CPUs: its main thread's may be an earlier test's
	// pinning (a pinned stream that ran on it; Go keeps the main thread).
	before, err := place.ProcessCPUs()
	if err != nil {
		t.Fatal(err)
	}
	// As in numalab, not as go test leaves it: GOMAXPROCS the runtime's
	// to change (its default counts the calling thread's CPUs).
	t.Cleanup(func() { runtime.GOMAXPROCS(runtime.GOMAXPROCS(0)) })
	runtime.LockOSThread()
	if err := place.Pin(before); err != nil {
		t.Fatal(err)
	}
	runtime.SetDefaultGOMAXPROCS()
	runtime.UnlockOSThread()
	procs := runtime.GOMAXPROCS(0)
	// The main thread as a pinned stream that ran on it leaves it (CI: the
	// sweep took its CPUs for the process's, and left GOMAXPROCS at 1).
	if len(before) > 1 {
		if err := place.PinPID(os.Getpid(), before[:1]); err != nil {
			t.Fatal(err)
		}
	}
	// A cell that completed no call in its window (every call still waiting
	// for its answer: a backend not run for a second on an overloaded
	// machine; once in CI beside stress-ng and a callgrind run) is
	// measured again, all cells, with a window three times as long.
	var out []*Cell
	var rec *recorder
	for attempt := 1; ; attempt++ {
		rec = &recorder{}
		check := &affinityCheck{Sweep: NewSweep(cfg, layout, m), t: t, procs: procs}
		out, err = sweep.Run(context.Background(), cfg.Plan(cells), check, rec, rec)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(out, func(c *Cell) bool { return c.NoCall != "" })
		if i < 0 || attempt == 2 {
			break
		}
		t.Logf("cell %d (%s %s) completed no call: %s; measuring again with %v windows",
			i, out[i].Transport, out[i].Pairing, out[i].NoCall, 3*cfg.Duration)
		cfg.Duration *= 3
	}
	if after, err := place.AffinityPID(os.Getpid()); err != nil || !slices.Equal(after, before) {
		t.Errorf("after the sweep the process is on cpus %v (%v); want %v as before", after, err, before)
	}
	if p := runtime.GOMAXPROCS(0); p != procs {
		t.Errorf("after the sweep GOMAXPROCS is %d; want %d as before", p, procs)
	}
	avail := 0
	for _, p := range m {
		if p.Unavailable == "" {
			avail++
		} else if !slices.ContainsFunc(rec.notes, func(n string) bool { return n == "note: "+p.String() }) {
			t.Errorf("no note says %v", p)
		}
	}
	if len(out) != 2*avail {
		t.Fatalf("%d cells; want %d (2 transports x %d pairings)", len(out), 2*avail, avail)
	}
	for _, c := range out {
		t.Logf("%s %s %s: %.0f calls/s, p50 %.1f µs, %.2f context switches per call",
			c.Transport, c.Protocol, c.Pairing, c.Cell.TPS, c.Cell.Total.P50US, c.CtxSwitchesPerCall)
		if c.Cell.Total.Count == 0 || c.Cell.Total.Errors != 0 || c.NoCall != "" || c.Protocol != Simple ||
			c.CtxSwitchesPerCall <= 0 {
			t.Errorf("cell %d: %+v", c.Cell.Index, c)
		}
	}
	if k := rec.kinds(); k[0] != string(KindMatrix) || k[len(k)-1] != string(KindCell) {
		t.Errorf("stored %v; want the matrix first", k)
	}
}

// affinityCheck wraps the workload: each stream it opens must have its
// backend on the pairing's backend CPU, its client back on the client's,
// and GOMAXPROCS its value before the sweep (the runtime lowers it to
// the pinned process's CPUs within a second or two unless it is held: by
// the second cell here).
type affinityCheck struct {
	*Sweep
	t     *testing.T
	procs int
}

func (a *affinityCheck) Stream(ctx context.Context, c sweep.Cell, i int) (drive.Stream, error) {
	s, err := a.Sweep.Stream(ctx, c, i)
	if err != nil {
		return nil, err
	}
	l := a.layout[c.Index]
	pid := 0
	if s, ok := s.(*serverStream); ok {
		pid = s.pid
	}
	got, err := place.AffinityPID(pid)
	if err != nil || !slices.Equal(got, []int{l.Pairing.Backend}) {
		a.t.Errorf("cell %d (%v): backend %d on cpus %v (%v)", c.Index, l.Pairing, pid, got, err)
	}
	if mine, err := place.Affinity(); err != nil || !slices.Equal(mine, c.Place.CPUs) {
		a.t.Errorf("cell %d: client on cpus %v (%v); want %v", c.Index, mine, err, c.Place.CPUs)
	}
	if main, err := place.AffinityPID(os.Getpid()); err != nil || !slices.Equal(main, c.Place.CPUs) {
		a.t.Errorf("cell %d: the process's main thread on cpus %v (%v); want the client's %v", c.Index,
			main, err, c.Place.CPUs)
	}
	if p := runtime.GOMAXPROCS(0); p != a.procs {
		a.t.Errorf("cell %d: GOMAXPROCS %d; want %d as before the sweep", c.Index, p, a.procs)
	}
	return s, nil
}

// TestEndFlagsACellWithNoCall: a cell that ran its whole window and
// completed no call, failing none, is stored flagged and noted, never as
// a bare zero; a cell with calls, or one cut short, is not flagged.
func TestEndFlagsACellWithNoCall(t *testing.T) {
	cfg := DefaultRunConfig()
	p := Pairing{Name: OtherCore, Client: 0, Backend: 1}
	w := NewSweep(cfg, []Layout{{Transport: Unix, Pairing: p}}, []Pairing{p})
	c := sweep.Cell{Point: drive.Point{Index: 0, Streams: 1}}
	for _, tc := range []struct {
		m    result.Cell
		flag bool
	}{
		{result.Cell{Streams: 1, Duration: time.Second, Measured: time.Second}, true},
		{result.Cell{Streams: 1, Duration: time.Second, Measured: time.Second, TPS: 5,
			Total: result.TxStats{Count: 5}}, false},
		{result.Cell{Streams: 1, Duration: time.Second, Measured: time.Second, Total: result.TxStats{Errors: 3}}, false},
		{result.Cell{Streams: 1, Duration: time.Second, Measured: 300 * time.Millisecond, Interrupted: true}, false},
	} {
		o := w.End(context.Background(), c, &tc.m, nil)
		if got := o.Item.NoCall != ""; got != tc.flag || (len(o.Notes) > 0) != tc.flag || len(o.Store) != 1 {
			t.Errorf("count %d, errors %d, interrupted %v: NoCall %q, notes %q, %d stored; want flagged %v",
				tc.m.Total.Count, tc.m.Total.Errors, tc.m.Interrupted, o.Item.NoCall, o.Notes, len(o.Store), tc.flag)
		}
		if tc.flag && !strings.Contains(o.Notes[0], "no call completed in the 1s window") {
			t.Errorf("note %q", o.Notes[0])
		}
	}
}
