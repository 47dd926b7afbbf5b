package tpcc

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"

	"github.com/mattn/go-sqlite3"
	"github.com/numalab/numalab/internal/engine"
)

// metaKind marks a numalab TPC-C file in numalab_meta.
const metaKind = "numalab tpcc"

// reloadHint tells a user how to make a usable file.
const reloadHint = "numalab load --warehouses N FILE"

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

// ReadMeta reads numalab's marker table and refuses a file that is not a
// numalab TPC-C database, was made by another schema version, or whose load
// did not finish.
func ReadMeta(ctx context.Context, db *sql.DB) (Meta, error) {
	var m Meta
	var name string
	err := db.QueryRowContext(ctx, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name = 'numalab_meta'").Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return m, fmt.Errorf("%w: it has no numalab_meta table (load one with %s)", ErrNotTPCC, reloadHint)
	}
	if err != nil {
		return m, fmt.Errorf("%w: %w (load one with %s)", ErrNotTPCC, err, reloadHint)
	}
	kv := map[string]string{}
	rows, err := db.QueryContext(ctx, "SELECT key, value FROM numalab_meta")
	if err != nil {
		return m, fmt.Errorf("reading numalab_meta: %w", err)
	}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			return m, fmt.Errorf("reading numalab_meta: %w", err)
		}
		kv[k] = v
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return m, fmt.Errorf("reading numalab_meta: %w", err)
	}
	if kv["kind"] != metaKind {
		return m, fmt.Errorf("%w: numalab_meta says kind %q (load one with %s)", ErrNotTPCC, kv["kind"], reloadHint)
	}
	ints := map[string]*int{"schema_version": &m.SchemaVersion, "warehouses": &m.Warehouses,
		"c_last": &m.Load.CLast, "c_id": &m.Load.CID, "ol_i_id": &m.Load.CIID}
	for k, p := range ints {
		v, err := strconv.Atoi(kv[k])
		if err != nil {
			return m, fmt.Errorf("%w: numalab_meta %s: %q is not an integer", ErrNotTPCC, k, kv[k])
		}
		*p = v
	}
	m.Seed, _ = strconv.ParseInt(kv["seed"], 10, 64)
	m.LoadTime = kv["load_time"]
	if m.SchemaVersion != SchemaVersion {
		return m, fmt.Errorf("%w: schema version %d, this numalab needs %d: reload it (%s)", ErrNotTPCC, m.SchemaVersion, SchemaVersion, reloadHint)
	}
	if kv["load_complete"] != "1" {
		return m, fmt.Errorf("%w: %w: reload with numalab load --warehouses %d --seed %d", ErrNotTPCC, ErrUnfinished, m.Warehouses, m.Seed)
	}
	return m, nil
}

// Options choose a variant of the workload.
type Options struct {
	// Augmented adds avg(i_price) over items with i_id < 15000 to every
	// transaction (DESIGN.md, tpcc-ro).
	Augmented bool
	// Seed draws the run's NURand constants (Clause 2.1.6.1).
	Seed int64
}

// Workload is an opened, complete TPC-C file. It is read-only and shared by
// all streams.
type Workload struct {
	path string
	meta Meta
	run  Constants
	opt  Options
}

// Open opens path for a run, refusing a file that is not a complete numalab
// TPC-C database.
func Open(ctx context.Context, path string, opt Options) (*Workload, error) {
	db, err := engine.OpenSQLiteDB(path)
	if err != nil {
		return nil, fmt.Errorf("opening tpcc: %w", err)
	}
	defer db.Close()
	m, err := ReadMeta(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("opening tpcc %s: %w", path, err)
	}
	return &Workload{path: path, meta: m, opt: opt, run: runConstants(newGen(opt.Seed, labelConstants), m.Load)}, nil
}

// Meta describes the opened file.
func (w *Workload) Meta() Meta { return w.meta }

// RunConstants are the NURand constants the streams use.
func (w *Workload) RunConstants() Constants { return w.run }

// Path is the file's path.
func (w *Workload) Path() string { return w.path }

// Transaction types, indexes into TxNames.
const (
	TxOrderStatus = iota
	TxStockLevel
)

// TxNames names the transaction types Next returns.
var TxNames = []string{"order-status", "stock-level"}

// The statements of Clause 2.6.2.2 (Order-Status) and 2.8.2.2 (Stock-Level).
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
// random numbers; streams share nothing but the file's pages.
type Stream struct {
	w    *Workload
	conn *sqlite3.SQLiteConn
	rng  *rand.Rand

	begin, commit, rollback                                  driver.Stmt
	byID, byName, lastOrder, lines, nextOrder, lowStock, avg driver.Stmt

	args  [6]driver.NamedValue
	dest  [5]driver.Value
	names []nameRow
	os    OrderStatusResult
}

type nameRow struct {
	id            int
	balance       float64
	first, middle string
}

// NewStream opens a stream's connection and prepares its statements. Call
// it on the goroutine (and OS thread) that will run the stream.
func (w *Workload) NewStream(rng *rand.Rand) (*Stream, error) {
	c, err := engine.OpenSQLiteConn(w.path)
	if err != nil {
		return nil, fmt.Errorf("opening a tpcc stream: %w", err)
	}
	s := &Stream{w: w, conn: c, rng: rng}
	for i := range s.args {
		s.args[i].Ordinal = i + 1
	}
	for _, p := range []struct {
		st *driver.Stmt
		q  string
	}{
		{&s.begin, "BEGIN"}, {&s.commit, "COMMIT"}, {&s.rollback, "ROLLBACK"},
		{&s.byID, sqlCustomerByID}, {&s.byName, sqlCustomerByName}, {&s.lastOrder, sqlLastOrder},
		{&s.lines, sqlOrderLines}, {&s.nextOrder, sqlNextOrder}, {&s.lowStock, sqlLowStock}, {&s.avg, sqlAvgPrice},
	} {
		st, err := c.Prepare(p.q)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("opening a tpcc stream: preparing %q: %w", p.q, err)
		}
		*p.st = st
	}
	return s, nil
}

// Close releases the stream's statements and connection.
func (s *Stream) Close() error {
	for _, st := range []driver.Stmt{s.begin, s.commit, s.rollback, s.byID, s.byName, s.lastOrder, s.lines, s.nextOrder, s.lowStock, s.avg} {
		if st != nil {
			st.Close()
		}
	}
	return s.conn.Close()
}

// Next runs one transaction, Order-Status or Stock-Level with equal
// probability, and returns its type (an index into TxNames). Inputs follow
// Clauses 2.6.1 and 2.8.1, with the warehouse and district drawn uniformly
// for each call.
func (s *Stream) Next(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return -1, err
	}
	if s.rng.IntN(2) == 0 {
		_, err := s.OrderStatus(s.orderStatusInput())
		return TxOrderStatus, err
	}
	w, d := uniform(s.rng, 1, s.w.meta.Warehouses), uniform(s.rng, 1, DistrictsPerWH)
	_, err := s.StockLevel(w, d, uniform(s.rng, 10, 20))
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

// query runs st with the first n of s.args and calls row for each row in
// s.dest. The context is Background: a cancellable one costs the driver a
// goroutine per call; Next checks ctx between transactions instead.
func (s *Stream) query(st driver.Stmt, n int, row func() error) error {
	rows, err := st.(driver.StmtQueryContext).QueryContext(context.Background(), s.args[:n])
	if err != nil {
		return err
	}
	nc := len(rows.Columns())
	for {
		err := rows.Next(s.dest[:nc])
		if err == io.EOF {
			break
		}
		if err == nil {
			err = row()
		}
		if err != nil {
			rows.Close()
			return err
		}
	}
	return rows.Close()
}

func (s *Stream) set(vals ...int) int {
	for i, v := range vals {
		s.args[i].Value = int64(v)
	}
	return len(vals)
}

func (s *Stream) exec(st driver.Stmt) error {
	_, err := st.(driver.StmtExecContext).ExecContext(context.Background(), nil)
	return err
}

// tx runs f in one read transaction.
func (s *Stream) tx(f func() error) error {
	if err := s.exec(s.begin); err != nil {
		return err
	}
	if err := f(); err != nil {
		s.exec(s.rollback)
		return err
	}
	return s.exec(s.commit)
}

func (s *Stream) avgPrice(p *float64) error {
	return s.query(s.avg, 0, func() error {
		*p = asFloat(s.dest[0])
		return nil
	})
}

// OrderStatus runs Order-Status (Clause 2.6.2.2) as one read transaction.
// The result is reused by the next call.
func (s *Stream) OrderStatus(in OrderStatusInput) (*OrderStatusResult, error) {
	r := &s.os
	*r = OrderStatusResult{Lines: r.Lines[:0]}
	err := s.tx(func() error {
		if in.Last != "" {
			// All customers of the name sorted by C_FIRST; take the one at
			// position n/2 rounded up.
			s.names = s.names[:0]
			s.set(in.W, in.D)
			s.args[2].Value = in.Last
			err := s.query(s.byName, 3, func() error {
				s.names = append(s.names, nameRow{id: int(asInt(s.dest[0])), balance: asFloat(s.dest[1]),
					first: asString(s.dest[2]), middle: asString(s.dest[3])})
				return nil
			})
			if err != nil {
				return err
			}
			if len(s.names) == 0 {
				return fmt.Errorf("order-status: no customer named %s in warehouse %d district %d", in.Last, in.W, in.D)
			}
			c := s.names[(len(s.names)+1)/2-1]
			r.CID, r.Balance, r.First, r.Middle, r.Last = c.id, c.balance, c.first, c.middle, in.Last
		} else {
			found := false
			err := s.query(s.byID, s.set(in.W, in.D, in.CID), func() error {
				found = true
				r.CID, r.Balance, r.First, r.Middle, r.Last = in.CID, asFloat(s.dest[0]), asString(s.dest[1]), asString(s.dest[2]), asString(s.dest[3])
				return nil
			})
			if err != nil {
				return err
			}
			if !found {
				return fmt.Errorf("order-status: no customer %d in warehouse %d district %d", in.CID, in.W, in.D)
			}
		}
		err := s.query(s.lastOrder, s.set(in.W, in.D, r.CID), func() error {
			r.OID, r.EntryD, r.CarrierID = int(asInt(s.dest[0])), asString(s.dest[1]), int(asInt(s.dest[2]))
			return nil
		})
		if err != nil || r.OID == 0 {
			return err
		}
		err = s.query(s.lines, s.set(in.W, in.D, r.OID), func() error {
			r.Lines = append(r.Lines, OrderLine{IID: int(asInt(s.dest[0])), SupplyWID: int(asInt(s.dest[1])),
				Quantity: int(asInt(s.dest[2])), Amount: asFloat(s.dest[3]), DeliveryD: asString(s.dest[4])})
			return nil
		})
		if err != nil || !s.w.opt.Augmented {
			return err
		}
		return s.avgPrice(&r.AvgPrice)
	})
	if err != nil {
		return nil, fmt.Errorf("order-status: %w", err)
	}
	return r, nil
}

// StockLevel runs Stock-Level (Clause 2.8.2.2) as one read transaction: the
// number of distinct items in the district's last 20 orders whose stock is
// below threshold.
func (s *Stream) StockLevel(w, d, threshold int) (int, error) {
	var low int
	var avg float64
	err := s.tx(func() error {
		next := 0
		err := s.query(s.nextOrder, s.set(w, d), func() error {
			next = int(asInt(s.dest[0]))
			return nil
		})
		if err != nil {
			return err
		}
		if next == 0 {
			return fmt.Errorf("no district %d in warehouse %d", d, w)
		}
		err = s.query(s.lowStock, s.set(w, d, next, next-stockLevelOrders, w, threshold), func() error {
			low = int(asInt(s.dest[0]))
			return nil
		})
		if err != nil || !s.w.opt.Augmented {
			return err
		}
		return s.avgPrice(&avg)
	})
	if err != nil {
		return 0, fmt.Errorf("stock-level: %w", err)
	}
	return low, nil
}

func asInt(v driver.Value) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return 0
}

func asFloat(v driver.Value) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
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
