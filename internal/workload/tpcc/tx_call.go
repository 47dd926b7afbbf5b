package tpcc

import (
	"context"
	"errors"
	"fmt"

	"github.com/numalab/numalab/internal/engine"
)

// callRunner runs each transaction as one call of tpcc's server-side code
// (PostgreSQL's functions, tx_pg.go; MariaDB's procedures,
// tx_mariadb.go), prepared once on the stream's own connection
// (engine.Prepare), so one round trip. Order-Status's rows are the
// customer and its last order, then one row per order line (the line's
// columns NULL when the order has none); Stock-Level's one row is the
// count.
type callRunner struct {
	c         engine.Conn
	os, sl    engine.Stmt
	augmented bool
	args      [4]any

	// What a call is decoding into: r for Order-Status, else low.
	r     *OrderStatusResult
	low   int
	found bool
	// Rows' callbacks, made once.
	osRow, slRow func(engine.Row) error
}

// newCallRunner opens the stream's connection, runs the session's
// statements on it and prepares the calls, osSQL (Order-Status) and slSQL
// (Stock-Level).
func newCallRunner(ctx context.Context, w *Workload, osSQL, slSQL string) (runner, error) {
	c, err := w.eng.Connect(ctx)
	if err != nil {
		return nil, err
	}
	s := &callRunner{c: c, augmented: w.opt.Augmented}
	s.osRow, s.slRow = s.orderStatusRow, s.stockLevelRow
	for _, q := range w.opt.Session {
		if err := c.Exec(ctx, q); err != nil {
			c.Close()
			return nil, fmt.Errorf("setting up the session with %q: %w", q, err)
		}
	}
	if s.os, err = engine.Prepare(ctx, c, osSQL); err == nil {
		s.sl, err = engine.Prepare(ctx, c, slSQL)
	}
	if err != nil {
		s.close()
		return nil, fmt.Errorf("preparing the transaction calls: %w", err)
	}
	return s, nil
}

func (s *callRunner) close() error {
	for _, st := range []engine.Stmt{s.os, s.sl} {
		if st != nil {
			st.Close()
		}
	}
	return s.c.Close()
}

// lastNameNum maps a last name back to its number.
var lastNameNum = func() map[string]int {
	m := make(map[string]int, 1000)
	for n := 0; n < 1000; n++ {
		m[LastName(n)] = n
	}
	return m
}()

var errResult = errors.New("unexpected result shape")

func (s *callRunner) orderStatus(ctx context.Context, in OrderStatusInput, r *OrderStatusResult) error {
	c, n := in.CID, 0
	if in.Last != "" {
		num, ok := lastNameNum[in.Last]
		if !ok {
			return fmt.Errorf("%q is not a TPC-C last name", in.Last)
		}
		c, n = 0, num
	}
	s.args = [4]any{in.W, in.D, c, n}
	s.r = r
	err := s.os.Query(ctx, s.args[:4], s.osRow)
	s.r = nil
	if err == nil && r.First == "" {
		err = fmt.Errorf("order-status: no row: %w", errResult)
	}
	return err
}

// orderStatusRow takes one Order-Status row into s.r.
func (s *callRunner) orderStatusRow(v engine.Row) error {
	cols := 13
	if s.augmented {
		cols++
	}
	if v.Len() != cols {
		return fmt.Errorf("order-status: %d columns: %w", v.Len(), errResult)
	}
	r := s.r
	if r.First == "" {
		r.CID, r.First, r.Middle, r.Last, r.Balance = int(v.Int(0)), v.Text(1), v.Text(2), v.Text(3), v.Float(4)
		r.OID, r.EntryD, r.CarrierID = int(v.Int(5)), v.Text(6), int(v.Int(7))
		if s.augmented {
			r.AvgPrice = v.Float(13)
		}
	}
	if !v.Null(8) {
		r.Lines = append(r.Lines, OrderLine{IID: int(v.Int(8)), SupplyWID: int(v.Int(9)), Quantity: int(v.Int(10)),
			Amount: v.Float(11), DeliveryD: v.Text(12)})
	}
	return nil
}

func (s *callRunner) stockLevel(ctx context.Context, w, d, threshold int) (int, error) {
	s.args = [4]any{w, d, threshold}
	s.found = false
	if err := s.sl.Query(ctx, s.args[:3], s.slRow); err != nil {
		return 0, fmt.Errorf("stock-level: %w", err)
	}
	if !s.found {
		return 0, fmt.Errorf("stock-level: no row: %w", errResult)
	}
	return s.low, nil
}

func (s *callRunner) stockLevelRow(v engine.Row) error {
	if v.Len() != 1 {
		return fmt.Errorf("stock-level: %d columns: %w", v.Len(), errResult)
	}
	s.low, s.found = int(v.Int(0)), true
	return nil
}
