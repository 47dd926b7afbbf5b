package tpcc

import (
	"context"
	"fmt"

	"github.com/numalab/numalab/internal/engine"
)

// stmtRunner runs the transactions as the clauses' statements (tx.go's
// sql... constants), for an engine without tpcc's server-side code
// (SQLite, DuckDB): each prepared once on the stream's own connection
// (engine.Prepare: on SQLite its C API on the connection's handle, one cgo
// call a statement, without database/sql, whose per-call cost is several
// times SQLite's own for these short transactions), each call one read
// transaction (BEGIN ... COMMIT). The context is Background: a cancellable
// one costs the embedded engines' drivers a goroutine per call; Next
// checks ctx between transactions instead. On SQLite a call allocates only
// the strings its result keeps that are not their column's last text and,
// by last name, the name it passes (TestStmtRunnerAllocations).
type stmtRunner struct {
	c         engine.Conn
	augmented bool

	begin, commit, rollback                                  stmt
	byID, byName, lastOrder, lines, nextOrder, lowStock, avg stmt

	ints  [6]int64
	args  [6]any
	names []nameRow

	// What a call's rows are read into: r for Order-Status (found: the
	// customer by id), n for Stock-Level's next order and count, avgPrice.
	r        *OrderStatusResult
	found    bool
	n        int
	avgPrice float64
	// Rows' callbacks, made once: a closure made per call would be
	// allocated per call.
	byIDRow, byNameRow, lastOrderRow, lineRow, intRow, avgRow func(engine.Row) error
}

// newStmtRunner opens the stream's connection and prepares the
// statements.
func newStmtRunner(ctx context.Context, w *Workload) (runner, error) {
	c, err := w.eng.Connect(ctx)
	if err != nil {
		return nil, err
	}
	s := &stmtRunner{c: c, augmented: w.opt.Augmented}
	s.byIDRow, s.byNameRow, s.lastOrderRow, s.lineRow = s.readByID, s.readByName, s.readLastOrder, s.readLine
	s.intRow, s.avgRow = s.readInt, s.readAvg
	for _, p := range []struct {
		st *stmt
		q  string
	}{
		{&s.begin, "BEGIN"}, {&s.commit, "COMMIT"}, {&s.rollback, "ROLLBACK"},
		{&s.byID, sqlCustomerByID}, {&s.byName, sqlCustomerByName}, {&s.lastOrder, sqlLastOrder},
		{&s.lines, sqlOrderLines}, {&s.nextOrder, sqlNextOrder}, {&s.lowStock, sqlLowStock}, {&s.avg, sqlAvgPrice},
	} {
		if p.st.Stmt, err = engine.Prepare(ctx, c, p.q); err != nil {
			s.close()
			return nil, fmt.Errorf("preparing %q: %w", p.q, err)
		}
		p.st.ints, _ = p.st.Stmt.(intQuerier)
	}
	return s, nil
}

func (s *stmtRunner) close() error {
	for _, st := range []stmt{s.begin, s.commit, s.rollback, s.byID, s.byName, s.lastOrder, s.lines,
		s.nextOrder, s.lowStock, s.avg} {
		if st.Stmt != nil {
			st.Close()
		}
	}
	return s.c.Close()
}

// stmt is a prepared statement and, when the engine's statement takes
// integer arguments unboxed (SQLite's), that.
type stmt struct {
	engine.Stmt
	ints intQuerier // nil: the integers are boxed for Query
}

// intQuerier is a statement that takes integer arguments unboxed: in
// Stmt.Query's []any Go allocates every integer above 255.
type intQuerier interface {
	QueryInts(args []int64, row func(engine.Row) error) error
}

// query runs st with vals as its arguments and calls row for each row.
func (s *stmtRunner) query(st *stmt, row func(engine.Row) error, vals ...int64) error {
	n := copy(s.ints[:], vals)
	if st.ints != nil {
		return st.ints.QueryInts(s.ints[:n], row)
	}
	for i, v := range s.ints[:n] {
		s.args[i] = int(v)
	}
	return st.Query(context.Background(), s.args[:n], row)
}

// end ends the read transaction that BEGIN started, as err says: COMMIT
// after a transaction's statements succeeded, else ROLLBACK and err.
func (s *stmtRunner) end(err error) error {
	if err != nil {
		s.query(&s.rollback, nil)
		return err
	}
	return s.query(&s.commit, nil)
}

// The rows' callbacks.

func (s *stmtRunner) readByID(row engine.Row) error {
	s.found = true
	s.r.Balance, s.r.First, s.r.Middle, s.r.Last = row.Float(0), row.Text(1), row.Text(2), row.Text(3)
	return nil
}

func (s *stmtRunner) readByName(row engine.Row) error {
	s.names = append(s.names, nameRow{id: int(row.Int(0)), balance: row.Float(1), first: row.Text(2), middle: row.Text(3)})
	return nil
}

func (s *stmtRunner) readLastOrder(row engine.Row) error {
	s.r.OID, s.r.EntryD, s.r.CarrierID = int(row.Int(0)), row.Text(1), int(row.Int(2))
	return nil
}

func (s *stmtRunner) readLine(row engine.Row) error {
	s.r.Lines = append(s.r.Lines, OrderLine{IID: int(row.Int(0)), SupplyWID: int(row.Int(1)),
		Quantity: int(row.Int(2)), Amount: row.Float(3), DeliveryD: row.Text(4)})
	return nil
}

func (s *stmtRunner) readInt(row engine.Row) error {
	s.n = int(row.Int(0))
	return nil
}

func (s *stmtRunner) readAvg(row engine.Row) error {
	s.avgPrice = row.Float(0)
	return nil
}

// orderStatus runs Order-Status in one read transaction.
func (s *stmtRunner) orderStatus(_ context.Context, in OrderStatusInput, r *OrderStatusResult) error {
	if err := s.query(&s.begin, nil); err != nil {
		return err
	}
	s.r = r
	err := s.orderStatusIn(in, r)
	s.r = nil
	return s.end(err)
}

// orderStatusIn runs Order-Status's statements.
func (s *stmtRunner) orderStatusIn(in OrderStatusInput, r *OrderStatusResult) error {
	if err := s.customer(in, r); err != nil {
		return err
	}
	w, d := int64(in.W), int64(in.D)
	if err := s.query(&s.lastOrder, s.lastOrderRow, w, d, int64(r.CID)); err != nil || r.OID == 0 {
		return err
	}
	if err := s.query(&s.lines, s.lineRow, w, d, int64(r.OID)); err != nil || !s.augmented {
		return err
	}
	var err error
	r.AvgPrice, err = s.queryAvg()
	return err
}

// customer finds Order-Status's customer, by last name or by id.
func (s *stmtRunner) customer(in OrderStatusInput, r *OrderStatusResult) error {
	if in.Last != "" {
		// All customers of the name sorted by C_FIRST; take the one at
		// position n/2 rounded up.
		s.names = s.names[:0]
		s.args[0], s.args[1], s.args[2] = in.W, in.D, in.Last
		if err := s.byName.Query(context.Background(), s.args[:3], s.byNameRow); err != nil {
			return err
		}
		return pickByName(s.names, in, r)
	}
	s.found = false
	r.CID = in.CID
	err := s.query(&s.byID, s.byIDRow, int64(in.W), int64(in.D), int64(in.CID))
	if err == nil && !s.found {
		err = fmt.Errorf("no customer %d in warehouse %d district %d", in.CID, in.W, in.D)
	}
	return err
}

// stockLevel runs Stock-Level in one read transaction.
func (s *stmtRunner) stockLevel(_ context.Context, w, d, threshold int) (int, error) {
	if err := s.query(&s.begin, nil); err != nil {
		return 0, err
	}
	err := s.end(s.stockLevelIn(w, d, threshold))
	return s.n, err
}

// stockLevelIn runs Stock-Level's statements; s.n is the count.
func (s *stmtRunner) stockLevelIn(w, d, threshold int) error {
	s.n = 0
	if err := s.query(&s.nextOrder, s.intRow, int64(w), int64(d)); err != nil {
		return err
	}
	next := s.n
	if next == 0 {
		return fmt.Errorf("no district %d in warehouse %d", d, w)
	}
	s.n = 0
	if err := s.query(&s.lowStock, s.intRow, int64(w), int64(d), int64(next), int64(next-stockLevelOrders), int64(w),
		int64(threshold)); err != nil || !s.augmented {
		return err
	}
	_, err := s.queryAvg()
	return err
}

// queryAvg runs the augmented transactions' average price.
func (s *stmtRunner) queryAvg() (float64, error) {
	s.avgPrice = 0
	err := s.query(&s.avg, s.avgRow)
	return s.avgPrice, err
}
