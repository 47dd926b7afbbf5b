package sqlscript

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/pgscript"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sentinel"
	"github.com/numalab/numalab/internal/setting"
	"github.com/numalab/numalab/internal/sweep"
)

// Sweep is a run of scripts as a sweep.Workload: each measured cell is a
// *Cell, stored as result.KindCell and KindCellScripts.
type Sweep struct {
	cfg     RunConfig
	spec    engine.Spec
	dial    dialect
	scripts []pgscript.Weighted
	stored  []Script
	init    *pgscript.Script
	eng     engine.Engine
	halt    halt
	workers *engine.Workers // the cell's parallel workers
	sent    sentinel.Series // the speed sentinel, timed after each cell
	// session are the statements each stream runs first (Session),
	// settings a managed server's extra settings (ServerSettings): run
	// sql --monitor switches a facility per cell.
	session  []string
	settings map[string]string

	mu      sync.Mutex // streams opening at once register here, not in the hot path
	streams []*stream  // the cell's
}

var _ sweep.Workload[*Cell] = (*Sweep)(nil)

// NewSweep is cfg (checked) with its scripts parsed (ParseScripts) and --init's
// (ParseInit, nil for none).
func NewSweep(cfg RunConfig, scripts []pgscript.Weighted, stored []Script, init *pgscript.Script) *Sweep {
	spec, d, _ := dialectOf(cfg.Engine)
	s := &Sweep{cfg: cfg, spec: spec, dial: d, scripts: scripts, stored: stored, init: init}
	s.halt.max = int64(cfg.MaxErrors)
	return s
}

// Describe names the workload and engine.
func (s *Sweep) Describe() sweep.Description {
	return sweep.Description{Workload: "sql", Engine: s.cfg.Engine, InCgo: !s.spec.Server}
}

// Types are the scripts, in the order given (files, then built-ins).
func (s *Sweep) Types() []string {
	names := make([]string, len(s.scripts))
	for i, w := range s.scripts {
		names[i] = w.Script.Name
	}
	return names
}

// Open opens the engine: the --dsn server, in the database and search
// path its DSN gives; numalab's own server; or the --db file, read-write,
// made first when --init is given. It then runs --init, timed. It stores
// the scripts, the engine and what --init did.
func (s *Sweep) Open(ctx context.Context, tell sweep.Teller) ([]result.Entry, error) {
	cfg := s.cfg
	opt := engine.Options{DSN: cfg.DSN, ConnectTimeout: cfg.ConnectTimeout, UserSchema: true, Path: cfg.DB, Write: true,
		ServerSettings: s.settings}
	switch {
	case s.spec.Server && cfg.DSN == "":
		tell.Say("starting " + s.spec.Article + " server")
	case !s.spec.Server && s.init != nil:
		tell.Say("creating " + cfg.DB)
		made, err := engine.Open(ctx, cfg.Engine, engine.Options{Path: cfg.DB, Create: true})
		if err != nil {
			return nil, err
		}
		if err := made.Close(); err != nil {
			return nil, errors.Join(err, s.remove())
		}
	default:
		tell.Say("opening " + cfg.Engine)
	}
	eng, err := engine.Open(ctx, cfg.Engine, opt)
	if err != nil {
		if !s.spec.Server && s.init != nil {
			err = errors.Join(err, s.remove())
		}
		return nil, err
	}
	s.eng = eng
	if m, ok := engine.ManagedServer(eng); ok {
		tell.Say(m.Describe)
	}
	items := []result.Entry{KindScripts.Of(s.stored)}
	if s.init != nil {
		rec, err := s.runInit(ctx, tell)
		if err != nil {
			err = errors.Join(err, s.Close())
			if !s.spec.Server {
				err = errors.Join(err, s.remove())
			}
			return nil, err
		}
		items = append(items, KindInit.Of(rec))
	}
	if info, err := eng.Describe(ctx); err == nil {
		items = append(items, engine.KindInfo.Of(info))
	}
	return items, nil
}

// runInit runs --init's script once, as client 0, on a connection of its
// own.
func (s *Sweep) runInit(ctx context.Context, tell sweep.Teller) (InitRecord, error) {
	tell.Say("running --init " + s.cfg.Init)
	opt := s.cfg.options(s.dial)
	opt.MaxTries, opt.Retryable = 1, nil
	set, err := pgscript.NewSet(opt, pgscript.Weighted{Script: s.init, Weight: 1})
	if err != nil {
		return InitRecord{}, setting.Wrap("init", err)
	}
	conn, err := s.eng.Connect(ctx)
	if err != nil {
		return InitRecord{}, fmt.Errorf("running --init %s: %w", s.cfg.Init, err)
	}
	defer conn.Close()
	start := time.Now()
	if _, err := set.Client(0).Run(ctx, conn, 0); err != nil {
		return InitRecord{}, fmt.Errorf("running --init %w", err)
	}
	return InitRecord{File: s.cfg.Init, Commands: len(s.init.Commands), Seconds: time.Since(start).Seconds()}, nil
}

// remove removes the --db file this run made (and DuckDB's log of it)
// when setting it up failed, so that the same command can be run again.
func (s *Sweep) remove() error {
	var errs []error
	for _, p := range []string{s.cfg.DB, s.cfg.DB + ".wal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Prewarm reads nothing: numalab does not know which of the user's
// tables the scripts read. The warm-up (--warmup) warms what they touch.
func (s *Sweep) Prewarm(context.Context, int, sweep.Teller) ([]result.Entry, error) { return nil, nil }

// Begin forgets the last cell's streams and, when the run sweeps a DOP
// above 1, sets the cell's DOP with its parallel workers on the cell's
// placement and starts sampling where they run. A run at DOP 1 alone
// leaves the engine's parallelism and its server's CPUs as they are:
// placing PostgreSQL's workers moves its postmaster, and with it every
// backend, onto the streams' CPUs.
func (s *Sweep) Begin(ctx context.Context, c sweep.Cell) error {
	s.streams, s.workers = nil, nil
	if slices.Max(s.cfg.DOPs) <= 1 {
		return nil
	}
	var err error
	if s.workers, err = engine.SetDOPPlaced(ctx, s.eng, c.DOP, c.Place.CPUs); err != nil {
		return err
	}
	s.workers.Watch()
	return nil
}

// Stream opens stream i's connection, on its own pinned thread, and its
// client: client_id i, its generator seeded by --seed, i and the cell, so
// that cells draw apart and a repeated run draws as this one did.
func (s *Sweep) Stream(ctx context.Context, c sweep.Cell, i int) (drive.Stream, error) {
	conn, err := s.eng.Connect(ctx)
	if err != nil {
		return nil, err
	}
	for _, q := range s.session {
		if err := conn.Exec(ctx, q); err != nil {
			conn.Close()
			return nil, fmt.Errorf("setting up stream %d's session (%s): %w", i, q, err)
		}
	}
	opt := s.cfg.options(s.dial)
	opt.Round = uint64(c.Index) + 1
	st, err := newStream(conn, opt, s.scripts, i, &s.halt)
	if err != nil {
		conn.Close()
		return nil, err
	}
	s.mu.Lock()
	s.streams = append(s.streams, st)
	s.mu.Unlock()
	return st, nil
}

// End merges the cell's per-command figures and stores the cell. Once
// the run's failures passed --max-errors it ends the sweep, saying which
// script, line and error; a cell that counted nothing at all, neither a
// success nor a failure, ends it too, as it measured nothing.
func (s *Sweep) End(_ context.Context, c sweep.Cell, m *result.Cell, err error) sweep.Outcome[*Cell] {
	if m == nil {
		s.workers.Done()
		return sweep.Outcome[*Cell]{Stop: err}
	}
	s.mu.Lock()
	it := merge(m, s.scripts, s.streams)
	s.mu.Unlock()
	it.Workers = s.workers.Done()
	sample := s.sent.Take(fmt.Sprintf("after cell %d", c.Index))
	it.Sentinel = &sample
	o := sweep.Outcome[*Cell]{Item: &it,
		Store: []result.Entry{result.KindCell.Of(it.Cell), KindCellScripts.Of(it.CellScripts)}, Stop: err}
	if it.Partial != "" {
		o.Notes = append(o.Notes, fmt.Sprintf("note: cell %d (%s): %s", c.Index, c, it.Partial))
	}
	switch failed := s.halt.failed.Load(); {
	case failed > s.halt.max:
		o.Stop = errors.Join(fmt.Errorf("stopping after cell %d (%s): %s failed in this run (warm-ups included), "+
			"more than --max-errors %d allows; the first in this cell: %s",
			c.Index, c, plural(failed, "transaction"), s.halt.max, firstError(&it)), err)
	case m.Total.Count == 0 && !m.Interrupted && len(m.Stopped) > 0:
		o.Stop = errors.Join(fmt.Errorf("stopping after cell %d (%s): no transaction completed: stream %d stopped: %s",
			c.Index, c, m.Stopped[0].Stream, m.Stopped[0].Reason), err)
	case m.Total.Count == 0 && !m.Interrupted:
		o.Stop = errors.Join(
			fmt.Errorf("stopping after cell %d (%s): no transaction completed in its %v window (try a longer --duration)",
				c.Index, c, m.Measured), err)
	}
	return o
}

// firstError is the cell's first failure, with its script and line when
// pgscript gave them.
func firstError(c *Cell) string {
	if c.FirstError != "" {
		return c.FirstError
	}
	if c.Cell.Total.FirstError != "" {
		return c.Cell.Total.FirstError
	}
	return "(in an earlier cell)"
}

// Engine is the engine Open opened, nil before it and after Close.
func (s *Sweep) Engine() engine.Engine { return s.eng }

// Client is client id of the run's scripts, with the run's options
// (placeholders, seed, scale, defines, tries), for a caller that runs the
// transactions itself on a connection of Engine, or of its own engine (it
// needs no Open): run pages runs each twice with the same inputs
// (pgscript.Mark).
func (s *Sweep) Client(id int) (*pgscript.Client, error) {
	set, err := pgscript.NewSet(s.cfg.options(s.dial), s.scripts...)
	if err != nil {
		return nil, err
	}
	return set.Client(id), nil
}

// ServerSettings are settings a managed PostgreSQL or MariaDB server
// starts with (set before Open); a --dsn server is never started, so
// they do not apply to it.
func (s *Sweep) ServerSettings(m map[string]string) { s.settings = m }

// Session sets the statements each stream opened from now on runs first
// on its connection, between Open and the next cell's streams.
func (s *Sweep) Session(stmts []string) { s.session = stmts }

// Close closes the engine (and stops a managed server).
func (s *Sweep) Close() error {
	if s.eng == nil {
		return nil
	}
	err := s.eng.Close()
	s.eng = nil
	return err
}
