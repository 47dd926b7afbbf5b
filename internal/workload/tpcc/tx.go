package tpcc

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/workload/meta"
)

// metaKind marks a numalab TPC-C file in numalab_meta.
const metaKind = "numalab tpcc"

// reloadHint tells a user how to make a usable file: run oltp loads one
// that does not exist.
const reloadHint = "numalab run oltp --warehouses N --db FILE, with a FILE that does not exist"

// ErrNotTPCC is wrapped when a file is not a finished numalab TPC-C database.
var ErrNotTPCC = errors.New("not a numalab TPC-C database")

// ErrUnfinished is wrapped (with ErrNotTPCC) when a file's load did not
// finish.
var ErrUnfinished = errors.New("load did not finish")

// Meta is what a loaded file says about itself.
type Meta struct {
	SchemaVersion int       `json:"schema_version"`
	Warehouses    int       `json:"warehouses"`
	Seed          int64     `json:"seed"`
	Load          Constants `json:"load_constants"`
	LoadTime      string    `json:"load_time"`
}

// readMeta reads numalab's marker table and refuses a database that is not
// a numalab TPC-C database, was made by another schema version, or whose
// load did not finish.
func readMeta(ctx context.Context, db *sql.DB, spec engine.Spec) (Meta, error) {
	var m Meta
	var n int
	table := metaTable(spec)
	err := db.QueryRowContext(ctx, spec.SQL.TableCount(), table).Scan(&n)
	if err == nil && n == 0 {
		return m, fmt.Errorf("%w: it has no %s table (load one with %s)", ErrNotTPCC, table, reloadHint)
	}
	if err != nil && (ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return m, fmt.Errorf("reading %s: %w", table, cmp.Or(ctx.Err(), err)) // stopped: nothing was learnt of the file
	}
	if err != nil {
		return m, fmt.Errorf("%w: %w (load one with %s)", ErrNotTPCC, err, reloadHint)
	}
	kv, err := meta.Read(ctx, db, spec.SQL, table)
	if err != nil {
		return m, err
	}
	if kv["kind"] != metaKind {
		return m, fmt.Errorf("%w: %s says kind %q (load one with %s)", ErrNotTPCC, table, kv["kind"], reloadHint)
	}
	ints := map[string]*int{"schema_version": &m.SchemaVersion, "warehouses": &m.Warehouses,
		"c_last": &m.Load.CLast, "c_id": &m.Load.CID, "ol_i_id": &m.Load.CIID}
	for k, p := range ints {
		v, err := strconv.Atoi(kv[k])
		if err != nil {
			return m, fmt.Errorf("%w: %s %s: %q is not an integer", ErrNotTPCC, table, k, kv[k])
		}
		*p = v
	}
	m.Seed, _ = strconv.ParseInt(kv["seed"], 10, 64)
	m.LoadTime = kv["load_time"]
	if m.SchemaVersion != SchemaVersion {
		return m, fmt.Errorf("%w: schema version %d, this numalab needs %d: reload it (%s)",
			ErrNotTPCC, m.SchemaVersion, SchemaVersion, reloadHint)
	}
	if kv["load_complete"] != "1" {
		return m, fmt.Errorf("%w: %w: remove it and load again (numalab run oltp --warehouses %d --seed %d --db FILE)",
			ErrNotTPCC, ErrUnfinished, m.Warehouses, m.Seed)
	}
	return m, nil
}

// Options choose a variant of the workload.
type Options struct {
	// Augmented adds avg(i_price) over items with i_id < 15000 to every
	// transaction (docs/workloads/tpcc-ro.md).
	Augmented bool
	// Seed draws the run's NURand constants (Clause 2.1.6.1).
	Seed int64
	// Session are SQL statements each PostgreSQL or MariaDB stream runs
	// on its own connection before anything else (run oltp --monitor's
	// per-session settings); other engines refuse them.
	Session []string
}

// Workload is an opened, complete TPC-C database. It is read-only and
// shared by all streams.
type Workload struct {
	path string // SQLite: the file
	eng  engine.Engine
	spec engine.Spec
	kind kind
	meta Meta
	run  Constants
	opt  Options
}

// Open opens the TPC-C database in eng (loaded by Load) for a run, refusing
// one that is not complete. The workload uses eng until the streams are
// closed; the caller closes eng (or the Workload, with Prepare).
func Open(ctx context.Context, eng engine.Engine, opt Options) (*Workload, error) {
	spec, d, ok := kindOf(eng.Name())
	if !ok {
		return nil, fmt.Errorf("opening tpcc on %s: no tpcc transactions for this engine", eng.Name())
	}
	m, err := readMeta(ctx, eng.DB(), spec)
	if err != nil {
		return nil, fmt.Errorf("opening tpcc on %s: %w", eng.Name(), err)
	}
	w := &Workload{eng: eng, spec: spec, kind: d, meta: m, opt: opt,
		run: runConstants(newGen(opt.Seed, labelConstants), m.Load)}
	if d.oneWriter {
		w.path = eng.Path()
	}
	if d.code != nil {
		// The server-side code of this numalab version, whatever loaded
		// the data.
		if err := d.code(ctx, eng); err != nil {
			return nil, fmt.Errorf("opening tpcc on %s: creating the transaction %s: %w", eng.Name(), d.codeKind, err)
		}
	}
	return w, nil
}

// Engine is the engine the workload runs on.
func (w *Workload) Engine() engine.Engine { return w.eng }

// Meta describes the opened file.
func (w *Workload) Meta() Meta { return w.meta }

// RunConstants are the NURand constants the streams use.
func (w *Workload) RunConstants() Constants { return w.run }

// Path is the SQLite file's path ("" on other engines).
func (w *Workload) Path() string { return w.path }

// Transaction types, indexes into TxNames.
const (
	TxOrderStatus = iota
	TxStockLevel
)

// TxNames names the transaction types Next returns.
var TxNames = []string{"order-status", "stock-level"}

// The statements of Clause 2.6.2.2 (Order-Status) and 2.8.2.2 (Stock-Level),
// as SQLite and DuckDB run them (PostgreSQL runs them inside its
// functions, tx_pg.go).
const (
	sqlCustomerByID = `SELECT c_balance, c_first, c_middle, c_last FROM customer
		WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?`
	sqlCustomerByName = `SELECT c_id, c_balance, c_first, c_middle FROM customer
		WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first`
	sqlLastOrder = `SELECT o_id, o_entry_d, o_carrier_id FROM orders
		WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1`
	sqlOrderLines = `SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
		WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?`
	sqlNextOrder = `SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?`
	sqlLowStock  = `SELECT count(DISTINCT s_i_id) FROM order_line, stock
		WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ?
		AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?`
	sqlAvgPrice = `SELECT avg(i_price) FROM item WHERE i_id < 15000`
)

// OrderStatusInput is one Order-Status call: by last name when Last is not
// empty, else by customer id.
type OrderStatusInput struct {
	W, D int
	CID  int
	Last string
}

// OrderLine is one line of the customer's last order.
type OrderLine struct {
	IID, SupplyWID, Quantity int
	Amount                   float64
	DeliveryD                string // empty when not delivered
}

// OrderStatusResult is what Order-Status returns (Clause 2.6.3.3).
type OrderStatusResult struct {
	CID                 int
	First, Middle, Last string
	Balance             float64
	OID                 int
	EntryD              string
	CarrierID           int // 0 when not delivered
	Lines               []OrderLine
	AvgPrice            float64 // augmented only
}

// Stream runs the workload on its own connection, prepared statements and
// random numbers; streams share nothing but the database.
type Stream struct {
	w   *Workload
	rng *rand.Rand
	x   runner
	os  OrderStatusResult
}

// runner is one engine's way to run the two transactions on one
// connection.
type runner interface {
	// orderStatus fills r (whose Lines it may reuse). SQLite and DuckDB
	// ignore ctx: a cancellable context costs their drivers a goroutine
	// per call; Next checks ctx between transactions instead.
	orderStatus(ctx context.Context, in OrderStatusInput, r *OrderStatusResult) error
	stockLevel(ctx context.Context, w, d, threshold int) (int, error)
	close() error
}

// NewStream opens a stream's connection and prepares its statements. Call
// it on the goroutine (and OS thread) that will run the stream.
func (w *Workload) NewStream(rng *rand.Rand) (*Stream, error) {
	return w.OpenStream(context.Background(), rng)
}

// OpenStream is NewStream with a context for connecting. On PostgreSQL
// the stream's backend is pinned to the calling thread's CPUs when the
// engine pins backends (engine.Options.PinBackends; always with a managed
// server).
func (w *Workload) OpenStream(ctx context.Context, rng *rand.Rand) (*Stream, error) {
	s := &Stream{w: w, rng: rng}
	if len(w.opt.Session) > 0 && !w.spec.Server {
		return nil, fmt.Errorf("opening a tpcc stream: session statements are for %s, not %s",
			engine.Titles(engine.IsServer), w.spec.Name)
	}
	var err error
	if s.x, err = w.kind.runner(ctx, w); err != nil {
		return nil, fmt.Errorf("opening a tpcc stream: %w", err)
	}
	return s, nil
}

// Close releases the stream's statements and connection.
func (s *Stream) Close() error { return s.x.close() }

// Next runs one transaction, Order-Status or Stock-Level with equal
// probability, and returns its type (an index into TxNames). Inputs follow
// Clauses 2.6.1 and 2.8.1, with the warehouse and district drawn uniformly
// for each call.
func (s *Stream) Next(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return -1, err
	}
	if s.rng.IntN(2) == 0 {
		_, err := s.orderStatus(ctx, s.orderStatusInput())
		return TxOrderStatus, err
	}
	w, d := uniform(s.rng, 1, s.w.meta.Warehouses), uniform(s.rng, 1, DistrictsPerWH)
	_, err := s.stockLevel(ctx, w, d, uniform(s.rng, 10, 20))
	return TxStockLevel, err
}

// orderStatusInput draws Clause 2.6.1's inputs: 60% by last name
// (NURand(255, 0, 999)), 40% by id (NURand(1023, 1, 3000)).
func (s *Stream) orderStatusInput() OrderStatusInput {
	in := OrderStatusInput{W: uniform(s.rng, 1, s.w.meta.Warehouses), D: uniform(s.rng, 1, DistrictsPerWH)}
	if uniform(s.rng, 1, 100) <= 60 {
		in.Last = LastName(NURand(s.rng, aLast, 0, 999, s.w.run.CLast))
	} else {
		in.CID = NURand(s.rng, aCID, 1, CustomersPerDist, s.w.run.CID)
	}
	return in
}

// OrderStatus runs Order-Status (Clause 2.6.2.2) as one read transaction
// (on PostgreSQL one function call). The result is reused by the next call.
func (s *Stream) OrderStatus(in OrderStatusInput) (*OrderStatusResult, error) {
	return s.orderStatus(context.Background(), in)
}

func (s *Stream) orderStatus(ctx context.Context, in OrderStatusInput) (*OrderStatusResult, error) {
	r := &s.os
	*r = OrderStatusResult{Lines: r.Lines[:0]}
	if err := s.x.orderStatus(ctx, in, r); err != nil {
		return nil, fmt.Errorf("order-status: %w", err)
	}
	return r, nil
}

// StockLevel runs Stock-Level (Clause 2.8.2.2) as one read transaction (on
// PostgreSQL one function call): the number of distinct items in the
// district's last 20 orders whose stock is below threshold.
func (s *Stream) StockLevel(w, d, threshold int) (int, error) {
	return s.stockLevel(context.Background(), w, d, threshold)
}

func (s *Stream) stockLevel(ctx context.Context, w, d, threshold int) (int, error) {
	low, err := s.x.stockLevel(ctx, w, d, threshold)
	if err != nil {
		return 0, fmt.Errorf("stock-level: %w", err)
	}
	return low, nil
}

// nameRow is one customer found by last name.
type nameRow struct {
	id            int
	balance       float64
	first, middle string
}

// pickByName fills r with the customer at position n/2 rounded up of the
// n customers named in.Last, sorted by first name, or says there is none.
func pickByName(names []nameRow, in OrderStatusInput, r *OrderStatusResult) error {
	if len(names) == 0 {
		return fmt.Errorf("no customer named %s in warehouse %d district %d", in.Last, in.W, in.D)
	}
	c := names[(len(names)+1)/2-1]
	r.CID, r.Balance, r.First, r.Middle, r.Last = c.id, c.balance, c.first, c.middle, in.Last
	return nil
}

// asNumber converts a numeric column value, which the driver gives as
// int64 or float64 whatever the column's declared type, to T; anything
// else is 0.
func asNumber[T int | int64 | float64](v driver.Value) T {
	switch x := v.(type) {
	case int64:
		return T(x)
	case float64:
		return T(x)
	}
	return 0
}

func asString(v driver.Value) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	}
	return ""
}
