package tpcc

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/engine"
)

// BenchmarkLoadW1 loads one warehouse (about 600,000 rows) per iteration and
// reports the insert rate; run it with -benchtime=1x or 3x.
func BenchmarkLoadW1(b *testing.B) {
	dir := b.TempDir()
	var rows int64
	var insert, total, cpu float64
	for i := 0; i < b.N; i++ {
		path := filepath.Join(dir, "w1.db")
		c0 := cpuSeconds()
		b.StartTimer()
		st, err := loadSQLite(context.Background(), path, LoadConfig{Warehouses: 1, Seed: int64(i)})
		b.StopTimer()
		cpu += cpuSeconds() - c0
		if err != nil {
			b.Fatal(err)
		}
		rows += st.Rows
		insert += st.Insert.Seconds()
		total += (st.Insert + st.Index + st.Check).Seconds()
		os.Remove(path)
	}
	b.ReportMetric(float64(rows)/insert, "rows/s")
	b.ReportMetric(float64(rows)/total, "rows/s-with-index-check")
	// Per CPU-second of the process (all threads), whole load: what the
	// loader can do on an idle core pair, whatever else the machine runs.
	b.ReportMetric(float64(rows)/cpu, "rows/cpu-s")
}

// reportCPU reports the process's CPU time per operation since c0: less
// disturbed than wall time by other work on a shared machine.
func reportCPU(b *testing.B, c0 float64) {
	b.ReportMetric((cpuSeconds()-c0)*1e6/float64(b.N), "cpu-µs/op")
}

// cpuSeconds is the process's user and system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// inputs are a fixed sequence of transaction inputs, the same for both
// client paths.
type inputs struct {
	os []OrderStatusInput
	sl [][3]int
}

func makeInputs(w *Workload, n int) inputs {
	s := &Stream{w: w, rng: rand.New(rand.NewPCG(7, 7))}
	var in inputs
	for i := 0; i < n; i++ {
		in.os = append(in.os, s.orderStatusInput())
		in.sl = append(in.sl, [3]int{uniform(s.rng, 1, w.meta.Warehouses), uniform(s.rng, 1, 10), uniform(s.rng, 10, 20)})
	}
	return in
}

func benchStream(b *testing.B, augmented bool) (*Stream, inputs) {
	w, s := fileStream(b, loaded(b), Options{Augmented: augmented})
	return s, makeInputs(w, 4096)
}

// BenchmarkOrderStatus is one Order-Status call on the engine's prepared
// statements (engine.Prepare).
func BenchmarkOrderStatus(b *testing.B) {
	s, in := benchStream(b, false)
	defer reportCPU(b, cpuSeconds())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.OrderStatus(in.os[i%len(in.os)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStockLevel is one Stock-Level call on the engine's prepared
// statements (engine.Prepare).
func BenchmarkStockLevel(b *testing.B) {
	s, in := benchStream(b, false)
	defer reportCPU(b, cpuSeconds())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x := in.sl[i%len(in.sl)]
		if _, err := s.StockLevel(x[0], x[1], x[2]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNext is the 50/50 mix, plain and augmented.
func BenchmarkNext(b *testing.B) {
	for _, aug := range []bool{false, true} {
		name := "plain"
		if aug {
			name = "augmented"
		}
		b.Run(name, func(b *testing.B) {
			s, _ := benchStream(b, aug)
			ctx := context.Background()
			defer reportCPU(b, cpuSeconds())
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.Next(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// sqlStream is the same two transactions through database/sql, to measure
// what that layer costs (docs/workloads/tpcc-ro.md: ~5 µs per lookup).
type sqlStream struct {
	conn                                                *sql.Conn
	byID, byName, lastOrder, lines, nextOrder, lowStock *sql.Stmt
}

func newSQLStream(b *testing.B) (*sqlStream, inputs) {
	w, err := openFile(b, loaded(b), Options{})
	if err != nil {
		b.Fatal(err)
	}
	db, err := engine.OpenSQLiteDB(w.Path())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close(); db.Close() })
	s := &sqlStream{conn: conn}
	for _, p := range []struct {
		st **sql.Stmt
		q  string
	}{{&s.byID, sqlCustomerByID}, {&s.byName, sqlCustomerByName}, {&s.lastOrder, sqlLastOrder},
		{&s.lines, sqlOrderLines}, {&s.nextOrder, sqlNextOrder}, {&s.lowStock, sqlLowStock}} {
		if *p.st, err = conn.PrepareContext(ctx, p.q); err != nil {
			b.Fatal(err)
		}
	}
	return s, makeInputs(w, 4096)
}

func (s *sqlStream) orderStatus(ctx context.Context, in OrderStatusInput) (int, error) {
	if _, err := s.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return 0, err
	}
	defer s.conn.ExecContext(ctx, "COMMIT")
	var cid int
	var bal float64
	var first, middle, last string
	if in.Last != "" {
		rows, err := s.byName.QueryContext(ctx, in.W, in.D, in.Last)
		if err != nil {
			return 0, err
		}
		type row struct {
			id            int
			bal           float64
			first, middle string
		}
		var all []row
		for rows.Next() {
			var r row
			rows.Scan(&r.id, &r.bal, &r.first, &r.middle)
			all = append(all, r)
		}
		rows.Close()
		c := all[(len(all)+1)/2-1]
		cid, bal, first, middle, last = c.id, c.bal, c.first, c.middle, in.Last
	} else {
		cid = in.CID
		if err := s.byID.QueryRowContext(ctx, in.W, in.D, in.CID).Scan(&bal, &first, &middle, &last); err != nil {
			return 0, err
		}
	}
	var oid int
	var entry string
	var carrier sql.NullInt64
	if err := s.lastOrder.QueryRowContext(ctx, in.W, in.D, cid).Scan(&oid, &entry, &carrier); err != nil {
		return 0, err
	}
	rows, err := s.lines.QueryContext(ctx, in.W, in.D, oid)
	if err != nil {
		return 0, err
	}
	n := 0
	for rows.Next() {
		var l OrderLine
		var dd sql.NullString
		rows.Scan(&l.IID, &l.SupplyWID, &l.Quantity, &l.Amount, &dd)
		n++
	}
	return n, rows.Close()
}

func (s *sqlStream) stockLevel(ctx context.Context, w, d, thr int) (int, error) {
	if _, err := s.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return 0, err
	}
	defer s.conn.ExecContext(ctx, "COMMIT")
	var next, low int
	if err := s.nextOrder.QueryRowContext(ctx, w, d).Scan(&next); err != nil {
		return 0, err
	}
	err := s.lowStock.QueryRowContext(ctx, w, d, next, next-20, w, thr).Scan(&low)
	return low, err
}

// BenchmarkOrderStatusSQL is BenchmarkOrderStatus through database/sql.
func BenchmarkOrderStatusSQL(b *testing.B) {
	s, in := newSQLStream(b)
	ctx := context.Background()
	defer reportCPU(b, cpuSeconds())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.orderStatus(ctx, in.os[i%len(in.os)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStockLevelSQL is BenchmarkStockLevel through database/sql.
func BenchmarkStockLevelSQL(b *testing.B) {
	s, in := newSQLStream(b)
	ctx := context.Background()
	defer reportCPU(b, cpuSeconds())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x := in.sl[i%len(in.sl)]
		if _, err := s.stockLevel(ctx, x[0], x[1], x[2]); err != nil {
			b.Fatal(err)
		}
	}
}
