package transtats

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"time"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/planest"
	"github.com/numalab/numalab/internal/result"
)

// Config says which database to use and what it must hold.
type Config struct {
	// EngineName is the engine's name in the registry ("sqlite",
	// "duckdb", "postgres" or "mariadb").
	EngineName string
	// Engine says where the database is: Path (SQLite, DuckDB) or DSN
	// (PostgreSQL, MariaDB; empty starts a managed server), PG, Schema,
	// PinBackends. Open sets Create and DataBytes itself.
	Engine engine.Options
	// Rows is N, the rows of tran_stats (default DefaultRows); Rate is R,
	// rows per second of tran_begin (default DefaultRate).
	Rows, Rate int64
	// Progress, if not nil, is called during a load with what is being
	// done (a short phrase) and the rows of tran_stats loaded so far.
	Progress func(step string, done, total int64)
	// Waiting, if not nil, hears (every 5 s) that Open waits for another
	// numalab loading or opening a file in the same directory.
	Waiting func(line string)
}

func (c *Config) defaults() error {
	if c.Rows == 0 {
		c.Rows = DefaultRows
	}
	if c.Rate == 0 {
		c.Rate = DefaultRate
	}
	if err := CheckSize(c.Rows, c.Rate); err != nil {
		return err
	}
	spec, ok := engine.Lookup(c.EngineName)
	if !ok {
		return fmt.Errorf("unknown engine %q (expected %s)", c.EngineName, engine.List(nil))
	}
	if !spec.Server && c.Engine.Path == "" {
		return fmt.Errorf("no %s database file given", c.EngineName)
	}
	return nil
}

func (c *Config) progress(step string, done int64) {
	if c.Progress != nil {
		c.Progress(step, done, c.Rows)
	}
}

// BytesPerRow is about what a row of tran_stats takes with its key, to
// size caches (PostgreSQL's shared_buffers, MariaDB's buffer pool).
const BytesPerRow = 240

// DefaultPath is the file an embedded engine keeps n rows in when the user
// names none: in the working directory, one per engine and size.
func DefaultPath(name string, rows int64) string {
	return fmt.Sprintf("transtats-%d.%s", rows, name)
}

// LoadStats describe how the data got there: loaded now, or found complete
// from an earlier load (Reused), whose figures then come from its record.
type LoadStats = result.BulkLoad

// Meta keys stored in numalab_meta.
const (
	metaWorkload = "workload"
	metaRows     = "rows"
	metaRate     = "rate"
	metaMethod   = "load_method"
	metaInsertNS = "load_insert_ns"
	metaTotalNS  = "load_total_ns"
	metaComplete = "load_complete"
)

// statsFromMeta rebuilds a finished load's figures.
func statsFromMeta(name string, m map[string]string) LoadStats {
	st := LoadStats{Engine: name, Workload: "transtats", Method: m[metaMethod], Reused: true}
	st.Rows, _ = strconv.ParseInt(m[metaRows], 10, 64)
	st.Rate, _ = strconv.ParseInt(m[metaRate], 10, 64)
	ins, _ := strconv.ParseInt(m[metaInsertNS], 10, 64)
	tot, _ := strconv.ParseInt(m[metaTotalNS], 10, 64)
	st.Insert, st.Total = time.Duration(ins), time.Duration(tot)
	if st.Insert > 0 {
		st.RowsPerSecond = float64(st.Rows) / st.Insert.Seconds()
	}
	return st
}

// metaState says what a numalab_meta table describes.
type metaState int

const (
	metaForeign metaState = iota // not numalab's transtats data
	metaStale                    // numalab's, but incomplete or another size
	metaReady                    // numalab's, complete, the size asked for
)

func judgeMeta(m map[string]string, rows, rate int64) metaState {
	if m[metaWorkload] != "transtats" {
		return metaForeign
	}
	if m[metaComplete] == "" || m[metaRows] != strconv.FormatInt(rows, 10) || m[metaRate] != strconv.FormatInt(rate, 10) {
		return metaStale
	}
	return metaReady
}

// DB is a loaded transtats database on an engine, ready to run queries.
type DB struct {
	cfg Config
	eng engine.Engine
	// Load is how the data got there.
	Load LoadStats
}

// Engine is the engine the data lives in.
func (db *DB) Engine() engine.Engine { return db.eng }

// Close closes the engine (and stops a managed server).
func (db *DB) Close() error { return db.eng.Close() }

// Rows is N.
func (db *DB) Rows() int64 { return db.cfg.Rows }

// Seconds returns the first and last tran_begin, in seconds after Start:
// the range P2's t is drawn from.
func (db *DB) Seconds() (first, last int64) {
	return 1 / db.cfg.Rate, LastSecond(db.cfg.Rows, db.cfg.Rate)
}

// SetDOP sets the parallelism of one query for connections opened from now
// on (see engine.Engine.SetDOP).
func (db *DB) SetDOP(ctx context.Context, dop int) error { return db.eng.SetDOP(ctx, dop) }

// Explain returns the engine's plan of query q (P2 with t = sec seconds
// after Start) at the current DOP, normalised by the engine so that equal
// plans have equal texts.
func (db *DB) Explain(ctx context.Context, q string, sec int64) (string, error) {
	text, err := QueryText(db.eng.Name(), q, sec)
	if err != nil {
		return "", err
	}
	p, err := db.eng.Explain(ctx, text)
	if err != nil {
		return "", fmt.Errorf("explaining %s: %w", q, err)
	}
	return p, nil
}

// Cost returns the engine's plan of query q (P2 with t = sec seconds after
// Start) at the current DOP with its estimated cost, without running it
// (planest.Explain); SQLite's has no cost, nor MariaDB 10's.
func (db *DB) Cost(ctx context.Context, q string, sec int64) (planest.Plan, error) {
	text, err := QueryText(db.eng.Name(), q, sec)
	if err != nil {
		return planest.Plan{}, err
	}
	p, err := planest.Explain(ctx, db.eng, text, false)
	if err != nil {
		return p, fmt.Errorf("costing %s: %w", q, err)
	}
	return p, nil
}

// Run runs query q on c (P2 with t = sec seconds after Start) and checks
// what it can: P1 must count every row.
func (db *DB) Run(ctx context.Context, c engine.Conn, q string, sec int64) (Result, error) {
	text, err := QueryText(db.eng.Name(), q, sec)
	if err != nil {
		return Result{}, err
	}
	var r Result
	n := 0
	err = c.Query(ctx, text, nil, func(vals []any) error {
		n++
		if len(vals) != 2 {
			return fmt.Errorf("got %d columns, want 2", len(vals))
		}
		var ok1, ok2 bool
		r.Groups, ok1 = vals[0].(int64)
		r.Rows, ok2 = vals[1].(int64)
		if !ok1 || !ok2 {
			return fmt.Errorf("got %T, %T, want two integers", vals[0], vals[1])
		}
		return nil
	})
	if err == nil && n != 1 {
		err = fmt.Errorf("got %d rows, want 1", n)
	}
	if err != nil {
		return r, fmt.Errorf("running %s: %w", q, err)
	}
	if q == P1 && r.Rows != db.cfg.Rows {
		return r, fmt.Errorf("running P1: it counted %d rows, but tran_stats holds %d (the data is damaged: load it again)",
			r.Rows, db.cfg.Rows)
	}
	return r, nil
}

var plannedWorkers = regexp.MustCompile(`Workers Planned: \d+`)

// PlanShape is a plan with what only follows from the DOP removed (the
// number of workers PostgreSQL plans under a Gather), so that two DOPs'
// plans compare equal when the optimizer chose the same operators.
func PlanShape(plan string) string {
	return plannedWorkers.ReplaceAllString(plan, "Workers Planned: n")
}

// Stream runs one query in a closed loop, for package drive: each call of
// Next runs the query once (P2 with a t drawn uniformly from the data's
// seconds by the stream's own RNG).
type Stream struct {
	db          *DB
	c           engine.Conn
	q           string
	rng         *rand.Rand
	first, last int64
}

// NewStream opens a connection running query q; seed seeds its RNG. Call
// it on the stream's own thread (drive's Opener is).
func (db *DB) NewStream(ctx context.Context, q string, seed uint64) (*Stream, error) {
	if q != P1 && q != P2 {
		return nil, fmt.Errorf("opening a stream: unknown query %q (expected P1 or P2)", q)
	}
	c, err := db.eng.Connect(ctx)
	if err != nil {
		return nil, err
	}
	first, last := db.Seconds()
	return &Stream{db: db, c: c, q: q, rng: rand.New(rand.NewPCG(seed, 0x7472616e73)), first: first, last: last}, nil
}

// Next runs the query once; its type is always 0.
func (s *Stream) Next(ctx context.Context) (int, error) {
	_, err := s.db.Run(ctx, s.c, s.q, s.T())
	return 0, err
}

// T draws P2's t, in seconds after Start.
func (s *Stream) T() int64 { return s.first + s.rng.Int64N(s.last-s.first+1) }

// Close closes the stream's connection.
func (s *Stream) Close() error { return s.c.Close() }
