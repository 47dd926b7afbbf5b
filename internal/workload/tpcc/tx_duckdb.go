package tpcc

import (
	"context"
	"database/sql"
	"fmt"
)

// duckRunner runs the transactions on DuckDB: the same statements as on
// SQLite, prepared once on the stream's own connection of the shared
// database, each call in one transaction. DuckDB's per-query cost (tens of
// microseconds) dwarfs database/sql's, so the stream uses database/sql.
type duckRunner struct {
	conn      *sql.Conn
	closeConn func() error
	augmented bool

	byID, byName, lastOrder, lines, nextOrder, lowStock, avg *sql.Stmt
	names                                                    []nameRow
}

func newDuckRunner(ctx context.Context, w *Workload) (*duckRunner, error) {
	c, err := w.eng.Connect(ctx)
	if err != nil {
		return nil, err
	}
	s := &duckRunner{conn: c.Native().DuckDB, closeConn: c.Close, augmented: w.opt.Augmented}
	for _, p := range []struct {
		st **sql.Stmt
		q  string
	}{
		{&s.byID, sqlCustomerByID}, {&s.byName, sqlCustomerByName}, {&s.lastOrder, sqlLastOrder},
		{&s.lines, sqlOrderLines}, {&s.nextOrder, sqlNextOrder}, {&s.lowStock, sqlLowStock}, {&s.avg, sqlAvgPrice},
	} {
		st, err := s.conn.PrepareContext(ctx, p.q)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("preparing %q: %w", p.q, err)
		}
		*p.st = st
	}
	return s, nil
}

func (s *duckRunner) close() error {
	for _, st := range []*sql.Stmt{s.byID, s.byName, s.lastOrder, s.lines, s.nextOrder, s.lowStock, s.avg} {
		if st != nil {
			st.Close()
		}
	}
	return s.closeConn()
}

// tx runs f in one transaction. The context is Background, as on SQLite:
// Next checks the caller's context between transactions.
func (s *duckRunner) tx(f func(ctx context.Context) error) error {
	ctx := context.Background()
	if _, err := s.conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return err
	}
	if err := f(ctx); err != nil {
		s.conn.ExecContext(ctx, "ROLLBACK")
		return err
	}
	_, err := s.conn.ExecContext(ctx, "COMMIT")
	return err
}

func (s *duckRunner) orderStatus(_ context.Context, in OrderStatusInput, r *OrderStatusResult) error {
	return s.tx(func(ctx context.Context) error {
		if in.Last != "" {
			s.names = s.names[:0]
			rows, err := s.byName.QueryContext(ctx, in.W, in.D, in.Last)
			if err != nil {
				return err
			}
			for rows.Next() {
				var n nameRow
				if err := rows.Scan(&n.id, &n.balance, &n.first, &n.middle); err != nil {
					rows.Close()
					return err
				}
				s.names = append(s.names, n)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if err := pickByName(s.names, in, r); err != nil {
				return err
			}
		} else {
			err := s.byID.QueryRowContext(ctx, in.W, in.D, in.CID).Scan(&r.Balance, &r.First, &r.Middle, &r.Last)
			if err == sql.ErrNoRows {
				return fmt.Errorf("no customer %d in warehouse %d district %d", in.CID, in.W, in.D)
			}
			if err != nil {
				return err
			}
			r.CID = in.CID
		}
		var carrier sql.NullInt64
		err := s.lastOrder.QueryRowContext(ctx, in.W, in.D, r.CID).Scan(&r.OID, &r.EntryD, &carrier)
		if err == sql.ErrNoRows {
			return nil
		}
		if err != nil {
			return err
		}
		r.CarrierID = int(carrier.Int64)
		rows, err := s.lines.QueryContext(ctx, in.W, in.D, r.OID)
		if err != nil {
			return err
		}
		for rows.Next() {
			var l OrderLine
			var dd sql.NullString
			if err := rows.Scan(&l.IID, &l.SupplyWID, &l.Quantity, &l.Amount, &dd); err != nil {
				rows.Close()
				return err
			}
			l.DeliveryD = dd.String
			r.Lines = append(r.Lines, l)
		}
		rows.Close()
		if err := rows.Err(); err != nil || !s.augmented {
			return err
		}
		return s.avg.QueryRowContext(ctx).Scan(&r.AvgPrice)
	})
}

func (s *duckRunner) stockLevel(_ context.Context, w, d, threshold int) (int, error) {
	var low int
	err := s.tx(func(ctx context.Context) error {
		var next int
		err := s.nextOrder.QueryRowContext(ctx, w, d).Scan(&next)
		if err == sql.ErrNoRows {
			return fmt.Errorf("no district %d in warehouse %d", d, w)
		}
		if err != nil {
			return err
		}
		if err := s.lowStock.QueryRowContext(ctx, w, d, next, next-stockLevelOrders, w, threshold).Scan(&low); err != nil || !s.augmented {
			return err
		}
		var avg float64
		return s.avg.QueryRowContext(ctx).Scan(&avg)
	})
	return low, err
}
