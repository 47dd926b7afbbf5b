package tpch

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/planest"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

// Cell kinds: the power test runs one query alone on one stream; the
// throughput test runs S streams, each the queries in its own order.
const (
	ModePower      = "power"
	ModeThroughput = "throughput"
)

// KindCell is a measured tpch cell.
const KindCell result.Kind[Cell] = "tpch.Cell"

// Cell is one measured tpch cell.
type Cell struct {
	Mode    string `json:"mode"`            // ModePower or ModeThroughput
	Query   int    `json:"query,omitempty"` // Power: 1 to 22
	DOP     int    `json:"dop"`
	Streams int    `json:"streams"`
	Repeat  int    `json:"repeat"`
	// Cell is what package drive measured; nil when the cell could not
	// start (Error says why).
	Cell  *result.Cell `json:"cell,omitempty"`
	Error string       `json:"error,omitempty"`
	// Seconds is a query's mean time (Power), Rows its rows; in an
	// open-loop cell the mean from each run's actual start (its service
	// time), so that DOPs compare by the query's own time.
	Seconds float64 `json:"seconds,omitempty"`
	Rows    int64   `json:"rows,omitempty"`
	// TimedByExplain says no run finished in the window, so Seconds is
	// the one run of PostgreSQL's EXPLAIN ANALYZE.
	TimedByExplain bool `json:"timed_by_explain,omitempty"`
	// QueriesPerHour counts all streams; TPC-H-derived, not a QphH.
	QueriesPerHour float64 `json:"queries_per_hour"`
	// Slowest is the throughput test's query with the highest mean time,
	// and that time.
	Slowest        int     `json:"slowest,omitempty"`
	SlowestSeconds float64 `json:"slowest_seconds,omitempty"`
	// Plan is the plan at this DOP (Power, first repeat).
	Plan      *planest.Plan `json:"plan,omitempty"`
	PlanError string        `json:"plan_error,omitempty"`
	// Used is the parallelism the engine actually used, when it says
	// (PostgreSQL: 1 + workers launched); Settings the engine's.
	Used     int               `json:"dop_used,omitempty"`
	Settings map[string]string `json:"settings,omitempty"`
	// Workers is where the cell's parallel workers ran (DOP > 1).
	Workers *result.WorkerCPUs `json:"workers,omitempty"`
	// Hog are the CPUs a busy thread kept busy during the cell (--hog).
	Hog []int `json:"hog_cpus,omitempty"`
}

// QueryName is "Q1" for 1.
func QueryName(n int) string { return "Q" + strconv.Itoa(n) }

// isServer says the engine is a server numalab talks to over a socket
// (the registry's Server), not a library in the process.
func isServer(eng string) bool {
	spec, _ := engine.Lookup(eng)
	return spec.Server
}

// Sweep is tpch as a sweep.Workload.
type Sweep struct {
	cfg      RunConfig
	dsn      string
	dataNode int // a managed server's memory is bound there (engine.Options.BindServer); -1: none
	db       *DB
	info     engine.Info
	sql      map[int]string // per query, the engine's SQL
	rows     []atomic.Int64 // per query, rows of its last run
	cur      *Cell
	// workers are the cell's parallel workers; hog its busy neighbour.
	workers *engine.Workers
	hog     *place.Hog
}

var _ sweep.Workload[*Cell] = (*Sweep)(nil)

// NewSweep is tpch configured by cfg on the PostgreSQL at dsn (cfg.DSN
// is its redacted form) or a throwaway server when it is "".
func NewSweep(cfg RunConfig, dsn string, dataNode int) *Sweep {
	return &Sweep{cfg: cfg, dsn: dsn, dataNode: dataNode, rows: make([]atomic.Int64, Queries+1)}
}

// Info is the engine's description; nil before Open.
func (s *Sweep) Info() *engine.Info {
	if s.info.Engine == "" {
		return nil
	}
	return &s.info
}

// Describe names the workload and engine.
func (s *Sweep) Describe() sweep.Description {
	return sweep.Description{Workload: "tpch", Engine: s.cfg.Engine, InCgo: !isServer(s.cfg.Engine)}
}

// Types are the queries, "Q1" to "Q22".
func (s *Sweep) Types() []string { return s.cfg.Spec().Types }

// Open loads the data where it is missing, or reuses numalab's load.
func (s *Sweep) Open(ctx context.Context, tell sweep.Teller) ([]result.Entry, error) {
	db, err := Open(ctx, OpenConfig{Engine: s.cfg.Engine,
		Options: engine.Options{Path: s.cfg.DB, DSN: s.dsn, ConnectTimeout: s.cfg.ConnectTimeout}.BindServer(s.dataNode),
		SF:      s.cfg.SF, Seed: s.cfg.Seed, Say: tell.Say})
	if err != nil {
		return nil, err
	}
	s.db = db
	ld := result.BulkLoad{Engine: s.cfg.Engine, Workload: "tpch", Method: loaderMethod(s.cfg.Engine), Rows: db.Stats.Total,
		Insert: db.Stats.Insert, RowsPerSecond: db.Stats.RowsPerSec(), Total: db.Stats.Insert + db.Stats.Keys,
		Reused: db.Reused, Where: db.Where}
	if db.Reused {
		tell.Note(fmt.Sprintf("tpch SF %g: reused numalab's earlier load in %s", s.cfg.SF, db.Where))
	} else {
		// The rate is LoadStats.RowsPerSec's: up to the last commit
		// (afterCommit: what an engine writes later).
		spec, _ := engine.Lookup(s.cfg.Engine)
		after := afterCommit(spec)
		tell.Note(fmt.Sprintf("tpch SF %g: %d rows loaded in %s by %s with %d workers, %.0f rows/s to the last commit%s",
			s.cfg.SF, db.Stats.Total, db.Where, ld.Method, db.Stats.Workers, ld.RowsPerSecond, after))
	}
	s.sql = map[int]string{}
	for _, q := range s.cfg.Queries {
		qq, err := QueryFor(q, s.cfg.Engine, s.cfg.Seed, s.cfg.SF)
		if err != nil {
			return nil, err
		}
		s.sql[q] = qq.SQL
	}
	items := []result.Entry{KindLoad.Of(ld)}
	if s.info, err = db.Eng.Describe(ctx); err != nil {
		return items, err
	}
	return append(items, engine.KindInfo.Of(s.info)), nil
}

// KindLoad is how the tpch data got into the engine.
const KindLoad result.Kind[result.BulkLoad] = "tpch.Load"

// Prewarm reads the data on the calling thread; with node >= 0 (a
// thread pinned to it and bound to its memory) it places the data there
// and checks where it landed (engine.PlaceData), a DuckDB database opened
// fresh first so that no block of its buffer pool is already loaded.
func (s *Sweep) Prewarm(ctx context.Context, node int, tell sweep.Teller) ([]result.Entry, error) {
	if node < 0 {
		tell.Say("prewarming the tpch data")
		_, err := s.db.Eng.Prewarm(ctx)
		return nil, err
	}
	if spec, _ := engine.Lookup(s.cfg.Engine); spec.Placement.Fresh {
		old := *s.db
		if err := s.db.Eng.Close(); err != nil {
			return nil, err
		}
		s.db = nil
		db, err := Open(ctx, OpenConfig{Engine: s.cfg.Engine,
			Options: engine.Options{Path: s.cfg.DB, DSN: s.dsn, ConnectTimeout: s.cfg.ConnectTimeout}.BindServer(s.dataNode),
			SF:      s.cfg.SF, Seed: s.cfg.Seed, Say: tell.Say})
		if err != nil {
			return nil, err
		}
		db.Reused, db.Stats = old.Reused, old.Stats
		s.db = db
	}
	tell.Say(fmt.Sprintf("placing the tpch data on node %d", node))
	pd, err := engine.PlaceData(ctx, s.db.Eng, node)
	if err != nil {
		return nil, fmt.Errorf("placing the tpch data on node %d: %w", node, err)
	}
	tell.Note(fmt.Sprintf("tpch data placed on node %d: %s", node, engine.PlacedText(pd)))
	return []result.Entry{engine.KindPlacedData.Of(pd)}, nil
}

// Begin sets the cell's DOP with its parallel workers on the cell's
// placement, for a power cell's first repeat captures its plan and cost,
// and starts sampling where the workers run.
func (s *Sweep) Begin(ctx context.Context, c sweep.Cell) error {
	var err error
	if s.workers, err = engine.SetDOPPlaced(ctx, s.db.Eng, c.DOP, c.Place.CPUs); err != nil {
		return err
	}
	tc := &Cell{Mode: ModeThroughput, DOP: c.DOP, Streams: c.Streams, Repeat: c.Repeat}
	if inf, err := s.db.Eng.Describe(ctx); err == nil {
		tc.Settings = inf.Settings
	}
	if c.Type != "" {
		tc.Mode = ModePower
		tc.Query, _ = strconv.Atoi(strings.TrimPrefix(c.Type, "Q"))
		if c.Repeat == 0 {
			p, err := planest.Explain(ctx, s.db.Eng, s.sql[tc.Query], true)
			if err != nil {
				tc.PlanError = result.Redact(err.Error())
			} else {
				tc.Plan = &p
				if spec, _ := engine.Lookup(s.cfg.Engine); spec.Parallel.Launched {
					tc.Used = 1 + p.WorkersLaunched
				}
			}
		}
	}
	if s.cfg.Hog > 0 {
		cpus, err := place.HogCPUs(c.Place.Streams, s.cfg.Hog)
		if err == nil {
			s.hog, err = place.StartHog(cpus)
		}
		if err != nil {
			return fmt.Errorf("starting cell %d (%s): %w", c.Index, c, err)
		}
		tc.Hog = s.hog.CPUs
	}
	s.cur = tc
	s.workers.Watch()
	return nil
}

// Stream opens a stream: a power cell's runs its one query; a throughput
// cell's runs every query in a permutation of its own, over and over.
func (s *Sweep) Stream(ctx context.Context, c sweep.Cell, stream int) (drive.Stream, error) {
	conn, err := s.db.Eng.Connect(ctx)
	if err != nil {
		return nil, err
	}
	st := &stream_{s: s, c: conn}
	if c.Type != "" {
		q, _ := strconv.Atoi(strings.TrimPrefix(c.Type, "Q"))
		st.order = []int{q}
		st.types = []int{0}
		return st, nil
	}
	// The same orders at every DOP of a repeat, so that DOPs compare.
	r := rand.New(rand.NewPCG(uint64(s.cfg.Seed), uint64(c.Repeat)<<16+uint64(stream)))
	perm := r.Perm(len(s.cfg.Queries))
	for _, i := range perm {
		st.order = append(st.order, s.cfg.Queries[i])
		st.types = append(st.types, i)
	}
	return st, nil
}

type stream_ struct {
	s     *Sweep
	c     engine.Conn
	order []int // queries, in this stream's order
	types []int // their type indexes in the cell
	next  int
}

func (st *stream_) Next(ctx context.Context) (int, error) {
	i := st.next
	st.next = (st.next + 1) % len(st.order)
	q := st.order[i]
	var n int64
	err := st.c.Query(ctx, st.s.sql[q], nil, func([]any) error { n++; return nil })
	if err == nil {
		st.s.rows[q].Store(n)
	}
	return st.types[i], err
}

func (st *stream_) Close() error { return st.c.Close() }

// End fills the cell's figures.
func (s *Sweep) End(ctx context.Context, c sweep.Cell, m *result.Cell, err error) sweep.Outcome[*Cell] {
	tc := s.cur
	tc.Workers = s.workers.Done()
	s.hog.Stop()
	s.hog = nil
	if err != nil {
		tc.Error = result.Redact(err.Error())
	}
	o := sweep.Outcome[*Cell]{Item: tc}
	for _, n := range tc.Workers.Notes() {
		o.Notes = append(o.Notes, fmt.Sprintf("note: cell %d (%s): %s", c.Index, c, n))
	}
	if m != nil {
		tc.Cell = m
		tc.QueriesPerHour = m.TPS * 3600
		if tc.Mode == ModePower {
			tc.Seconds = m.Total.MeanUS / 1e6
			if m.Pace != nil && m.Pace.Mode == "rate" {
				tc.Seconds = m.Pace.Service.MeanUS / 1e6
			}
			tc.Rows = s.rows[tc.Query].Load()
		} else {
			for i, t := range m.Types {
				if t.Count > 0 && t.MeanUS/1e6 > tc.SlowestSeconds {
					tc.Slowest, tc.SlowestSeconds = s.cfg.Queries[i], t.MeanUS/1e6
				}
			}
		}
		if m.Pace != nil {
			o.Notes = append(o.Notes, fmt.Sprintf("note: cell %d (%s): paced %s", c.Index, c, m.Pace.Text(m.Total)))
		}
		switch {
		case m.Total.Count == 0 && tc.Plan != nil && tc.Plan.Seconds > 0 && m.Total.Errors == 0:
			tc.Seconds, tc.TimedByExplain = tc.Plan.Seconds, true
			o.Notes = append(o.Notes, fmt.Sprintf(
				"note: cell %d (%s): no run finished in the %v window: its time, %.3f s, is EXPLAIN ANALYZE's one run",
				c.Index, c, s.cfg.Duration, tc.Seconds))
		case m.Total.Count == 0 && !m.Interrupted:
			o.Notes = append(o.Notes, fmt.Sprintf(
				"note: cell %d (%s): no query finished in the %v window: lengthen --duration", c.Index, c, s.cfg.Duration))
		}
		if m.Total.Count == 0 && m.Total.Errors > 0 {
			o.Stop = fmt.Errorf("running cell %d (%s): every query failed: %s", c.Index, c, m.Total.FirstError)
		}
	} else {
		o.Stop = fmt.Errorf("running cell %d (%s): %w", c.Index, c, err)
	}
	if tc.Plan != nil && tc.Used > 0 && tc.Used < c.DOP {
		o.Notes = append(o.Notes,
			fmt.Sprintf("note: %s at DOP %d: PostgreSQL launched %d of the %d workers asked for (planned %d): it ran at DOP %d",
				QueryName(tc.Query), c.DOP, tc.Plan.WorkersLaunched, c.DOP-1, tc.Plan.WorkersPlanned, tc.Used))
	}
	o.Store = []result.Entry{KindCell.Of(*tc)}
	return o
}

// Close closes the data (and stops a managed server).
func (s *Sweep) Close() error {
	s.workers.Done() // a cell cut before End
	s.hog.Stop()
	if s.db == nil {
		return nil
	}
	return s.db.Close()
}
