package tpcc

import (
	"context"
	"database/sql/driver"
	"fmt"
	"io"

	"github.com/mattn/go-sqlite3"
)

// sqliteRunner runs the transactions on go-sqlite3's own API rather than
// database/sql, whose per-call cost is several times SQLite's own for these
// short transactions: prepared driver statements, arguments and results in
// fixed arrays, one read transaction (BEGIN ... COMMIT) per call.
type sqliteRunner struct {
	conn      *sqlite3.SQLiteConn
	closeConn func() error
	augmented bool

	begin, commit, rollback                                  *sqliteStmt
	byID, byName, lastOrder, lines, nextOrder, lowStock, avg *sqliteStmt

	args  [6]driver.NamedValue
	dest  [5]driver.Value
	names []nameRow
}

// newSQLiteRunner opens a read-only connection and prepares the
// statements.
func newSQLiteRunner(ctx context.Context, w *Workload) (*sqliteRunner, error) {
	c, err := w.eng.Connect(ctx)
	if err != nil {
		return nil, err
	}
	s := &sqliteRunner{conn: c.Native().SQLite, closeConn: c.Close, augmented: w.opt.Augmented}
	for i := range s.args {
		s.args[i].Ordinal = i + 1
	}
	for _, p := range []struct {
		st **sqliteStmt
		q  string
	}{
		{&s.begin, "BEGIN"}, {&s.commit, "COMMIT"}, {&s.rollback, "ROLLBACK"},
		{&s.byID, sqlCustomerByID}, {&s.byName, sqlCustomerByName}, {&s.lastOrder, sqlLastOrder},
		{&s.lines, sqlOrderLines}, {&s.nextOrder, sqlNextOrder}, {&s.lowStock, sqlLowStock}, {&s.avg, sqlAvgPrice},
	} {
		st, err := s.conn.Prepare(p.q)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("preparing %q: %w", p.q, err)
		}
		ss, ok := st.(*sqlite3.SQLiteStmt)
		if !ok {
			st.Close()
			s.close()
			return nil, fmt.Errorf("preparing %q: the driver gave a %T, not a *sqlite3.SQLiteStmt", p.q, st)
		}
		*p.st = &sqliteStmt{SQLiteStmt: ss, cols: -1}
	}
	return s, nil
}

// sqliteStmt is a prepared statement and the number of columns of its
// rows, known from its first query on: the file is immutable, so its
// results keep their shape, and no query asks the driver again.
type sqliteStmt struct {
	*sqlite3.SQLiteStmt
	cols int // -1 before the first query
}

func (s *sqliteRunner) close() error {
	for _, st := range []*sqliteStmt{s.begin, s.commit, s.rollback, s.byID, s.byName, s.lastOrder, s.lines, s.nextOrder, s.lowStock, s.avg} {
		if st != nil {
			st.Close()
		}
	}
	return s.closeConn()
}

// query runs st with the first n of s.args and calls row for each row in
// s.dest. The context is Background: a cancellable one costs the driver a
// goroutine per call; Next checks ctx between transactions instead.
func (s *sqliteRunner) query(st *sqliteStmt, n int, row func() error) error {
	rows, err := st.QueryContext(context.Background(), s.args[:n])
	if err != nil {
		return err
	}
	if st.cols < 0 {
		st.cols = len(rows.Columns())
	}
	for {
		err := rows.Next(s.dest[:st.cols])
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

func (s *sqliteRunner) set(vals ...int) int {
	for i, v := range vals {
		s.args[i].Value = int64(v)
	}
	return len(vals)
}

func (s *sqliteRunner) exec(st *sqliteStmt) error {
	_, err := st.ExecContext(context.Background(), nil)
	return err
}

// tx runs f in one read transaction.
func (s *sqliteRunner) tx(f func() error) error {
	if err := s.exec(s.begin); err != nil {
		return err
	}
	if err := f(); err != nil {
		s.exec(s.rollback)
		return err
	}
	return s.exec(s.commit)
}

func (s *sqliteRunner) avgPrice(p *float64) error {
	return s.query(s.avg, 0, func() error {
		*p = asNumber[float64](s.dest[0])
		return nil
	})
}

// orderStatus runs Order-Status in one read transaction.
func (s *sqliteRunner) orderStatus(_ context.Context, in OrderStatusInput, r *OrderStatusResult) error {
	return s.tx(func() error {
		if in.Last != "" {
			// All customers of the name sorted by C_FIRST; take the one at
			// position n/2 rounded up.
			s.names = s.names[:0]
			s.set(in.W, in.D)
			s.args[2].Value = in.Last
			err := s.query(s.byName, 3, func() error {
				s.names = append(s.names, nameRow{id: asNumber[int](s.dest[0]), balance: asNumber[float64](s.dest[1]),
					first: asString(s.dest[2]), middle: asString(s.dest[3])})
				return nil
			})
			if err != nil {
				return err
			}
			if err := pickByName(s.names, in, r); err != nil {
				return err
			}
		} else {
			found := false
			err := s.query(s.byID, s.set(in.W, in.D, in.CID), func() error {
				found = true
				r.CID, r.Balance, r.First, r.Middle, r.Last = in.CID, asNumber[float64](s.dest[0]), asString(s.dest[1]), asString(s.dest[2]), asString(s.dest[3])
				return nil
			})
			if err != nil {
				return err
			}
			if !found {
				return fmt.Errorf("no customer %d in warehouse %d district %d", in.CID, in.W, in.D)
			}
		}
		err := s.query(s.lastOrder, s.set(in.W, in.D, r.CID), func() error {
			r.OID, r.EntryD, r.CarrierID = asNumber[int](s.dest[0]), asString(s.dest[1]), asNumber[int](s.dest[2])
			return nil
		})
		if err != nil || r.OID == 0 {
			return err
		}
		err = s.query(s.lines, s.set(in.W, in.D, r.OID), func() error {
			r.Lines = append(r.Lines, OrderLine{IID: asNumber[int](s.dest[0]), SupplyWID: asNumber[int](s.dest[1]),
				Quantity: asNumber[int](s.dest[2]), Amount: asNumber[float64](s.dest[3]), DeliveryD: asString(s.dest[4])})
			return nil
		})
		if err != nil || !s.augmented {
			return err
		}
		return s.avgPrice(&r.AvgPrice)
	})
}

// stockLevel runs Stock-Level in one read transaction.
func (s *sqliteRunner) stockLevel(_ context.Context, w, d, threshold int) (int, error) {
	var low int
	var avg float64
	err := s.tx(func() error {
		next := 0
		err := s.query(s.nextOrder, s.set(w, d), func() error {
			next = asNumber[int](s.dest[0])
			return nil
		})
		if err != nil {
			return err
		}
		if next == 0 {
			return fmt.Errorf("no district %d in warehouse %d", d, w)
		}
		err = s.query(s.lowStock, s.set(w, d, next, next-stockLevelOrders, w, threshold), func() error {
			low = asNumber[int](s.dest[0])
			return nil
		})
		if err != nil || !s.augmented {
			return err
		}
		return s.avgPrice(&avg)
	})
	return low, err
}
