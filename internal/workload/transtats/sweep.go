package transtats

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/drive"
	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
)

// fewQueries per stream in a window is too few for a steady figure.
const fewQueries = 5

// maxErrors stops a stream after that many failed queries in a row.
const maxErrors = 20

// Sweep is transtats as a sweep.Workload: each measured cell is a
// *result.QueryCell with its plans and its speedup against DOP 1 at the
// same query and streams, stored as result.KindQueryCell; plan changes
// are stored as result.KindPlanFinding. An engine that stops answering
// (a PostgreSQL server that dies) ends the sweep, keeping the cells
// before it.
type Sweep struct {
	cfg      RunConfig
	dsn      string
	dataNode int // a managed server's memory is bound there (engine.Options.BindServer); -1: none
	db       *DB
	db0      Config // what Open opened db with
	info     engine.Info
	findings []*result.PlanFinding

	planT, otherT int64 // P2's t for the plans compared, and another
	dop1          map[cellKey]float64
	lastPlan      map[cellKey]string
	lastDOP       map[cellKey]int
	seen          map[string]bool   // the plan findings stored, by findingKey
	cur           *result.QueryCell // the cell between Begin and End
	curPlanErr    error
	workers       *engine.Workers // the cell's parallel workers
	hog           *place.Hog      // the cell's busy neighbour (--hog)

	session []string          // what each stream's session runs first (Session)
	server  map[string]string // a managed server's settings (ServerSettings)
}

// cellKey is a query at a stream count in one repeat: the speedup and
// the plan at another DOP compare with the cells of the same repeat.
type cellKey struct {
	query   string
	streams int
	repeat  int
}

var _ sweep.Workload[*result.QueryCell] = (*Sweep)(nil)

// NewSweep is transtats configured by cfg, on the PostgreSQL or MariaDB
// at dsn (cfg.DSN is its redacted form) or a throwaway server when it is
// "".
func NewSweep(cfg RunConfig, dsn string, dataNode int) *Sweep {
	return &Sweep{cfg: cfg, dsn: dsn, dataNode: dataNode, dop1: map[cellKey]float64{}, lastPlan: map[cellKey]string{},
		lastDOP: map[cellKey]int{}, seen: map[string]bool{}}
}

// Load is the load record; nil before Open loaded or opened the data.
func (s *Sweep) Load() *result.BulkLoad {
	if s.db == nil {
		return nil
	}
	return &s.db.Load
}

// Info is the engine's description; nil before Open described it.
func (s *Sweep) Info() *engine.Info {
	if s.info.Engine == "" {
		return nil
	}
	return &s.info
}

// Findings are the plan changes found so far.
func (s *Sweep) Findings() []*result.PlanFinding { return s.findings }

// Describe names the workload and engine.
func (s *Sweep) Describe() sweep.Description {
	return sweep.Description{Workload: "transtats", Engine: s.cfg.Engine, InCgo: !isServer(s.cfg.Engine)}
}

// Types are the queries.
func (s *Sweep) Types() []string { return s.cfg.Queries }

// Open loads the data where it is missing or incomplete, or reuses it.
func (s *Sweep) Open(ctx context.Context, tell sweep.Teller) ([]result.Entry, error) {
	if s.dsn == "" && isServer(s.cfg.Engine) {
		tell.Say("starting a throwaway " + specOf(s.cfg.Engine).Title + " server")
	}
	opt := engine.Options{Path: s.cfg.DB, DSN: s.dsn, ConnectTimeout: s.cfg.ConnectTimeout}.BindServer(s.dataNode)
	opt.ServerSettings = s.server
	s.db0 = Config{EngineName: s.cfg.Engine, Engine: opt, Rows: s.cfg.Rows, Rate: s.cfg.Rate,
		Progress: func(step string, n, total int64) {
			tell.Say(fmt.Sprintf("%s: %d of %d rows (%.0f%%)", step, n, total, 100*float64(n)/float64(total)))
		},
		Waiting: tell.Say}
	db, err := Open(ctx, s.db0)
	if err != nil {
		return nil, err
	}
	s.db = db
	items := []result.Entry{result.KindBulkLoad.Of(db.Load)}
	how := "loaded"
	if db.Load.Reused {
		how = "reused (loaded earlier)"
	}
	tell.Note(fmt.Sprintf("transtats: %d rows %s in %s: %s, %.0f rows/s",
		db.Load.Rows, how, db.Load.Where, db.Load.Method, db.Load.RowsPerSecond))
	if s.info, err = db.Engine().Describe(ctx); err != nil {
		return items, err
	}
	first, last := db.Seconds()
	s.planT = (first + last) / 2
	s.otherT = min(first+(last-first)/4+1, last)
	return append(items, engine.KindInfo.Of(s.info)), nil
}

// Prewarm places the data on node (engine.PlaceData), on the pinned and
// bound thread sweep runs it on, and stores where it landed; node -1
// leaves it to the first cell's warm-up. A DuckDB database is opened
// fresh first, so that no block of its buffer pool is already loaded.
func (s *Sweep) Prewarm(ctx context.Context, node int, tell sweep.Teller) ([]result.Entry, error) {
	if node < 0 {
		return nil, nil
	}
	if spec, _ := engine.Lookup(s.cfg.Engine); spec.Placement.Fresh {
		load := s.db.Load
		if err := s.db.Close(); err != nil {
			return nil, err
		}
		s.db = nil
		db, err := Open(ctx, s.db0)
		if err != nil {
			return nil, err
		}
		s.db = db
		s.db.Load = load
	}
	tell.Say(fmt.Sprintf("placing the transtats data on node %d", node))
	pd, err := engine.PlaceData(ctx, s.db.Engine(), node)
	if err != nil {
		return nil, fmt.Errorf("placing the transtats data on node %d: %w", node, err)
	}
	tell.Note(fmt.Sprintf("transtats data placed on node %d: %s", node, engine.PlacedText(pd)))
	return []result.Entry{engine.KindPlacedData.Of(pd)}, nil
}

// Begin sets the cell's DOP with its parallel workers on the cell's
// placement, starts sampling where they run, and captures the plan
// before it.
func (s *Sweep) Begin(ctx context.Context, c sweep.Cell) error {
	var err error
	if s.workers, err = engine.SetDOPPlaced(ctx, s.db.Engine(), c.DOP, c.Place.CPUs); err != nil {
		if gone := s.gone(ctx); gone != nil {
			return fmt.Errorf("starting cell %d (%s): %s stopped answering: %w (%d earlier cells stored)",
				c.Index, cellName(c), s.cfg.Engine, gone, c.Index)
		}
		return err
	}
	qc := &result.QueryCell{Query: c.Type}
	if inf, err := s.db.Engine().Describe(ctx); err == nil {
		qc.Settings = inf.Settings
	}
	qc.PlanBefore, s.curPlanErr = s.db.Explain(ctx, c.Type, s.planT)
	if s.curPlanErr != nil {
		qc.PlanError = s.curPlanErr.Error()
	} else if spec, _ := engine.Lookup(s.cfg.Engine); spec.Plan != engine.PlanText {
		p, err := s.db.Cost(ctx, c.Type, s.planT)
		if err != nil {
			qc.PlanError = result.Redact(err.Error())
		}
		qc.Cost, qc.CostUnit = p.Cost, p.CostUnit
	}
	if s.cfg.Hog > 0 {
		cpus, err := place.HogCPUs(c.Place.Streams, s.cfg.Hog)
		if err == nil {
			s.hog, err = place.StartHog(cpus)
		}
		if err != nil {
			return fmt.Errorf("starting cell %d (%s): %w", c.Index, cellName(c), err)
		}
		qc.Hog = s.hog.CPUs
	}
	s.cur = qc
	s.workers.Watch()
	return nil
}

// ServerSettings sets what a managed server starts with, before Open:
// run report --monitor's (monitor.ManagedSettings).
func (s *Sweep) ServerSettings(m map[string]string) { s.server = m }

// Session sets the statements each stream opened from now on runs first
// on its connection (PostgreSQL and MariaDB), between Open and the next
// cell's streams: run report --monitor switches a facility per cell.
func (s *Sweep) Session(stmts []string) { s.session = stmts }

// Stream opens a stream of the cell's query with its own seed, its
// session set up with the Session statements.
func (s *Sweep) Stream(ctx context.Context, c sweep.Cell, stream int) (drive.Stream, error) {
	if len(s.session) > 0 && !isServer(s.cfg.Engine) {
		return nil,
			fmt.Errorf("opening a transtats stream: session statements are for PostgreSQL and MariaDB, not %s", s.cfg.Engine)
	}
	st, err := s.db.NewStream(ctx, c.Type, uint64(s.cfg.Seed)*1_000_003+uint64(c.Index)<<16+uint64(stream))
	if err != nil {
		return nil, err
	}
	for _, q := range s.session {
		if err := st.c.Exec(ctx, q); err != nil {
			return nil, errors.Join(fmt.Errorf("setting up the session with %q: %w", q, err), st.Close())
		}
	}
	return st, nil
}

// End computes the speedup, checks the engine still answers, compares
// plans and says whether the sweep goes on.
func (s *Sweep) End(ctx context.Context, c sweep.Cell, m *result.Cell, err error) sweep.Outcome[*result.QueryCell] {
	qc := s.cur
	qc.Workers = s.workers.Done()
	s.hog.Stop()
	s.hog = nil
	k := cellKey{c.Type, c.Streams, c.Repeat}
	if err != nil {
		qc.Error = result.Redact(err.Error())
	}
	if m != nil {
		qc.Cell = m
		qc.QueriesPerHour = m.TPS * 3600
		// A paced cell's queries per hour are its schedule's: no speedup
		// is read from them.
		if c.DOP == 1 && m.Pace == nil {
			s.dop1[k] = qc.QueriesPerHour
		}
		if base := s.dop1[k]; base > 0 && m.Pace == nil {
			qc.SpeedupVsDOP1 = qc.QueriesPerHour / base
		}
	}
	// Is the engine still there? A cell with errors may mean a dead
	// server: then stop, keeping what was measured.
	var gone error
	if m == nil || m.Total.Errors > 0 || m.Total.Count == 0 || err != nil {
		gone = s.gone(ctx)
	}
	var found []*result.PlanFinding
	if gone == nil && ctx.Err() == nil && s.curPlanErr == nil {
		found = s.comparePlans(ctx, qc, c, s.lastPlan[k], s.lastDOP[k])
		s.lastPlan[k], s.lastDOP[k] = qc.PlanBefore, c.DOP
	}
	// The cell is stored with its plans after, then the findings.
	o := sweep.Outcome[*result.QueryCell]{Item: qc, Store: []result.Entry{result.KindQueryCell.Of(*qc)}}
	for _, n := range qc.Workers.Notes() {
		o.Notes = append(o.Notes, fmt.Sprintf("note: cell %d (%s): %s", c.Index, cellName(c), n))
	}
	if m != nil && m.Pace != nil {
		o.Notes = append(o.Notes, fmt.Sprintf("note: cell %d (%s): paced %s", c.Index, cellName(c), m.Pace.Text(m.Total)))
	}
	for _, f := range found {
		// A later repeat finding the same change adds nothing.
		key := findingKey(f)
		if s.seen[key] {
			continue
		}
		s.seen[key] = true
		s.findings = append(s.findings, f)
		o.Store = append(o.Store, result.KindPlanFinding.Of(*f))
		o.Notes = append(o.Notes, "finding: "+f.Detail)
	}
	if m != nil && !m.Interrupted && gone == nil && m.Total.Count < int64(fewQueries*c.Streams) {
		o.Notes = append(o.Notes, fmt.Sprintf("note: cell %d: only %d queries finished in the %v window (queries "+
			"still running when it closes are not counted): lengthen --duration for a steadier figure",
			c.Index, m.Total.Count, s.cfg.Duration))
	}
	switch {
	case gone != nil:
		o.Stop = fmt.Errorf("running cell %d (%s): %s stopped answering: %w (%d earlier cells stored)",
			c.Index, cellName(c), s.cfg.Engine, gone, c.Index)
	case m == nil:
		o.Stop = fmt.Errorf("running cell %d (%s): %w", c.Index, cellName(c), err)
	case m.Total.Count == 0 && m.Total.Errors > 0:
		o.Stop = fmt.Errorf("running cell %d (%s): every query failed: %s", c.Index, cellName(c), m.Total.FirstError)
	}
	return o
}

// findingKey is what makes two plan findings the same: what they say,
// and the shapes of the plans they compare.
func findingKey(f *result.PlanFinding) string {
	return f.Detail + "\x00" + PlanShape(f.Before) + "\x00" + PlanShape(f.After)
}

// cellName names a cell in errors: "P2, 2 streams, DOP 1".
func cellName(c sweep.Cell) string {
	return fmt.Sprintf("%s, %s, DOP %d", c.Type, sweep.Count(c.Streams, "stream"), c.DOP)
}

// Close closes the database (and stops a managed server).
func (s *Sweep) Close() error {
	s.workers.Done() // a cell cut before End
	s.hog.Stop()
	if s.db == nil {
		return nil
	}
	return s.db.Close()
}

// gone checks, within 10 seconds, that the engine still answers.
func (s *Sweep) gone(ctx context.Context) error {
	if ctx.Err() != nil {
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := s.db.Engine().Connect(pctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Exec(pctx, "SELECT 1")
}

// comparePlans captures the plans after a cell and lists what changed:
// within the cell (before against after, same t; and against another t),
// and against the previous DOP at the same query and streams.
func (s *Sweep) comparePlans(ctx context.Context, qc *result.QueryCell, c sweep.Cell, prev string,
	prevDOP int) []*result.PlanFinding {
	var out []*result.PlanFinding
	after, err := s.db.Explain(ctx, c.Type, s.planT)
	if err != nil {
		qc.PlanError = err.Error()
		return nil
	}
	qc.PlanAfter = after
	q, streams, dop := c.Type, c.Streams, c.DOP
	if PlanShape(after) != PlanShape(qc.PlanBefore) {
		out = append(out, &result.PlanFinding{Kind: "within-cell", Query: q, Streams: streams, DOP: dop,
			Detail: fmt.Sprintf("%s at %s, DOP %d: the plan changed during the cell", q, sweep.Count(streams, "stream"), dop),
			Before: qc.PlanBefore, After: after})
	}
	if q == P2 {
		other, err := s.db.Explain(ctx, q, s.otherT)
		if err == nil {
			qc.PlanAfterOther = other
			if PlanShape(other) != PlanShape(timeless(after, s.planT, s.otherT)) {
				out = append(out, &result.PlanFinding{Kind: "within-cell", Query: q, Streams: streams, DOP: dop,
					Detail: fmt.Sprintf("%s at %s, DOP %d: the plan depends on t (t = %d s and %d s differ)",
						q, sweep.Count(streams, "stream"), dop, s.planT, s.otherT),
					Before: after, After: other})
			}
		}
	}
	if prev != "" && prevDOP != dop && PlanShape(prev) != PlanShape(qc.PlanBefore) {
		out = append(out, &result.PlanFinding{Kind: "across-dop", Query: q, Streams: streams, DOP: dop, FromDOP: prevDOP,
			Detail: fmt.Sprintf("%s at %s: the plan at DOP %d differs from DOP %d's",
				q, sweep.Count(streams, "stream"), dop, prevDOP),
			Before: prev, After: qc.PlanBefore})
	}
	return out
}

// timeless rewrites the window bounds of t in a plan into those of other,
// so that two P2 plans compare by their operators only.
func timeless(plan string, t, other int64) string {
	r := strings.NewReplacer(
		TimeAt(t).Format(TimeFormat), TimeAt(other).Format(TimeFormat),
		TimeAt(t+1).Format(TimeFormat), TimeAt(other+1).Format(TimeFormat))
	return r.Replace(plan)
}

// isServer says the engine named name is a server (the registry's Server).
func isServer(name string) bool {
	spec, _ := engine.Lookup(name)
	return spec.Server
}
