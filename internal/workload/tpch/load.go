package tpch

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/numalab/numalab/internal/engine"
)

// Config says what to load.
type Config struct {
	// SF is the scale factor: SF 1 is about 1 GB of flat data.
	SF float64
	// Seed makes the data: the same SF and seed give the same rows.
	Seed int64
	// Workers generate in parallel, each its own key ranges (default: the
	// CPUs), each writing every table of the chunk group it is loading
	// through a connection of its own (PostgreSQL: at most two connections
	// a worker), or DuckDB's threads (at most this many) that call its table
	// functions for rows. SQLite, one writer at a time, always loads with
	// one.
	Workers int
}

// LoadStats say what a load did.
type LoadStats struct {
	Rows    map[string]int64 `json:"rows"`    // per table
	Total   int64            `json:"total"`   // all tables
	Workers int              `json:"workers"` // that generated and wrote
	Insert  time.Duration    `json:"insert"`  // generating and writing
	Keys    time.Duration    `json:"keys"`    // primary keys and statistics after
}

// RowsPerSec is the insert rate: rows over generating and writing time.
func (s LoadStats) RowsPerSec() float64 {
	if s.Insert <= 0 {
		return 0
	}
	return float64(s.Total) / s.Insert.Seconds()
}

// A sink appends one table's rows for one worker: rows holds n rows of the
// table's columns, flat. Each engine has its own (load_*.go). Closing it
// with abort nil keeps what was written (PostgreSQL commits its COPY);
// with an error, PostgreSQL keeps none of it.
type sink interface {
	write(ctx context.Context, rows []val, n int) error
	close(abort error) error
}

// worker is one worker's way into the engine: it opens a sink per table.
type worker interface {
	sink(t *table) (sink, error)
}

// chunk is a unit of work: keys [lo, hi) of one table group.
type chunk struct {
	group  int // groupSupplier, ...
	lo, hi int64
}

const (
	groupFixed    = iota // region and nation
	groupSupplier        // supplier
	groupPart            // part and partsupp
	groupCustomer        // customer
	groupOrders          // orders and lineitem
)

// chunkRows is the keys of one chunk (orders: about 4 lineitems each):
// small enough that a chunk's rows, generated and then encoded, are still
// in the CPU's caches when they are encoded.
const chunkRows = 1024

// rowsPerKey is how many rows of each table (in tables' order) a key of a
// chunk makes, at most or (lineitem) a little more than on average.
var rowsPerKey = [...]int{1, 1, 1, 1, 4, 1, 1, 5}

// chunks splits a load into chunks, the largest tables first so that the
// workers finish together.
func chunks(n Counts) []chunk {
	var cs []chunk
	add := func(group int, total int64) {
		for lo := int64(0); lo < total; lo += chunkRows {
			cs = append(cs, chunk{group, lo, min(lo+chunkRows, total)})
		}
	}
	add(groupOrders, n.Orders)
	add(groupPart, n.Part)
	add(groupCustomer, n.Customer)
	add(groupSupplier, n.Supplier)
	cs = append(cs, chunk{groupFixed, 0, 1})
	return cs
}

// Load creates the eight tables in eng and loads them for cfg: eng is a new
// file (SQLite or DuckDB opened with engine.Options.Create) or a
// PostgreSQL or MariaDB database, where the tables go into numalab's
// schema (MariaDB: numalab's database). A table
// that exists already is refused, untouched; a load that fails on
// PostgreSQL or MariaDB drops the tables it created. Afterwards
// PostgreSQL gets its primary keys and ANALYZE, SQLite and DuckDB ANALYZE,
// MariaDB its secondary indexes (myIndexes) and ANALYZE TABLE.
func Load(ctx context.Context, eng engine.Engine, cfg Config) (st LoadStats, err error) {
	st = LoadStats{Rows: map[string]int64{}}
	g, err := newGen(cfg.Seed, cfg.SF)
	if err != nil {
		return st, fmt.Errorf("loading tpch: %w", err)
	}
	spec, d, ok := loaderOf(eng.Name())
	if !ok {
		return st, fmt.Errorf("loading tpch: no loader for engine %q", eng.Name())
	}
	st.Workers = cfg.Workers
	if st.Workers <= 0 {
		st.Workers = runtime.NumCPU()
	}
	if d.oneWriter {
		st.Workers = 1
	}
	var created []string
	defer func() {
		// A failed load into a server drops the tables it created; a
		// file's caller discards the file (engine.Engine.Discard).
		if err == nil || !spec.Server {
			return
		}
		for _, name := range created {
			if _, derr := eng.DB().ExecContext(context.WithoutCancel(ctx), "DROP TABLE "+name); derr != nil {
				err = fmt.Errorf("%w; and dropping %s: %w", err, name, derr)
			}
		}
	}()
	for _, t := range tables {
		if _, err := eng.DB().ExecContext(ctx, createTable(t, spec)); err != nil {
			return st, fmt.Errorf("loading tpch into %s: creating %s: %w", spec.Name, t.name, err)
		}
		created = append(created, t.name)
	}
	t0 := time.Now()
	rows, err := insert(ctx, eng, g, st.Workers)
	st.Insert = time.Since(t0)
	for i, t := range tables {
		st.Rows[t.name] = rows[i]
		st.Total += rows[i]
	}
	if err != nil {
		return st, fmt.Errorf("loading tpch into %s: %w", spec.Name, err)
	}
	t0 = time.Now()
	for _, s := range d.afterLoad(spec.SQL) {
		if _, err := eng.DB().ExecContext(ctx, s); err != nil {
			return st, fmt.Errorf("loading tpch into %s: %s: %w", spec.Name, s, err)
		}
	}
	st.Keys = time.Since(t0)
	return st, nil
}

// insert generates every table's rows into eng's tables, which exist and
// are empty, by the engine's bulk path (its loader's insert), and returns
// the rows written per table (in tables' order).
func insert(ctx context.Context, eng engine.Engine, g *gen, workers int) ([]int64, error) {
	_, d, ok := loaderOf(eng.Name())
	if !ok {
		return nil, fmt.Errorf("no loader for engine %q", eng.Name())
	}
	return d.insert(ctx, eng, g, chunks(g.n), workers)
}

// generate runs workers, each opened by open, over the chunks cs and
// returns the rows written per table (in tables' order).
func generate(ctx context.Context, g *gen, cs []chunk, workers int,
	open func(context.Context) (worker, error)) ([]int64, error) {
	var next atomic.Int64
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	counts := make([][]int64, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		counts[w] = make([]int64, len(tables))
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = work(ctx, open, g, cs, &next, counts[w])
			if errs[w] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	rows := make([]int64, len(tables))
	for _, c := range counts {
		for i, n := range c {
			rows[i] += n
		}
	}
	// A worker's own failure matters more than the cancellation it
	// caused in the others.
	var own, canceled []error
	for _, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, context.Canceled):
			canceled = append(canceled, err)
		default:
			own = append(own, err)
		}
	}
	if len(own) > 0 {
		return rows, errors.Join(own...)
	}
	if len(canceled) > 0 {
		return rows, canceled[0]
	}
	return rows, nil
}

// work is one worker: it takes chunks until none are left, generates their
// rows into batches and writes them to its sinks. A worker takes a
// group's chunks one after another and never comes back to the group (cs
// holds each group's chunks together), so it closes its sinks when it
// moves to another group: PostgreSQL's COPYs then end and their
// connections are returned.
func work(ctx context.Context, open func(context.Context) (worker, error), g *gen, cs []chunk, next *atomic.Int64,
	rows []int64) (err error) {
	wk, err := open(ctx)
	if err != nil {
		return err
	}
	sinks := make([]sink, len(tables))
	defer func() {
		// A worker that failed gives up what its sinks hold.
		if cerr := closeSinks(sinks, err); err == nil {
			err = cerr
		}
	}()
	b := newBatch()
	group := -1
	for {
		i := next.Add(1) - 1
		if i >= int64(len(cs)) {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if cs[i].group != group {
			if err := closeSinks(sinks, nil); err != nil {
				return err
			}
			group = cs[i].group
		}
		b.fill(g, cs[i])
		for ti, t := range tables {
			if b.ns[ti] == 0 {
				continue
			}
			if sinks[ti] == nil {
				s, err := wk.sink(t)
				if err != nil {
					return fmt.Errorf("loading %s: %w", t.name, err)
				}
				sinks[ti] = s
			}
			rs := b.bufs[ti][:b.ns[ti]*len(t.cols)]
			warm(t, rs)
			if err := sinks[ti].write(ctx, rs, b.ns[ti]); err != nil {
				return fmt.Errorf("loading %s: %w", t.name, err)
			}
			rows[ti] += int64(b.ns[ti])
		}
		b.reset()
	}
	return nil
}

// closeSinks closes the sinks open, with abort (see sink), and forgets
// them.
func closeSinks(sinks []sink, abort error) error {
	var errs []error
	for ti, s := range sinks {
		if s != nil {
			if err := s.close(abort); err != nil {
				errs = append(errs, fmt.Errorf("loading %s: %w", tables[ti].name, err))
			}
			sinks[ti] = nil
		}
	}
	return errors.Join(errs...)
}

// The tables' indexes in tables.
const (
	iRegion = iota
	iNation
	iSupplier
	iPart
	iPartSupp
	iCustomer
	iOrders
	iLineitem
)

// tableGroup is the chunk group that makes each table's rows (in tables'
// order).
var tableGroup = [...]int{groupFixed, groupFixed, groupSupplier, groupPart, groupPart, groupCustomer,
	groupOrders, groupOrders}

// batch holds a chunk's rows, per table, flat: ns[ti] rows of table ti in
// bufs[ti]. Its buffers are made at first use large enough for a chunk's
// (lineitem: for 5 lines an order, growing in the rare chunk that has
// more) and reused.
type batch struct {
	bufs [][]val
	ns   []int
}

func newBatch() *batch {
	return &batch{bufs: make([][]val, len(tables)), ns: make([]int, len(tables))}
}

// reset empties the batch.
func (b *batch) reset() { clear(b.ns) }

// rowsOf returns the next k rows' slots in table ti's rows; they stay
// valid until the next call for ti.
func (b *batch) rowsOf(ti, k int) []val {
	nc := len(tables[ti].cols)
	need := (b.ns[ti] + k) * nc
	if b.bufs[ti] == nil {
		b.bufs[ti] = make([]val, max(need, chunkRows*rowsPerKey[ti]*nc))
	}
	if need > len(b.bufs[ti]) {
		b.bufs[ti] = append(b.bufs[ti], make([]val, need-len(b.bufs[ti]))...)
	}
	b.ns[ti] += k
	return b.bufs[ti][need-k*nc : need]
}

// fill adds chunk c's rows to the batch.
func (b *batch) fill(g *gen, c chunk) {
	row := func(ti int) []val { return b.rowsOf(ti, 1) }
	var lines [7][16]val
	switch c.group {
	case groupFixed:
		for k := range g.n.Region {
			g.region(k, row(iRegion))
		}
		for k := range g.n.Nation {
			g.nation(k, row(iNation))
		}
	case groupSupplier:
		for k := c.lo; k < c.hi; k++ {
			g.supplier(k+1, row(iSupplier))
		}
	case groupCustomer:
		for k := c.lo; k < c.hi; k++ {
			g.customer(k+1, row(iCustomer))
		}
	case groupPart:
		nc := len(tPartSupp.cols)
		for k := c.lo; k < c.hi; k++ {
			all := b.rowsOf(iPartSupp, 4)
			var ps [4][]val
			for j := range ps {
				ps[j] = all[j*nc : (j+1)*nc]
			}
			g.part(k+1, row(iPart), ps)
		}
	case groupOrders:
		for k := c.lo; k < c.hi; k++ {
			n := g.order(k, row(iOrders), &lines)
			for l := range n {
				copy(row(iLineitem), lines[l][:])
			}
		}
	}
}

// warm reads every cache line of the comments in rows (of table t), which
// are substrings of the text pool at random offsets. Read here, one after
// another, the loads overlap; the engine's copy of each string, a call a
// string, would wait for each in turn (at SF 1, 7.5% of a DuckDB load's
// CPU samples were that wait). The other text columns are made fresh or
// come from short lists, already in the caches.
func warm(t *table, rows []val) {
	ci := len(t.cols) - 1 // every table's comment is its last column
	var x byte
	for r := ci; r < len(rows); r += len(t.cols) {
		s := rows[r].s
		for i := 0; i < len(s); i += 64 {
			x |= s[i]
		}
		if len(s) > 0 {
			x |= s[len(s)-1]
		}
	}
	warmed.Store(uint32(x))
}

// warmed keeps warm's reads from being optimised away.
var warmed atomic.Uint32
