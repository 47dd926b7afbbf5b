// Package sweep runs a workload's cells: streams × DOP × placement ×
// repeats, each a timed drive cell, with the data prewarmed on the node a
// cell asks for, each cell stored as soon as it is measured, and Ctrl-C
// keeping what was measured.
//
// A workload (tpcc-ro, transtats) implements Workload: it loads or opens
// its data, prewarms it, names its transaction or query types, opens a
// stream, and says what to store about itself and about each cell. Run
// knows no SQL and no engine; the command that calls it knows no cells:
// it parses flags into a configuration, calls the workload's package and
// renders what Run reports through Progress.
//
// A plan may pace its cells (Plan.Pace: think time or an arrival rate);
// by default they are closed loops. sweep never prints: progress, notes
// and rows go through Progress.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"time"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/topo"
)

// Recorder stores a run's items as they are measured (the results store
// implements it); an entry is made by its kind's Of (result.KindCell.Of).
type Recorder interface {
	Add(e result.Entry) error
}

// Teller hears what a sweep does: the current step (a line that may be
// overwritten) and notes worth keeping.
type Teller interface {
	Say(step string)
	Note(line string)
}

// Progress is a Teller that also hears of each cell when it is stored.
type Progress[T any] interface {
	Teller
	Measured(c Cell, item T)
}

// Description is what a workload says about itself for each cell.
type Description struct {
	Workload string // e.g. "tpcc-ro"
	Engine   string // e.g. "sqlite"
	// InCgo says the streams' calls wait in cgo (SQLite, DuckDB): cells
	// then run with a P to spare per stream (see drive.Config.Procs).
	InCgo bool
}

// Outcome is what a workload makes of one measured cell.
type Outcome[T any] struct {
	Item  T              // what Progress.Measured and Run's result get
	Store []result.Entry // stored in order; none: the cell was not measured
	Notes []string
	Stop  error // ends the sweep after the cell is stored
}

// Workload is one workload on one engine, opened for a sweep. Run calls
// Open first and Close last (after an Open that failed too: Close gives
// back whatever part of it was opened); the other methods between, from one
// goroutine, except Stream, which Run calls on each stream's own pinned
// thread.
type Workload[T any] interface {
	Describe() Description
	Types() []string // transaction or query types; a cell runs them all or one
	// Open loads the data where it is missing, or opens it, and returns
	// what to store about the load and the engine.
	Open(ctx context.Context, tell Teller) ([]result.Entry, error)
	// Prewarm reads the data and checks where it landed. Run calls it on
	// a thread of its own, pinned to node and bound to its memory, so
	// that first touch puts the pages there; node -1 leaves pages where
	// they are.
	Prewarm(ctx context.Context, node int, tell Teller) ([]result.Entry, error)
	// Begin prepares a cell (its DOP, say) before its streams open.
	Begin(ctx context.Context, c Cell) error
	Stream(ctx context.Context, c Cell, stream int) (drive.Stream, error)
	// End judges a cell: m is nil when it could not start (err says why).
	End(ctx context.Context, c Cell, m *result.Cell, err error) Outcome[T]
	Close() error
}

// Plan is a sweep's cells and how each runs.
type Plan struct {
	Cells    []Cell
	Warmup   time.Duration
	Duration time.Duration
	// Trace is how many calls each stream records; 0 = none.
	Trace int
	// MaxConsecutiveErrors stops a stream (0: drive's default).
	MaxConsecutiveErrors int
	// CutGrace is how long streams have to return from their calls after
	// a window closes before the cell is cut (0: drive's default).
	CutGrace time.Duration
	Monitor  drive.StartMonitor // optional
	// Switch, when set, turns numalab's own instruments off for a cell,
	// to measure what they cost (run oltp --monitor).
	Switch func(c Cell) Switches
	// Pace, when set, spaces cell c's calls (see drive.Pace); before are
	// the cells this sweep measured so far, so that a load curve can set
	// its rates from a capacity it measured first. nil: every cell is a
	// closed loop.
	Pace func(c Cell, before []*result.Cell) drive.Pace
}

// Switches are numalab's own instruments a cell runs without; the zero
// value runs it with every one the plan asks for.
type Switches struct {
	// NoSysmon runs the cell without Plan.Monitor: no CPU, context-switch
	// or disk figures, hardware counters, or disk-read check.
	NoSysmon bool
	NoSeries bool // no per-second series (drive.Config.NoSeries)
	NoTrace  bool // no per-call trace, whatever Plan.Trace says
}

// config is drive's configuration of cell c under plan.
func (plan Plan) config(c Cell, types []string, procs int, before []*result.Cell) drive.Config {
	cfg := drive.Config{
		Types:                types,
		Streams:              c.Streams,
		CPUs:                 c.Place.Streams, // stream i on Streams[i mod len]: cores first
		Spread:               c.Spread,
		Cores:                c.Cores,
		Warmup:               plan.Warmup,
		Duration:             plan.Duration,
		TraceLimit:           plan.Trace,
		MaxConsecutiveErrors: plan.MaxConsecutiveErrors,
		CutGrace:             plan.CutGrace,
		Monitor:              plan.Monitor,
		Point:                c.Point,
		Procs:                procs,
	}
	if plan.Pace != nil {
		cfg.Pace = plan.Pace(c, before)
	}
	if plan.Switch != nil {
		sw := plan.Switch(c)
		if sw.NoSysmon {
			cfg.Monitor = nil
		}
		if sw.NoTrace {
			cfg.TraceLimit = 0
		}
		cfg.NoSeries = sw.NoSeries
	}
	return cfg
}

// Run runs every cell of plan on w in order, storing each through rec as
// soon as it is measured, and returns the items of the workload's own
// cells: a neighbour pair's cells are stored apart (memlat.NeighbourCell)
// and reported to prog, but not returned, so that a headline or a table
// made from Run's result never mixes them with the plain cells. A cell that read
// from disk in its window (plan.Monitor says so) is stored, flagged in the
// cell, and noted. Ctrl-C (ctx) ends
// the current cell early; it is stored, marked cut short, and Run returns
// ctx's error with everything measured. A cell whose streams did not
// return from their calls within drive's grace after its window is stored
// with why it was cut, and Run stops with an error saying so. A cell cut before any call
// completed in its window (in its warm-up, say) measured nothing: it is
// noted, not stored.
func Run[T any](ctx context.Context, plan Plan, w Workload[T], rec Recorder, prog Progress[T]) ([]T, error) {
	items, err := w.Open(ctx, prog)
	if serr := store(rec, items); err != nil || serr != nil {
		// An Open that failed part-way (cancelled after the engine
		// opened, say) may hold what it opened: Close gives it back.
		return nil, errors.Join(err, serr, w.Close())
	}
	defer w.Close()
	d := w.Describe()
	var out []T
	var before []*result.Cell // measured so far, for plan.Pace
	warm := -2                // no prewarm yet
	for i, c := range plan.Cells {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if c.DataNode != warm {
			var items []result.Entry
			err := onNode(c.DataNode, func() (err error) {
				items, err = w.Prewarm(ctx, c.DataNode, prog)
				return err
			})
			if serr := store(rec, items); err != nil || serr != nil {
				return out, errors.Join(err, serr)
			}
			warm = c.DataNode
		}
		if err := w.Begin(ctx, c); err != nil {
			return out, err
		}
		types := w.Types()
		if c.Type != "" {
			types = []string{c.Type}
		}
		procs := 0
		if d.InCgo {
			procs = drive.ProcsForCgo(c.Streams)
		}
		cfg := plan.config(c, types, procs, before)
		paced := ""
		if !cfg.Pace.Closed() {
			paced = ", " + cfg.Pace.String()
		}
		prog.Say(fmt.Sprintf("cell %d/%d: %s%s: %v warm-up + %v", i+1, len(plan.Cells), c, paced, plan.Warmup, plan.Duration))
		nb, err := startNeighbour(ctx, c)
		if err != nil {
			return out, err
		}
		m, err := drive.Run(ctx, cfg, func(ctx context.Context, stream int) (drive.Stream, error) {
			return w.Stream(ctx, c, stream)
		})
		if m != nil {
			m.Engine, m.Workload, m.DOP, m.DataNode = d.Engine, d.Workload, c.DOP, c.DataNode
			before = append(before, m)
		}
		if m != nil && m.Interrupted && m.Cut == "" && m.Total.Count == 0 && m.Total.Errors == 0 {
			// Cut in its warm-up, or before a call completed in its
			// window: the cell measured nothing, and a 0 would read as
			// a figure.
			prog.Note(fmt.Sprintf("note: cell %d (%s) was interrupted %s: nothing measured, not stored",
				c.Index, c, cutWhen(m, plan.Warmup)))
			return out, errors.Join(ctx.Err(), err)
		}
		o := w.End(ctx, c, m, err)
		if o.Store, err = nb.finish(m, o.Store); err != nil {
			return out, errors.Join(o.Stop, err)
		}
		if len(o.Store) > 0 {
			if len(c.Neighbour) == 0 { // a neighbour pair is stored apart, and returned by no Run
				out = append(out, o.Item)
			}
			if serr := store(rec, o.Store); serr != nil {
				return out, errors.Join(o.Stop, serr)
			}
			prog.Measured(c, o.Item)
		}
		if m != nil && m.Usage != nil && m.Usage.ReadFromDisk {
			prog.Note(fmt.Sprintf("note: cell %d read from disk during its window: the data was not all in memory, "+
				"so the cell measured the disk too", c.Index))
		}
		for _, n := range o.Notes {
			prog.Note(n)
		}
		switch {
		case o.Stop != nil:
			return out, o.Stop
		case m == nil:
			return out, err
		case m.Cut != "":
			return out, errors.Join(fmt.Errorf("cell %d (%s) was cut: %s; the sweep stops here (%d cells stored)",
				c.Index, c, m.Cut, len(out)), ctx.Err())
		case m.Interrupted:
			return out, ctx.Err()
		}
	}
	return out, nil
}

// cutWhen says when an interrupted cell was cut: in its warm-up, or
// after how much of its window.
func cutWhen(m *result.Cell, warmup time.Duration) string {
	if m.Measured == 0 {
		return fmt.Sprintf("during its %v warm-up", warmup)
	}
	return fmt.Sprintf("%v into its window, before a call completed", m.Measured.Round(time.Millisecond))
}

func store(rec Recorder, items []result.Entry) error {
	for _, it := range items {
		if err := rec.Add(it); err != nil {
			return err
		}
	}
	return nil
}

// onNode runs fn on an OS thread of its own, pinned to node's CPUs (if it has
// any) and bound to its memory, so that what fn touches first lands on
// node; node < 0 runs fn on a thread of its own, unplaced. The thread is
// never handed back to the runtime: it ends with its pinning and policy.
func onNode(node int, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if node >= 0 {
			if err := placeOnNode(node); err != nil {
				errc <- fmt.Errorf("placing a thread on node %d: %w", node, err)
				return
			}
		}
		errc <- fn()
	}()
	return <-errc
}

func placeOnNode(node int) error {
	t, err := topo.FromSysfs("/")
	if err != nil {
		return err
	}
	p, err := place.Resolve(t, "node="+strconv.Itoa(node))
	if err == nil {
		if err := place.Pin(p.CPUs); err != nil {
			return err
		}
	}
	return place.SetMemPolicy(place.Policy{Mode: place.Bind, Nodes: []int{node}})
}
