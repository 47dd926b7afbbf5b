package tpcc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"time"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

// Sweep is tpcc-ro as a sweep.Workload: each measured cell is a
// *result.Cell, stored as result.KindCell; the load record (KindLoad) is
// stored again after each prewarm.
type Sweep struct {
	cfg      RunConfig
	dataNode int // the first cell's: binds a managed PostgreSQL server's memory
	w        *Workload
	close    func() error
	ld       LoadRecord
	server   map[string]string // a managed server's extra settings
}

var _ sweep.Workload[*result.Cell] = (*Sweep)(nil)

// NewSweep is tpcc-ro configured by cfg (checked); dataNode is the first
// cell's data node.
func NewSweep(cfg RunConfig, dataNode int) *Sweep {
	return &Sweep{cfg: cfg, dataNode: dataNode, ld: LoadRecord{Engine: cfg.Engine, Where: cfg.DB}}
}

// Describe names the workload and engine.
func (s *Sweep) Describe() sweep.Description {
	name := "tpcc-ro"
	if s.cfg.Augmented {
		name = "tpcc-ro-augmented"
	}
	return sweep.Description{Workload: name, Engine: s.cfg.Engine, InCgo: !isServer(s.cfg.Engine)}
}

// Types are Order-Status and Stock-Level.
func (s *Sweep) Types() []string { return TxNames }

// Open opens the run's TPC-C database, loading it first where needed
// (Prepare). A managed PostgreSQL server's memory is bound to the first
// cell's data node.
func (s *Sweep) Open(ctx context.Context, tell sweep.Teller) ([]result.Entry, error) {
	w, closeDB, err := s.open(ctx, tell.Say)
	if err != nil {
		return nil, err
	}
	s.w, s.close = w, closeDB
	s.ld.Meta = w.Meta()
	var items []result.Entry
	if eng := w.Engine(); eng != nil {
		if info, err := eng.Describe(ctx); err == nil {
			items = append(items, engine.KindInfo.Of(info))
		}
	}
	return items, nil
}

func (s *Sweep) open(ctx context.Context, say func(string)) (*Workload, func() error, error) {
	cfg := s.cfg
	start := time.Now()
	src := Source{
		Engine: cfg.Engine,
		Where:  engine.Options{Path: cfg.DB, DSN: cfg.DSN, ConnectTimeout: cfg.ConnectTimeout},
		Load: LoadConfig{
			Warehouses: cfg.Warehouses,
			Seed:       cfg.Seed,
			Progress: func(done, total int64) {
				el := time.Since(start).Seconds()
				say(fmt.Sprintf("loading %s into %s: %d/%d rows (%.0f%%), %.0f rows/s",
					sweep.Count(cfg.Warehouses, "warehouse"), s.ld.Where, done, total, 100*float64(done)/float64(total),
					float64(done)/max(el, 1e-9)))
			},
		},
		Run:    Options{Augmented: cfg.Augmented, Seed: cfg.Seed},
		Opened: func(info engine.Info) { s.ld.Where = info.Where },
	}
	if cfg.DSN == "" {
		src.Where.ServerSettings = s.server
	}
	src.Where = src.Where.BindServer(s.dataNode)
	say("opening " + cfg.Engine)
	if !isServer(cfg.Engine) {
		unlock, err := engine.LockDir(ctx, filepath.Dir(cfg.DB), say)
		if err != nil {
			return nil, nil, err
		}
		defer unlock()
	}
	w, st, err := Prepare(ctx, src)
	var we *WarehousesError
	switch {
	case errors.As(err, &we):
		return nil, nil, fmt.Errorf("%w (use --warehouses %d, or another --db)", err, we.Have)
	case errors.Is(err, ErrNotTPCC):
		return nil, nil, fmt.Errorf("%w (choose another --db, or remove the file if numalab made it)", err)
	case err != nil:
		return nil, nil, err
	}
	if st != nil {
		s.ld.Loaded, s.ld.Stats, s.ld.RowsPerSec = true, st, st.RowsPerSecond()
	}
	return w, w.Engine().Close, nil
}

// Prewarm reads the whole database from the calling thread, which the
// sweep has placed on node (evicting the file's cached pages first when
// node ≥ 0), then finds where the data is: the SQLite file's
// page-cache pages, or PostgreSQL's shared memory. DuckDB's buffers cannot
// be located. It stores the load record again, with this prewarm added.
func (s *Sweep) Prewarm(ctx context.Context, node int, tell sweep.Teller) ([]result.Entry, error) {
	where := ""
	if node >= 0 {
		where = fmt.Sprintf(" onto node %d", node)
	}
	tell.Say(fmt.Sprintf("prewarming %s%s", s.ld.Where, where))
	pw := PrewarmRecord{DataNode: node}
	start := time.Now()
	var err error
	if pw.Stats, err = s.w.Prewarm(ctx, node >= 0); err != nil {
		return nil, fmt.Errorf("prewarming tpcc on %s: %w", s.cfg.Engine, err)
	}
	pw.Seconds = time.Since(start).Seconds()
	switch spec, _ := engine.Lookup(s.cfg.Engine); {
	case spec.Placement.FilePages:
		var pages place.PageSummary
		if node >= 0 {
			pages, err = place.MoveFilePages(s.w.Path(), node)
		} else {
			pages, err = place.FilePageNodes(s.w.Path())
		}
		if err != nil {
			return nil, err
		}
		pw.Pages = &pages
	case node >= 0 && pw.Stats.Placement != nil:
		if f := pw.Stats.Placement.Local(node); f < 0.99 {
			return nil, fmt.Errorf("placing the %s server's data memory (%s) on node %d: only %.1f%% landed there",
				s.cfg.Engine, spec.Placement.ServerMemory, node, 100*f)
		}
	}
	s.ld.Prewarm = append(s.ld.Prewarm, pw)
	return []result.Entry{KindLoad.Of(s.ld)}, nil
}

// ServerSettings are settings a managed PostgreSQL or MariaDB server
// starts with (a library to preload, a log to keep), set before Open; a
// --dsn server is never started, so they do not apply to it.
func (s *Sweep) ServerSettings(m map[string]string) { s.server = m }

// Session sets the statements each PostgreSQL or MariaDB stream opened
// from now on runs first on its connection (Options.Session), between
// Open and the next cell's streams: run oltp --monitor switches a
// facility per cell.
func (s *Sweep) Session(stmts []string) { s.w.opt.Session = stmts }

// Begin has nothing to prepare: tpcc-ro has no DOP.
func (s *Sweep) Begin(context.Context, sweep.Cell) error { return nil }

// Stream opens a stream with its own seeded RNG.
func (s *Sweep) Stream(ctx context.Context, c sweep.Cell, stream int) (drive.Stream, error) {
	return s.w.OpenStream(ctx, rand.New(rand.NewPCG(uint64(s.cfg.Seed), uint64(stream)+uint64(c.Index)<<32)))
}

// End stores the cell; streams that failed to close end the sweep. A cell
// in whose window no transaction succeeded did not measure the hardware
// (the server is gone, every call failed, every stream stopped): it is not
// stored, and the sweep ends with the reason, so the run is stored as
// failed. A cell every stream of which stopped early is stored with its
// stops, and ends the sweep.
func (s *Sweep) End(_ context.Context, c sweep.Cell, m *result.Cell, err error) sweep.Outcome[*result.Cell] {
	if m == nil {
		return sweep.Outcome[*result.Cell]{Stop: err}
	}
	if m.Total.Count == 0 {
		return sweep.Outcome[*result.Cell]{Stop: errors.Join(
			fmt.Errorf("running cell %d (%s): no transaction succeeded in its %v window, so it was not stored: %s",
				c.Index, c, m.Measured, noMeasure(m)), err)}
	}
	o := sweep.Outcome[*result.Cell]{Item: m, Store: []result.Entry{result.KindCell.Of(*m)}, Stop: err}
	if len(m.Stopped) == m.Streams && !m.Interrupted {
		o.Stop = errors.Join(
			fmt.Errorf("running cell %d (%s): every stream stopped before the window closed (stored with its stops): %s",
				c.Index, c, stopText(m.Stopped[0])), err)
	}
	return o
}

// noMeasure says why a cell counted no successful transaction.
func noMeasure(m *result.Cell) string {
	switch {
	case m.Total.Errors > 0:
		return fmt.Sprintf("all %s failed; the first: %s", sweep.Count(int(m.Total.Errors), "call"), m.Total.FirstError)
	case len(m.Stopped) > 0:
		return stopText(m.Stopped[0])
	}
	return "no call completed: each took longer than the window (try a longer --duration)"
}

func stopText(st result.StreamStop) string {
	return fmt.Sprintf("stream %d stopped %v after the warm-up began: %s",
		st.Stream, st.At.Round(time.Millisecond), st.Reason)
}

// Close closes the database (and stops a managed server).
func (s *Sweep) Close() error {
	if s.close == nil {
		return nil
	}
	return s.close()
}
