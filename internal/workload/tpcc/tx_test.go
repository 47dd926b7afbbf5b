package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3" // the "sqlite3" driver, for writing corrupt copies

	"github.com/numalab/numalab/internal/engine"
)

// script is an intner returning queued values (each must lie in [0, n)).
type script []int

func (s *script) IntN(n int) int {
	v := (*s)[0]
	*s = (*s)[1:]
	if v >= n {
		panic(fmt.Sprintf("scripted %d not below %d", v, n))
	}
	return v
}

func TestNURandFormula(t *testing.T) {
	// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
	cases := []struct {
		a, x, y, c int
		r1, r2     int // random(0, A), random(x, y) as drawn
		want       int
	}{
		{255, 0, 999, 0, 5, 10, 15},                       // 5|10 = 15
		{255, 0, 999, 100, 255, 999, (1023 + 100) % 1000}, // 255|999 = 1023
		{1023, 1, 3000, 7, 1, 2, ((1|2)+7)%3000 + 1},
		{8191, 1, 100000, 8191, 8191, 100000, ((8191|100000)+8191)%100000 + 1},
	}
	for _, c := range cases {
		s := script{c.r1, c.r2 - c.x}
		if got := NURand(&s, c.a, c.x, c.y, c.c); got != c.want {
			t.Errorf("NURand(%d, %d, %d) C=%d with draws %d, %d = %d, want %d", c.a, c.x, c.y, c.c, c.r1, c.r2, got, c.want)
		}
	}
}

func TestNURandRangeAndSkew(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, p := range []struct{ a, x, y int }{{aLast, 0, 999}, {aCID, 1, 3000}, {aIID, 1, 100000}} {
		for _, c := range []int{0, p.a / 2, p.a} {
			counts := make([]int, p.y-p.x+1)
			const draws = 300000
			for i := 0; i < draws; i++ {
				v := NURand(r, p.a, p.x, p.y, c)
				if v < p.x || v > p.y {
					t.Fatalf("NURand(%d, %d, %d) C=%d = %d, out of range", p.a, p.x, p.y, c, v)
				}
				counts[v-p.x]++
			}
			// Non-uniform: the most frequent value is drawn far more often
			// than the mean, which a uniform draw would not do.
			mean := float64(draws) / float64(len(counts))
			if mx := slices.Max(counts); float64(mx) < 3*mean {
				t.Errorf("NURand(%d, %d, %d) C=%d: most frequent value drawn %d times, mean %.1f: not skewed",
					p.a, p.x, p.y, c, mx, mean)
			}
		}
	}
}

func TestLastName(t *testing.T) {
	for n, want := range map[int]string{
		371: "PRICALLYOUGHT", // the specification's example
		0:   "BARBARBAR",
		40:  "BARPRESBAR",
		999: "EINGEINGEING",
		528: "ESEABLEATION",
		782: "CALLYATIONABLE",
	} {
		if got := LastName(n); got != want {
			t.Errorf("LastName(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestOrderStatusInputDoesNotAllocate: drawing a call's inputs, a last
// name included, allocates nothing: the names are made once.
func TestOrderStatusInputDoesNotAllocate(t *testing.T) {
	s := &Stream{w: &Workload{meta: Meta{Warehouses: 3}, run: Constants{CLast: 100, CID: 5}},
		rng: rand.New(rand.NewPCG(1, 2))}
	byName := 0
	allocs := testing.AllocsPerRun(1000, func() {
		if s.orderStatusInput().Last != "" {
			byName++
		}
	})
	if allocs != 0 {
		t.Errorf("%.2f allocations a draw; want none", allocs)
	}
	if byName == 0 {
		t.Error("no draw by last name in 1,000: the test saw no name")
	}
}

func TestRunConstants(t *testing.T) {
	g := newGen(1)
	for load := 0; load <= aLast; load++ {
		for i := 0; i < 20; i++ {
			run := runConstants(g, Constants{CLast: load, CID: 5, CIID: 6})
			d := run.CLast - load
			if d < 0 {
				d = -d
			}
			if d < 65 || d > 119 || d == 96 || d == 112 || run.CLast < 0 || run.CLast > aLast {
				t.Fatalf("load C %d: run C %d (delta %d) breaks clause 2.1.6.1", load, run.CLast, d)
			}
			if run.CID != 5 || run.CIID != 6 {
				t.Fatalf("run constants changed C_ID or OL_I_ID: %+v", run)
			}
		}
	}
}

// copyDB copies the shared database to a new temporary file.
func copyDB(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(loaded(t))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mutate(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func TestCheckCatchesCorruption(t *testing.T) {
	path := copyDB(t)
	mutate(t, path,
		"UPDATE district SET d_next_o_id = 3005 WHERE d_w_id = 1 AND d_id = 3",
		"UPDATE orders SET o_ol_cnt = o_ol_cnt + 1 WHERE o_w_id = 1 AND o_d_id = 2 AND o_id = 17",
		"UPDATE customer SET c_balance = 5 WHERE c_w_id = 1 AND c_d_id = 4 AND c_id = 99",
		"DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 5 AND no_o_id = 2500",
	)
	err := checkFile(context.Background(), path)
	if err == nil {
		t.Fatal("check passed a corrupted database")
	}
	if !errors.Is(err, ErrInconsistent) {
		t.Errorf("error does not wrap ErrInconsistent: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"clause 3.3.2.2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID): warehouse 1 district 3: d_next_o_id-1 3004, " +
			"max(o_id) 3000, max(no_o_id) 3000",
		"clause 3.3.2.4: sum(O_OL_CNT) = rows in ORDER-LINE: warehouse 1 district 2",
		"clause 3.3.2.6: O_OL_CNT = the order's rows in ORDER-LINE: warehouse 1 district 2 order 17",
		"warehouse 1 district 4 customer 99: c_balance 5.00",
		"clause 3.3.2.3: max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER: warehouse 1 district 5: " +
			"max-min+1 900, rows 899",
		"clause 3.3.2.5: O_CARRIER_ID is null exactly when a NEW-ORDER row exists: warehouse 1 district 5 order 2500",
		"clause 3.3.2.11",
		"clause 4.3.3.1: new_order has 8999 rows, want 9000",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("check's report lacks %q; it says:\n%s", want, msg)
		}
	}
	if n := strings.Count(msg, "\n") + 1; n != 8 {
		t.Errorf("check reported %d violations, want 8 (4.3.3.1, 2, 3, 4, 5, 6, 10/12, 11): \n%s", n, msg)
	}
}

func TestOpenRefuses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.db")
	os.WriteFile(junk, []byte(strings.Repeat("not a database\n", 400)), 0o644)
	empty := filepath.Join(dir, "empty.db")
	mutate(t, empty, "CREATE TABLE t (x)")
	unfinished := copyDB(t)
	mutate(t, unfinished, "DELETE FROM numalab_meta WHERE key = 'load_complete'")
	for path, want := range map[string]string{
		junk:  "not a numalab TPC-C database",
		empty: "not a numalab TPC-C database: it has no numalab_meta table",
		unfinished: "load did not finish: remove it and load again " +
			"(numalab run oltp --warehouses 1 --seed 42 --db FILE)",
		filepath.Join(dir, "none.db"): "no such file",
	} {
		_, err := openFile(t, path, Options{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%s) = %v, want an error saying %q", filepath.Base(path), err, want)
		}
	}
	// Check refuses an unfinished file as Open does, and a foreign one.
	if err := checkFile(ctx, unfinished); !errors.Is(err, ErrUnfinished) ||
		!strings.Contains(err.Error(), "remove it and load again (numalab run oltp") {
		t.Errorf("checking an unfinished file: %v, want ErrUnfinished with the command that loads it", err)
	}
	if err := checkFile(ctx, empty); !errors.Is(err, ErrNotTPCC) {
		t.Errorf("checking a foreign file: %v, want ErrNotTPCC", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "none.db")); err == nil {
		t.Error("opening a missing file created it")
	}
}

// sqlRef answers the transactions' questions independently, through
// database/sql with differently written queries.
type sqlRef struct{ db *sql.DB }

func (r sqlRef) int(t *testing.T, q string, args ...any) int {
	t.Helper()
	var v sql.NullInt64
	if err := r.db.QueryRow(q, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return int(v.Int64)
}

func TestOrderStatus(t *testing.T) {
	path := loaded(t)
	_, s := fileStream(t, path, Options{Seed: 1})
	ref := sqlRef{openDB(t, path)}

	for _, in := range []OrderStatusInput{
		{W: 1, D: 1, CID: 1}, {W: 1, D: 7, CID: 2999}, {W: 1, D: 10, CID: 1500},
		{W: 1, D: 1, Last: "BARBARBAR"}, {W: 1, D: 3, Last: "PRICALLYOUGHT"},
		{W: 1, D: 9, Last: LastName(NURand(rand.New(rand.NewPCG(3, 3)), 255, 0, 999, 17))},
	} {
		got, err := s.OrderStatus(in)
		if err != nil {
			t.Fatalf("%+v: %v", in, err)
		}
		cid := in.CID
		if in.Last != "" {
			n := ref.int(t, "SELECT count(*) FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?", in.W, in.D, in.Last)
			if n == 0 {
				t.Fatalf("no customer named %s", in.Last)
			}
			// position n/2 rounded up, 1-based, in c_first order.
			cid = ref.int(t,
				"SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first LIMIT 1 OFFSET ?",
				in.W, in.D, in.Last, (n+1)/2-1)
		}
		if got.CID != cid {
			t.Errorf("%+v: customer %d, want %d", in, got.CID, cid)
		}
		oid := ref.int(t, "SELECT max(o_id) FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ?", in.W, in.D, cid)
		cnt := ref.int(t, "SELECT o_ol_cnt FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?", in.W, in.D, oid)
		if got.OID != oid || len(got.Lines) != cnt {
			t.Errorf("%+v: order %d with %d lines, want order %d with %d", in, got.OID, len(got.Lines), oid, cnt)
		}
		for _, l := range got.Lines {
			delivered := oid < firstNewOrder
			if delivered != (l.DeliveryD == "2026-01-02 03:04:05") || delivered != (l.Amount == 0) || l.Quantity != 5 ||
				l.SupplyWID != 1 || l.IID < 1 || l.IID > Items {
				t.Errorf("%+v: implausible line %+v of order %d", in, l, oid)
			}
		}
		if (got.CarrierID == 0) != (oid >= firstNewOrder) || got.Middle != "OE" || got.Balance != -10 {
			t.Errorf("%+v: implausible result %+v", in, got)
		}
	}
	if _, err := s.OrderStatus(OrderStatusInput{W: 1, D: 1, Last: "NOBODY"}); err == nil {
		t.Error("order-status for an absent name succeeded")
	}
}

func TestStockLevel(t *testing.T) {
	path := loaded(t)
	_, s := fileStream(t, path, Options{})
	db := openDB(t, path)
	for d := 1; d <= 10; d++ {
		for _, thr := range []int{10, 15, 20, 101} {
			got, err := s.StockLevel(1, d, thr)
			if err != nil {
				t.Fatal(err)
			}
			// Independently: the items of orders 2981..3000, then their stock.
			rows, err := db.Query(
				"SELECT ol_i_id FROM order_line WHERE ol_w_id = 1 AND ol_d_id = ? AND ol_o_id BETWEEN 2981 AND 3000", d)
			if err != nil {
				t.Fatal(err)
			}
			items := map[int]bool{}
			for rows.Next() {
				var i int
				rows.Scan(&i)
				items[i] = true
			}
			rows.Close()
			want := 0
			for i := range items {
				var q int
				db.QueryRow("SELECT s_quantity FROM stock WHERE s_w_id = 1 AND s_i_id = ?", i).Scan(&q)
				if q < thr {
					want++
				}
			}
			if got != want {
				t.Errorf("district %d threshold %d: %d low items, want %d", d, thr, got, want)
			}
			if thr == 101 && got != len(items) {
				t.Errorf("district %d threshold 101: %d low items, want all %d distinct items", d, got, len(items))
			}
		}
	}
}

// trace runs n transactions and records what they returned.
func trace(t *testing.T, w *Workload, seed uint64, n int) []string {
	s, err := w.NewStream(rand.New(rand.NewPCG(seed, seed)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []string
	types := [2]int{}
	for i := 0; i < n; i++ {
		typ, err := s.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		types[typ]++
		switch typ {
		case TxOrderStatus:
			out = append(out, fmt.Sprintf("os %d %d %d %.2f", s.os.CID, s.os.OID, len(s.os.Lines), s.os.AvgPrice))
		case TxStockLevel:
			out = append(out, "sl")
		}
	}
	if types[0] < n/3 || types[1] < n/3 {
		t.Errorf("%d calls: %v of each type, want about half each", n, types)
	}
	return out
}

func TestNextDeterministic(t *testing.T) {
	w, err := openFile(t, loaded(t), Options{Seed: 9, Augmented: true})
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := trace(t, w, 5, 300), trace(t, w, 5, 300), trace(t, w, 6, 300)
	if !slices.Equal(a, b) {
		t.Error("two streams with the same seed differ")
	}
	if slices.Equal(a, c) {
		t.Error("streams with different seeds agree")
	}
	var avg float64
	if err := openDB(t, w.Path()).QueryRow("SELECT avg(i_price) FROM item WHERE i_id < 15000").Scan(&avg); err != nil {
		t.Fatal(err)
	}
	for _, l := range a {
		if strings.HasPrefix(l, "os") && !strings.HasSuffix(l, fmt.Sprintf(" %.2f", avg)) {
			t.Fatalf("augmented order-status %q lacks avg(i_price) %.2f", l, avg)
		}
	}
}

func TestPlans(t *testing.T) {
	db := openDB(t, loaded(t))
	for _, q := range []string{sqlCustomerByID, sqlCustomerByName, sqlLastOrder, sqlOrderLines, sqlNextOrder,
		sqlLowStock, sqlAvgPrice} {
		args := make([]any, strings.Count(q, "?"))
		for i := range args {
			args[i] = 1
		}
		rows, err := db.Query("EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			rows.Scan(&id, &parent, &notused, &detail)
			plan = append(plan, detail)
		}
		rows.Close()
		t.Logf("%s\n  -> %s", strings.Join(strings.Fields(q), " "), strings.Join(plan, "; "))
		for _, p := range plan {
			if strings.HasPrefix(p, "SCAN") {
				t.Errorf("%s scans: %s", q, p)
			}
		}
	}
}

// TestStreamsConcurrent runs streams side by side, each on its own
// connection, as the driver does.
func TestStreamsConcurrent(t *testing.T) {
	w, err := openFile(t, loaded(t), Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		go func(seed uint64) {
			s, err := w.NewStream(rand.New(rand.NewPCG(seed, 0)))
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			for j := 0; j < 200; j++ {
				if _, err := s.Next(context.Background()); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(uint64(i))
	}
	for i := 0; i < 4; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, err := w.NewStream(rand.New(rand.NewPCG(1, 0)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Next on a cancelled context: %v", err)
	}
}

func TestAsNumber(t *testing.T) {
	if got := asNumber[int](float64(7.9)); got != 7 {
		t.Errorf("asNumber[int](7.9) = %d, want 7", got)
	}
	if got := asNumber[int64](int64(1) << 40); got != 1<<40 {
		t.Errorf("asNumber[int64](1<<40) = %d", got)
	}
	if got := asNumber[float64](int64(3)); got != 3 {
		t.Errorf("asNumber[float64](3) = %v", got)
	}
	if got := asNumber[float64]("3"); got != 0 {
		t.Errorf("asNumber[float64](\"3\") = %v, want 0 for a string", got)
	}
}

func TestPickByName(t *testing.T) {
	in := OrderStatusInput{W: 1, D: 2, Last: "BARBARBAR"}
	var r OrderStatusResult
	if err := pickByName(nil, in, &r); err == nil ||
		!strings.Contains(err.Error(), "no customer named BARBARBAR in warehouse 1 district 2") {
		t.Errorf("no names: %v", err)
	}
	// Position n/2 rounded up (1-based) of n customers.
	for n, want := range map[int]int{1: 1, 2: 1, 3: 2, 4: 2, 5: 3} {
		var names []nameRow
		for i := 1; i <= n; i++ {
			names = append(names, nameRow{id: i, first: fmt.Sprint("F", i)})
		}
		if err := pickByName(names, in, &r); err != nil || r.CID != want ||
			r.First != fmt.Sprint("F", want) || r.Last != in.Last {
			t.Errorf("%d names: %+v, %v; want customer %d", n, r, err, want)
		}
	}
}

// TestOpenCancelledIsNotRefusal: a cancelled context (Ctrl-C while run
// pages' warm-up opened the image) is reported as a cancellation, never as
// "not a numalab TPC-C database", by Open and by Check, on a real tpcc
// file and on an empty database.
func TestOpenCancelledIsNotRefusal(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	mutate(t, empty, "CREATE TABLE t (x)")
	for _, path := range []string{copyDB(t), empty} {
		eng, err := engine.Open(context.Background(), "sqlite", engine.Options{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = Open(ctx, eng, Options{})
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrNotTPCC) || strings.Contains(err.Error(), "not a numalab") {
			t.Errorf("Open(%s) cancelled = %v, want a cancellation, not a refusal", filepath.Base(path), err)
		}
		if err := Check(ctx, eng); !errors.Is(err, context.Canceled) || errors.Is(err, ErrNotTPCC) {
			t.Errorf("Check(%s) cancelled = %v, want a cancellation, not a refusal", filepath.Base(path), err)
		}
		eng.Close()
	}
}

// TestStmtRunnerAllocations: on SQLite a transaction allocates the
// strings its result keeps that are not the column's last text (a
// statement's column keeps its last string) and, by last name, the name it
// binds (Go boxes it), nothing else: no closure, row, value or integer
// argument per call or per row.
func TestStmtRunnerAllocations(t *testing.T) {
	_, s := fileStream(t, loaded(t), Options{})
	x, ok := s.x.(*stmtRunner)
	if !ok {
		t.Fatalf("the SQLite stream runs a %T, not the statement runner", s.x)
	}
	// changes is the strings a call allocates reading one column's
	// texts, the same each call: those unlike the text before them, the
	// first's being the last call's last ("" is NULL, no text).
	changes := func(col ...string) (n float64) {
		prev := ""
		for _, v := range col {
			if v != "" {
				prev = v
			}
		}
		for _, v := range col {
			if v != "" && v != prev {
				n++
			}
			if v != "" {
				prev = v
			}
		}
		return n
	}
	for _, in := range []OrderStatusInput{{W: 1, D: 2, CID: 1000}, {W: 1, D: 3, Last: LastName(371)}} {
		var r *OrderStatusResult
		allocs := testing.AllocsPerRun(20, func() {
			var err error
			if r, err = s.OrderStatus(in); err != nil {
				t.Fatal(err)
			}
		})
		want := changes(r.EntryD)
		var delivered []string
		for _, l := range r.Lines {
			delivered = append(delivered, l.DeliveryD)
		}
		want += changes(delivered...)
		if in.Last == "" {
			want += changes(r.First) + changes(r.Middle) + changes(r.Last)
		} else {
			want++ // the name, boxed
			var first, middle []string
			for _, n := range x.names {
				first, middle = append(first, n.first), append(middle, n.middle)
			}
			want += changes(first...) + changes(middle...)
		}
		if allocs != want {
			t.Errorf("Order-Status %+v: %.1f allocations a call, want %g", in, allocs, want)
		}
	}
	var low int
	allocs := testing.AllocsPerRun(20, func() {
		var err error
		if low, err = s.StockLevel(1, 4, 15); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 || low == 0 {
		t.Errorf("Stock-Level: %.1f allocations a call, want 0 (%d low)", allocs, low)
	}
}
