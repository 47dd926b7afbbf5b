package insert

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

// Measured is one stored cell: drive's measurement and the load's own
// figures.
type Measured struct {
	Cell  *result.Cell
	Stats CellStats
}

// Sweep is the insert workload as a sweep.Workload.
type Sweep struct {
	cfg  RunConfig
	spec engine.Spec
	d    dialect
	eng  engine.Engine // nil on SQLite once the file is made
	sqdb *sql.DB       // SQLite: writable handle for emptying the table
	cur  *cellState
	seen []CellStats // measured cells, for findings
}

var _ sweep.Workload[*Measured] = (*Sweep)(nil)

// NewSweep is the workload configured by cfg (checked).
func NewSweep(cfg RunConfig) *Sweep {
	spec, d, _ := dialectOf(cfg.Engine)
	return &Sweep{cfg: cfg, spec: spec, d: d}
}

// Describe names the workload and engine.
func (s *Sweep) Describe() sweep.Description {
	return sweep.Description{Workload: "insert", Engine: s.cfg.Engine, InCgo: !s.spec.Server}
}

// Types is one: a batch.
func (s *Sweep) Types() []string { return []string{"batch"} }

// Open makes the target table afresh, refusing one that is not
// numalab's, and checks there is room for a cell's --max-rows. On a
// managed MariaDB server it turns on the wait instruments (mywaits.go).
func (s *Sweep) Open(ctx context.Context, tell sweep.Teller) ([]result.Entry, error) {
	cfg := s.cfg
	tell.Say("opening " + cfg.Engine)
	var eng engine.Engine
	var err error
	if s.spec.Server {
		if eng, err = engine.Open(ctx, cfg.Engine,
			engine.Options{DSN: cfg.DSN, DataBytes: s.d.dataBytes, ConnectTimeout: cfg.ConnectTimeout}); err != nil {
			return nil, err
		}
		err = s.d.claim(ctx, eng, cfg, s.d)
	} else {
		if err = claimFile(ctx, cfg.Engine, cfg.DB); err != nil {
			return nil, err
		}
		if eng, err = engine.Open(ctx, cfg.Engine, engine.Options{Path: cfg.DB, Create: true}); err != nil {
			return nil, err
		}
		err = createFile(ctx, eng, cfg.Key)
	}
	if err == nil {
		err = s.room(eng)
	}
	var info engine.Info
	if err == nil {
		info, err = eng.Describe(ctx)
	}
	if err != nil {
		eng.Close()
		return nil, err
	}
	s.eng = eng
	if s.d.oneWriter {
		// The load connection holds the file's lock: the streams write
		// through connections of their own.
		s.eng = nil
		if err := eng.Close(); err != nil {
			return nil, err
		}
		dsn, err := sqliteDSN(cfg.DB)
		if err != nil {
			return nil, err
		}
		if s.sqdb, err = sql.Open("sqlite3", dsn); err != nil {
			return nil, err
		}
	}
	return []result.Entry{engine.KindInfo.Of(info)}, nil
}

// myPoolBytes sizes a managed MariaDB server's buffer pool
// (mariaserver.BufferPoolFor): 448 MiB, which holds the right edge the
// streams append to and, with --indexes, much of the index on k.
const myPoolBytes = 256 << 20

// room refuses a cell that could leave the disk short: --max-rows rows.
func (s *Sweep) room(eng engine.Engine) error {
	var err error
	if eng != nil {
		err = engine.CheckRoom(eng, s.cfg.NeedBytes())
	} else {
		var r engine.Room
		if r, err = engine.RoomAt(filepath.Dir(s.cfg.DB)); err == nil {
			err = r.Check(s.cfg.NeedBytes())
		}
	}
	if err != nil {
		return fmt.Errorf("checking room for %d rows (--max-rows): %w", s.cfg.MaxRows, err)
	}
	return nil
}

// Prewarm has nothing to read: a cell writes its data.
func (s *Sweep) Prewarm(context.Context, int, sweep.Teller) ([]result.Entry, error) { return nil, nil }

// Begin waits for the last cell's server sessions to end, empties the
// table, checks the room again and, on PostgreSQL, starts sampling the
// loaders' wait events.
func (s *Sweep) Begin(ctx context.Context, c sweep.Cell) error {
	if err := s.room(s.eng); err != nil {
		return err
	}
	if s.cur != nil {
		if err := endSessions(ctx, s.eng, s.cur.pids(), sessionGrace); err != nil {
			return fmt.Errorf("before cell %d: %w", c.Index, err)
		}
	}
	if err := s.d.empty(ctx, s); err != nil {
		return fmt.Errorf("emptying %s before cell %d: %w", Table, c.Index, err)
	}
	s.cur = &cellState{streams: c.Streams}
	if s.d.sample != nil {
		conn, err := s.eng.DB().Conn(ctx)
		if err != nil {
			return fmt.Errorf("connecting the wait sampler (%s): %w", s.spec.Waits, err)
		}
		s.d.sample(conn, s.cur, s.cfg)
	}
	return nil
}

// cellState is what one cell's streams leave behind for End.
type cellState struct {
	streams int // the cell's stream count
	mu      sync.Mutex
	opened  []*stream // appended as streams open; read after they close
	waits   *sampler
	myWaits *mySampler
}

func (cs *cellState) pids() []int32 {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var p []int32
	for _, st := range cs.opened {
		if id := st.l.pid(); id > 0 {
			p = append(p, int32(id))
		}
	}
	return p
}

// Stream opens one stream's connection on its own thread.
func (s *Sweep) Stream(ctx context.Context, c sweep.Cell, i int) (drive.Stream, error) {
	l, err := s.d.loader(ctx, s)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(uint64(s.cfg.Seed), uint64(i)+uint64(c.Index)<<32))
	limit := batchesOf(s.cfg.MaxRows, s.cfg.Batch, s.cur.streams, i)
	st := &stream{l: l, rows: newRows(s.cfg.Batch, int64(i), loadColumns(s.cfg.Key), rng), limit: limit,
		done: drive.Done(fmt.Sprintf("wrote its share of --max-rows %d over %d streams: %d rows, in whole batches of %d",
			s.cfg.MaxRows, s.cur.streams, limit*int64(s.cfg.Batch), s.cfg.Batch))}
	s.cur.mu.Lock()
	s.cur.opened = append(s.cur.opened, st)
	s.cur.mu.Unlock()
	return st, nil
}

// batchesOf is stream i's share of a cell's --max-rows in whole batches:
// the whole batches that fit in maxRows, dealt out to the streams one by
// one, so that the cell writes at most maxRows rows however many streams
// share them.
func batchesOf(maxRows int64, batch, streams, i int) int64 {
	all := maxRows / int64(batch)
	share := all / int64(streams)
	if int64(i) < all%int64(streams) {
		share++
	}
	return share
}

// stream loads batch after batch, logging when each ended and how long
// it waited for the write lock.
type stream struct {
	l       loader
	rows    *rows
	limit   int64      // batches it may write (batchesOf)
	done    drive.Done // why it stops when it has
	written int64      // batches written
	log     []waited
}

type waited struct {
	end  int64 // unix ns
	wait time.Duration
}

func (st *stream) Next(ctx context.Context) (int, error) {
	if st.written >= st.limit {
		return 0, st.done
	}
	st.rows.fill()
	w, err := st.l.load(ctx, st.rows)
	st.log = append(st.log, waited{end: time.Now().UnixNano(), wait: w})
	if err == nil {
		st.written++
	}
	return 0, err
}

func (st *stream) Close() error { return st.l.close() }

// End stores the cell, its load figures, and a finding when it loaded
// less than a cell of fewer streams on the same placement.
func (s *Sweep) End(_ context.Context, c sweep.Cell, m *result.Cell, err error) sweep.Outcome[*Measured] {
	cs := s.cur
	var samples map[string]int
	if cs != nil && cs.waits != nil {
		samples = cs.waits.stop(m)
	}
	var myWaits []WaitShare
	var myWhy string
	if cs != nil && cs.myWaits != nil {
		var w *mResult
		if m != nil {
			from := m.Started.Add(m.Warmup).UnixNano()
			w = &mResult{streams: m.Streams, from: from, to: from + m.Measured.Nanoseconds()}
		}
		myWaits, myWhy = cs.myWaits.stop(w)
	}
	if m == nil {
		return sweep.Outcome[*Measured]{Stop: err}
	}
	st := s.stats(c, m, cs, samples)
	if cs != nil && cs.myWaits != nil {
		st.Waits, st.Dominant = myWaits, myDominant(myWaits, myWhy)
	}
	out := sweep.Outcome[*Measured]{Item: &Measured{Cell: m, Stats: st}, Stop: err,
		Store: []result.Entry{result.KindCell.Of(*m), KindCellStats.Of(st)}}
	if f, ok := findDrop(s.seen, st); ok {
		out.Store = append(out.Store, KindFinding.Of(f))
		out.Notes = append(out.Notes, "finding: "+f.Text)
	}
	s.seen = append(s.seen, st)
	return out
}

func (s *Sweep) stats(c sweep.Cell, m *result.Cell, cs *cellState, samples map[string]int) CellStats {
	st := CellStats{Index: m.Index, Engine: s.cfg.Engine, Method: s.method(), Indexes: s.cfg.Indexes, Key: s.cfg.Key,
		Streams: m.Streams, Placement: m.Placement, Repeat: m.Repeat, Batch: s.cfg.Batch,
		RowsPerSec: m.TPS * float64(s.cfg.Batch)}
	st.MBPerSec = st.RowsPerSec * RowBytes / 1e6
	st.Rows = int64(float64(m.Total.Count) * float64(s.cfg.Batch))
	if m.Usage != nil {
		st.CPUBusyPct = m.Usage.BusyPct(m.CPUs)
		st.CtxSwitchesPerSec = m.Usage.CtxSwitchesPerSec
	}
	from := m.Started.Add(m.Warmup).UnixNano()
	to := from + m.Measured.Nanoseconds()
	if s.d.oneWriter && m.Measured > 0 {
		var w time.Duration
		for _, str := range cs.opened {
			for _, e := range str.log {
				if e.end >= from && e.end < to {
					w += e.wait
				}
			}
		}
		st.LockWaitPct = 100 * w.Seconds() / (m.Measured.Seconds() * float64(m.Streams))
	}
	st.Waits = waitShares(samples)
	st.Dominant = s.dominant(st)
	return st
}

func (s *Sweep) method() string {
	if s.d.method == nil {
		return "insert"
	}
	return s.d.method(s.cfg.Method)
}

// dominant names where the streams' time went, in the engine's terms.
func (s *Sweep) dominant(st CellStats) string {
	if s.d.dominant != nil {
		return s.d.dominant(st)
	}
	for _, w := range st.Waits {
		if w.Event == waitCPU {
			continue
		}
		d := fmt.Sprintf("%s (%.0f%% of samples)", w.Event, w.Pct)
		switch {
		case w.Event == waitClient || strings.HasPrefix(w.Event, "none ("):
			d += ": the backends waited for the client"
		case w.Event == waitPage:
			d += ": the backends queued for one page's lock (a hot page)"
		}
		return d
	}
	if len(st.Waits) > 0 {
		return "none: the backends were running (" + waitCPU + ")"
	}
	return "no samples"
}

// Close closes the database (and stops a managed server).
func (s *Sweep) Close() error {
	var err error
	if s.eng != nil {
		err = s.eng.Close()
	}
	if s.sqdb != nil {
		err = errors.Join(err, s.sqdb.Close())
	}
	return err
}
