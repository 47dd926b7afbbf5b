package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/mattn/go-sqlite3"
)

// sqliteStmtConn opens a stream's connection to a small SQLite file with
// one row of each kind of value.
func sqliteStmtConn(t *testing.T) Conn {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	db, err := CreateSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE t (k INTEGER, i INTEGER, f REAL, s TEXT, b BLOB, n TEXT)",
		"INSERT INTO t VALUES (1, 3001, 2.5, 'BARBARBAR', x'3132', NULL), (2, -7, 1e300, '', x'', NULL), " +
			"(3, 0, 0.1, '42', '2.5', NULL)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	e, err := Open(context.Background(), "sqlite", Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	c, err := e.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestSQLiteStmtReadsAsQuery: a prepared statement's rows read, column by
// column, as Conn.Query's values do (Int, Float and Text of every kind of
// value, NULL included), with arguments of every type bound.
func TestSQLiteStmtReadsAsQuery(t *testing.T) {
	c := sqliteStmtConn(t)
	ctx := context.Background()
	const q = "SELECT i, f, s, b, n, k FROM t WHERE k >= ? AND k < ? AND s <> ? AND ? IS NULL AND ? < 10 ORDER BY k"
	args := []any{1, int64(4), "x", nil, 9.5}
	var want [][]any
	keep := func(v []any) error { want = append(want, append([]any(nil), v...)); return nil }
	if err := c.Query(ctx, q, args, keep); err != nil {
		t.Fatal(err)
	}
	if len(want) != 3 {
		t.Fatalf("Conn.Query read %d rows, want 3", len(want))
	}
	st, err := Prepare(ctx, c, q)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for round := range 2 { // a statement runs again as it ran first
		n := 0
		err := st.Query(ctx, args, func(r Row) error {
			if r.Len() != len(want[n]) {
				t.Fatalf("row %d: %d columns, want %d", n, r.Len(), len(want[n]))
			}
			for i, v := range want[n] {
				vr := &valuesRow{v: want[n]}
				if r.Null(i) != vr.Null(i) || r.Int(i) != vr.Int(i) || r.Float(i) != vr.Float(i) || r.Text(i) != vr.Text(i) {
					t.Errorf("round %d row %d column %d: Null %v Int %d Float %g Text %q; Conn.Query's %#v reads %v %d %g %q",
						round, n, i, r.Null(i), r.Int(i), r.Float(i), r.Text(i), v, vr.Null(i), vr.Int(i), vr.Float(i), vr.Text(i))
				}
			}
			n++
			return nil
		})
		if err != nil || n != 3 {
			t.Fatalf("round %d: %d rows, %v", round, n, err)
		}
	}
}

// TestSQLiteStmtBatches: a result longer than one batch (NL_MAXROWS rows,
// NL_MAXTEXT bytes of text) reads as Conn.Query reads it, however its
// batches end, and a row function's error in a later batch stops the call.
func TestSQLiteStmtBatches(t *testing.T) {
	c := sqliteStmtConn(t)
	ctx := context.Background()
	// 1,000 rows (256 a batch at most); every 97th row's text over 70,000
	// bytes (a batch ends past 64 KiB of text); NULLs, reals and blobs.
	const q = `WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
		SELECT x, hex(zeroblob(CASE WHEN x % 97 = 0 THEN 35000 ELSE x % 40 END)) || x,
			x * 0.5, CASE WHEN x % 7 = 0 THEN NULL ELSE zeroblob(x % 5) END FROM n`
	var want [][]any
	keep := func(v []any) error { want = append(want, append([]any(nil), v...)); return nil }
	if err := c.Query(ctx, q, []any{1000}, keep); err != nil {
		t.Fatal(err)
	}
	st, err := Prepare(ctx, c, q)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stop := errors.New("stop")
	for _, last := range []int{len(want), 700, len(want)} { // whole, cut short by the row function, whole again
		n, text := 0, 0
		err := st.Query(ctx, []any{1000}, func(r Row) error {
			if n == last {
				return stop
			}
			vr := &valuesRow{v: want[n]}
			for i := range want[n] {
				if r.Null(i) != vr.Null(i) || r.Int(i) != vr.Int(i) || r.Float(i) != vr.Float(i) || r.Text(i) != vr.Text(i) {
					t.Fatalf("row %d column %d: Null %v Int %d Float %g Text %.20q; Conn.Query's reads %v %d %g %.20q",
						n, i, r.Null(i), r.Int(i), r.Float(i), r.Text(i), vr.Null(i), vr.Int(i), vr.Float(i), vr.Text(i))
				}
			}
			text += len(r.Text(1))
			n++
			return nil
		})
		if last < len(want) {
			if err != stop || n != last {
				t.Errorf("a row function's error at row %d: %v after %d rows", last, err, n)
			}
			continue
		}
		if err != nil || n != len(want) || text < 10*70000 {
			t.Errorf("%d rows of %d, %d bytes of text, %v", n, len(want), text, err)
		}
	}
}

// TestSQLiteStmtErrors: a bad statement, a bad argument, a row function's
// error and a failed step each say so, and the statement runs again after.
func TestSQLiteStmtErrors(t *testing.T) {
	c := sqliteStmtConn(t)
	ctx := context.Background()
	var se sqlite3.Error
	if _, err := Prepare(ctx, c, "SELECT nothing FROM nowhere"); !errors.As(err, &se) || se.Code != sqlite3.ErrError {
		t.Errorf("preparing a bad query: %v, want a sqlite3 SQL error", err)
	}
	st, err := Prepare(ctx, c, "SELECT k FROM t WHERE k >= ? ORDER BY k")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Query(ctx, []any{struct{}{}}, nil); err == nil {
		t.Error("a struct argument was bound")
	}
	if err := st.Query(ctx, []any{1, 2}, nil); !errors.As(err, &se) || se.Code != sqlite3.ErrRange {
		t.Errorf("two arguments for one: %v, want SQLite's range error", err)
	}
	stop := errors.New("stop")
	rows := 0
	if err := st.Query(ctx, []any{1}, func(Row) error { rows++; return stop }); err != stop || rows != 1 {
		t.Errorf("a row function's error: %v after %d rows, want it after 1", err, rows)
	}
	sum := int64(0)
	if err := st.Query(ctx, []any{2}, func(r Row) error { sum += r.Int(0); return nil }); err != nil || sum != 5 {
		t.Errorf("after the errors: sum %d, %v; want 5", sum, err)
	}
	bad, err := Prepare(ctx, c, "SELECT abs(?)")
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if err := bad.Query(ctx, []any{int64(-1 << 63)}, nil); !errors.As(err, &se) || se.Code != sqlite3.ErrError {
		t.Errorf("abs of the smallest integer: %v, want SQLite's integer overflow error", err)
	}
}

// TestSQLiteStmtInterrupt: a cancelled context interrupts a statement's
// call, and no interrupt reaches the next call.
func TestSQLiteStmtInterrupt(t *testing.T) {
	c := sqliteStmtConn(t)
	long, err := Prepare(context.Background(), c,
		"WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n")
	if err != nil {
		t.Fatal(err)
	}
	defer long.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	if err := long.Query(ctx, nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("an endless query with a 50 ms deadline: %v, want the deadline", err)
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("the interrupted query returned after %v", d)
	}
	st, err := Prepare(context.Background(), c, "SELECT count(*) FROM t")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	for i := range 100 {
		if err := st.Query(ctx2, nil, nil); err != nil {
			t.Fatalf("call %d after an interrupt: %v", i, err)
		}
	}
}

// TestSQLiteStmtDoesNotAllocate: a prepared statement's call, arguments
// bound and every row's numbers read, allocates nothing; a text column
// read allocates its string alone.
func TestSQLiteStmtDoesNotAllocate(t *testing.T) {
	c := sqliteStmtConn(t)
	ctx := context.Background()
	st, err := Prepare(ctx, c, "SELECT i, f, s FROM t WHERE k >= ? AND s <> ?")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	args := []any{int64(1), "BAR"}
	var sum float64
	var text string
	numbers := func(r Row) error { sum += float64(r.Int(0)) + r.Float(1); return nil }
	texts := func(r Row) error { text = r.Text(2); return nil }
	for _, f := range []struct {
		name string
		row  func(Row) error
		want float64
	}{
		{"numbers", numbers, 0},
		{"text", texts, 2}, // the two non-empty strings of three rows
	} {
		allocs := testing.AllocsPerRun(200, func() {
			if err := st.Query(ctx, args, f.row); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != f.want {
			t.Errorf("%s: %.1f allocations a call, want %g", f.name, allocs, f.want)
		}
	}
	if sum == 0 || text == "" {
		t.Error(fmt.Sprint("read nothing: ", sum, text))
	}
	// A column's text the same as the last it read costs nothing.
	same, err := Prepare(ctx, c, "SELECT s FROM t WHERE k = 1")
	if err != nil {
		t.Fatal(err)
	}
	defer same.Close()
	first := func(r Row) error { text = r.Text(0); return nil }
	allocs := testing.AllocsPerRun(200, func() {
		if err := same.Query(ctx, nil, first); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 || text != "BARBARBAR" {
		t.Errorf("a repeated text: %.1f allocations a call (read %q), want 0", allocs, text)
	}
}

// TestSQLiteStmtQueryInts: QueryInts reads the rows Query reads with the
// same integers, and a call binding integers above 255 (which Query's
// []any boxes) allocates nothing.
func TestSQLiteStmtQueryInts(t *testing.T) {
	c := sqliteStmtConn(t)
	ctx := context.Background()
	st, err := Prepare(ctx, c, "SELECT k, i, f FROM t WHERE i < ? AND k >= ? ORDER BY k")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ints, ok := st.(interface {
		QueryInts(args []int64, row func(Row) error) error
	})
	if !ok {
		t.Fatalf("a sqlite statement (%T) has no QueryInts", st)
	}
	var got []string
	read := func(r Row) error { got = append(got, fmt.Sprint(r.Int(0), r.Int(1), r.Float(2))); return nil }
	if err := st.Query(ctx, []any{3002, 2}, read); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint(got)
	got = nil
	args := []int64{3002, 2}
	if err := ints.QueryInts(args, read); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != want || len(got) != 2 {
		t.Errorf("QueryInts read %v, Query %v (want 2 rows)", got, want)
	}
	var sum int64
	add := func(r Row) error { sum += r.Int(1) - 1; return nil }
	allocs := testing.AllocsPerRun(200, func() {
		if err := ints.QueryInts(args, add); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 || sum == 0 {
		t.Errorf("QueryInts: %.1f allocations a call (sum %d), want 0", allocs, sum)
	}
}
