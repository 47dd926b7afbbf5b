package tpcc

import (
	"context"
	"fmt"

	"github.com/numalab/numalab/internal/engine"
)

// stmtRunner runs the transactions as the clauses' statements (tx.go's
// sql... constants), for an engine without tpcc's server-side code
// (SQLite, DuckDB): each prepared once on the stream's own connection
// (engine.Prepare: on SQLite go-sqlite3's driver statements, arguments
// and results in fixed arrays, without database/sql, whose per-call cost
// is several times SQLite's own for these short transactions), each call
// one read transaction (BEGIN ... COMMIT). The context is Background: a
// cancellable one costs the embedded engines' drivers a goroutine per
// call; Next checks ctx between transactions instead.
type stmtRunner struct {
	c         engine.Conn
	augmented bool

	begin, commit, rollback                                  engine.Stmt
	byID, byName, lastOrder, lines, nextOrder, lowStock, avg engine.Stmt

	args  [6]any
	names []nameRow
}

// newStmtRunner opens the stream's connection and prepares the
// statements.
func newStmtRunner(ctx context.Context, w *Workload) (runner, error) {
	c, err := w.eng.Connect(ctx)
	if err != nil {
		return nil, err
	}
	s := &stmtRunner{c: c, augmented: w.opt.Augmented}
	for _, p := range []struct {
		st *engine.Stmt
		q  string
	}{
		{&s.begin, "BEGIN"}, {&s.commit, "COMMIT"}, {&s.rollback, "ROLLBACK"},
		{&s.byID, sqlCustomerByID}, {&s.byName, sqlCustomerByName}, {&s.lastOrder, sqlLastOrder},
		{&s.lines, sqlOrderLines}, {&s.nextOrder, sqlNextOrder}, {&s.lowStock, sqlLowStock}, {&s.avg, sqlAvgPrice},
	} {
		if *p.st, err = engine.Prepare(ctx, c, p.q); err != nil {
			s.close()
			return nil, fmt.Errorf("preparing %q: %w", p.q, err)
		}
	}
	return s, nil
}

func (s *stmtRunner) close() error {
	for _, st := range []engine.Stmt{s.begin, s.commit, s.rollback, s.byID, s.byName, s.lastOrder, s.lines,
		s.nextOrder, s.lowStock, s.avg} {
		if st != nil {
			st.Close()
		}
	}
	return s.c.Close()
}

// query runs st with vals as its arguments and calls row for each row.
func (s *stmtRunner) query(st engine.Stmt, row func(engine.Row) error, vals ...any) error {
	n := copy(s.args[:], vals)
	return st.Query(context.Background(), s.args[:n], row)
}

// tx runs f in one read transaction.
func (s *stmtRunner) tx(f func() error) error {
	if err := s.query(s.begin, nil); err != nil {
		return err
	}
	if err := f(); err != nil {
		s.query(s.rollback, nil)
		return err
	}
	return s.query(s.commit, nil)
}

func (s *stmtRunner) avgPrice(p *float64) error {
	return s.query(s.avg, func(row engine.Row) error {
		*p = row.Float(0)
		return nil
	})
}

// orderStatus runs Order-Status in one read transaction.
func (s *stmtRunner) orderStatus(_ context.Context, in OrderStatusInput, r *OrderStatusResult) error {
	return s.tx(func() error {
		if err := s.customer(in, r); err != nil {
			return err
		}
		err := s.query(s.lastOrder, func(row engine.Row) error {
			r.OID, r.EntryD, r.CarrierID = int(row.Int(0)), row.Text(1), int(row.Int(2))
			return nil
		}, in.W, in.D, r.CID)
		if err != nil || r.OID == 0 {
			return err
		}
		err = s.query(s.lines, func(row engine.Row) error {
			r.Lines = append(r.Lines, OrderLine{IID: int(row.Int(0)), SupplyWID: int(row.Int(1)),
				Quantity: int(row.Int(2)), Amount: row.Float(3), DeliveryD: row.Text(4)})
			return nil
		}, in.W, in.D, r.OID)
		if err != nil || !s.augmented {
			return err
		}
		return s.avgPrice(&r.AvgPrice)
	})
}

// customer finds Order-Status's customer, by last name or by id.
func (s *stmtRunner) customer(in OrderStatusInput, r *OrderStatusResult) error {
	if in.Last != "" {
		// All customers of the name sorted by C_FIRST; take the one at
		// position n/2 rounded up.
		s.names = s.names[:0]
		err := s.query(s.byName, func(row engine.Row) error {
			s.names = append(s.names, nameRow{id: int(row.Int(0)), balance: row.Float(1),
				first: row.Text(2), middle: row.Text(3)})
			return nil
		}, in.W, in.D, in.Last)
		if err != nil {
			return err
		}
		return pickByName(s.names, in, r)
	}
	found := false
	err := s.query(s.byID, func(row engine.Row) error {
		found = true
		r.CID, r.Balance, r.First, r.Middle, r.Last = in.CID, row.Float(0), row.Text(1), row.Text(2), row.Text(3)
		return nil
	}, in.W, in.D, in.CID)
	if err == nil && !found {
		err = fmt.Errorf("no customer %d in warehouse %d district %d", in.CID, in.W, in.D)
	}
	return err
}

// stockLevel runs Stock-Level in one read transaction.
func (s *stmtRunner) stockLevel(_ context.Context, w, d, threshold int) (int, error) {
	var low int
	var avg float64
	err := s.tx(func() error {
		next := 0
		err := s.query(s.nextOrder, func(row engine.Row) error {
			next = int(row.Int(0))
			return nil
		}, w, d)
		if err != nil {
			return err
		}
		if next == 0 {
			return fmt.Errorf("no district %d in warehouse %d", d, w)
		}
		err = s.query(s.lowStock, func(row engine.Row) error {
			low = int(row.Int(0))
			return nil
		}, w, d, next, next-stockLevelOrders, w, threshold)
		if err != nil || !s.augmented {
			return err
		}
		return s.avgPrice(&avg)
	})
	return low, err
}
