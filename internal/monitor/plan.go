package monitor

import (
	"context"
	"fmt"
	"slices"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

// Slot is what one cell of the plan runs: a facility on or off, in a
// repeat.
type Slot struct {
	Facility string `json:"facility"`
	On       bool   `json:"on"`
	Repeat   int    `json:"repeat"` // from 0
	// Paced says the cell ran at the paced load of TwoLoads, not at
	// saturation.
	Paced bool `json:"paced,omitempty"`
}

// State is "on" or "off".
func (s Slot) State() string {
	if s.On {
		return "on"
	}
	return "off"
}

// Plan lays out repeat pairs of cells per facility, each a copy of
// template (one stream count and placement) with its own index.
// Repetitions are the outer loop and facilities the inner one, so that
// slow drift spreads over every facility; each facility's pair runs off
// then on, or on then off, in turn (off-on for the first facility in the
// first repeat), so that drift within a pair falls on both sides alike.
// Slot i says what cell i runs.
func Plan(template sweep.Cell, fs []Facility, repeat int) ([]sweep.Cell, []Slot) {
	var cells []sweep.Cell
	var slots []Slot
	for r := range repeat {
		for i, f := range fs {
			first := (r+i)%2 == 1 // on first
			for _, on := range []bool{first, !first} {
				c := template
				c.Index, c.Repeat = len(cells), r
				cells = append(cells, c)
				slots = append(slots, Slot{Facility: f.Name, On: on, Repeat: r})
			}
		}
	}
	return cells, slots
}

// Switch is sweep.Plan.Switch for the slots of Plan.
func Switch(slots []Slot) func(c sweep.Cell) sweep.Switches {
	return func(c sweep.Cell) sweep.Switches {
		s := slots[c.Index]
		f, _ := Lookup(s.Facility)
		return f.Switches(s.On)
	}
}

// Cell is one measured cell of a monitoring run: what it ran and what it
// measured.
type Cell struct {
	Slot
	Cell result.Cell `json:"cell"`
}

// Kinds of a monitoring run's stored items, and the run's kind.
const (
	KindCell      result.Kind[Cell]     = "monitor.Cell"
	KindAnalysis  result.Kind[Analysis] = "monitor.Analysis"
	RunKind                             = "oltp-monitor"   // 'numalab run oltp --monitor'
	NullRunKind                         = "null-monitor"   // 'numalab run null --monitor'
	ReportRunKind                       = "report-monitor" // 'numalab run report --monitor'
	SQLRunKind                          = "sql-monitor"    // 'numalab run sql --monitor'
)

// Inner is a workload whose cells Wrap switches: its sweep, the hook
// that sets the SQL each stream's session runs first from the next cell
// on (tpcc.Sweep.Session, null.Sweep.Session, transtats.Sweep.Session),
// the kind its End stores its item as, and the drive cell an item holds
// (nil when the cell measured nothing).
type Inner[V any] struct {
	Sweep   sweep.Workload[*V]
	Session func(stmts []string)
	Kind    result.Kind[V]
	Cell    func(*V) *result.Cell
}

// Workload runs a sweep (tpcc-ro's, the null transaction's) with each
// cell's facility switched: its session SQL set before the cell's
// streams open, each cell stored as a Cell (never as the inner
// workload's item, which no table may mix with these).
type Workload[V any] struct {
	inner Inner[V]
	slots []Slot
	fs    []Facility // the plan's, in the order they first run
}

// Wrap is inner with the facilities of slots switched per cell.
func Wrap[V any](inner Inner[V], slots []Slot) *Workload[V] {
	w := &Workload[V]{inner: inner, slots: slots}
	for _, s := range slots {
		if f, ok := Lookup(s.Facility); ok && !slices.ContainsFunc(w.fs, func(g Facility) bool { return g.Name == f.Name }) {
			w.fs = append(w.fs, f)
		}
	}
	return w
}

// Describe is the inner workload's.
func (w *Workload[V]) Describe() sweep.Description { return w.inner.Sweep.Describe() }

// Types are the inner workload's.
func (w *Workload[V]) Types() []string { return w.inner.Sweep.Types() }

// Open opens the inner workload.
func (w *Workload[V]) Open(ctx context.Context, tell sweep.Teller) ([]result.Entry, error) {
	return w.inner.Sweep.Open(ctx, tell)
}

// Prewarm prewarms the inner workload.
func (w *Workload[V]) Prewarm(ctx context.Context, node int, tell sweep.Teller) ([]result.Entry, error) {
	return w.inner.Sweep.Prewarm(ctx, node, tell)
}

// Begin switches cell c's facility on or off for the streams it opens.
func (w *Workload[V]) Begin(ctx context.Context, c sweep.Cell) error {
	if c.Index >= len(w.slots) {
		return fmt.Errorf("monitoring: cell %d is not in the plan's %d", c.Index, len(w.slots))
	}
	s := w.slots[c.Index]
	f, ok := Lookup(s.Facility)
	if !ok {
		return fmt.Errorf("monitoring: cell %d: no facility %q", c.Index, s.Facility)
	}
	w.inner.Session(CellSession(w.fs, f, s.On))
	return w.inner.Sweep.Begin(ctx, c)
}

// Stream opens the inner workload's stream.
func (w *Workload[V]) Stream(ctx context.Context, c sweep.Cell, stream int) (drive.Stream, error) {
	return w.inner.Sweep.Stream(ctx, c, stream)
}

// End judges the cell as the inner workload does and stores it as a
// Cell. A cell that completed no call in its window, with no error and no
// stream stopped, is stored all the same, with 0 tps, and the run goes on:
// the inner workload would end the run there, but a stall of one cell
// (seen now and then on PostgreSQL, on idle machines too), or a facility
// whose calls outlast the window, is something to count, not a reason to
// lose the other cells. Analyze leaves such cells out and says how many.
func (w *Workload[V]) End(ctx context.Context, c sweep.Cell, m *result.Cell, err error) sweep.Outcome[Cell] {
	s := w.slots[c.Index]
	if m != nil && err == nil && m.Total.Count == 0 && m.Total.Errors == 0 && len(m.Stopped) == 0 && !m.Interrupted {
		return sweep.Outcome[Cell]{Item: Cell{Slot: s, Cell: *m}, Store: []result.Entry{KindCell.Of(Cell{Slot: s, Cell: *m})},
			Notes: []string{fmt.Sprintf("note: cell %d (%s %s) completed no call in its %v window: stored with 0 tps "+
				"and left out of the analysis (if this is the facility's doing, try a longer --duration)",
				c.Index, s.Facility, s.State(), m.Measured)}}
	}
	o := w.inner.Sweep.End(ctx, c, m, err)
	out := sweep.Outcome[Cell]{Notes: o.Notes, Stop: o.Stop}
	for _, e := range o.Store {
		if e.Kind() != string(w.inner.Kind) {
			out.Store = append(out.Store, e)
			continue
		}
		m := w.inner.Cell(o.Item)
		if m == nil {
			continue
		}
		out.Item = Cell{Slot: s, Cell: *m}
		out.Store = append(out.Store, KindCell.Of(out.Item))
	}
	return out
}

// Close closes the inner workload.
func (w *Workload[V]) Close() error { return w.inner.Sweep.Close() }
