package tpcc

import (
	"context"
	"database/sql/driver"
	"fmt"
	"unsafe"
)

// Labels that seed a generator per table.
const (
	labelConstants = iota + 1
	labelItem
	labelWarehouse
	labelStock
	labelDistrict
	labelCustomer
	labelHistory
	labelOrders
	labelOrderLine
)

// chunkRows is the most rows in one chunk, one write transaction.
const chunkRows = 8192

// maxBatchParams bounds the parameters of one INSERT, far below SQLite's
// limit (SQLITE_MAX_VARIABLE_NUMBER, 32766 since 3.32).
const maxBatchParams = 4096

// batchRows is how many rows of t one INSERT takes.
func batchRows(t *table) int { return maxBatchParams / (len(t.cols) - t.nShare) }

// chunk is rows of one table on their way from the generator to SQLite:
// the shared columns' values once (taken from the first row, checked on the
// others), the rows' own values in row order, numbered for a multi-row
// INSERT of batchRows(t) rows, and the strings' bytes in buf.
type chunk struct {
	t      *table
	key    int // the warehouse and district the rows belong to
	rows   int
	col    int // the next column of the current row
	sk     int // the next shared column of the current row
	per    int // own parameters per full batch
	shared []driver.NamedValue
	vals   []driver.NamedValue
	buf    []byte
	err    error
}

func (c *chunk) add(v driver.Value) {
	i := c.col
	c.col++
	if !c.t.shared[i] {
		c.vals = append(c.vals, driver.NamedValue{Ordinal: c.t.nShare + len(c.vals)%c.per + 1, Value: v})
		return
	}
	k := c.sk
	c.sk++
	if c.rows == 1 {
		c.shared = append(c.shared, driver.NamedValue{Ordinal: k + 1, Value: v})
	} else if c.shared[k].Value != v && c.err == nil {
		c.err = fmt.Errorf("generating %s: shared column %s changed within a chunk", c.t.name, c.t.cols[i])
	}
}

func (c *chunk) int(v int)         { c.add(int64(v)) }
func (c *chunk) null()             { c.add(nil) }
func (c *chunk) str(s string)      { c.add(s) }
func (c *chunk) money(cents int)   { c.add(float64(cents) / 100) }
func (c *chunk) fraction(tenk int) { c.add(float64(tenk) / 10000) }
func (c *chunk) aString(g *gen, lo, hi int) {
	s := len(c.buf)
	c.buf = g.appendAString(c.buf, lo, hi)
	c.bytes(s)
}
func (c *chunk) nString(g *gen, n int) {
	s := len(c.buf)
	c.buf = g.appendNString(c.buf, n)
	c.bytes(s)
}
func (c *chunk) letters(g *gen, n int) {
	s := len(c.buf)
	c.buf = g.appendLetters(c.buf, n)
	c.bytes(s)
}
func (c *chunk) zip(g *gen) { s := len(c.buf); c.buf = g.appendZip(c.buf); c.bytes(s) }
func (c *chunk) data(g *gen, orig bool) {
	s := len(c.buf)
	c.buf = g.appendData(c.buf, orig)
	c.bytes(s)
}
func (c *chunk) lastName(n int) { s := len(c.buf); c.buf = appendLastName(c.buf, n); c.bytes(s) }

// bytes adds buf[s:] as a string without copying. SQLite copies bound text
// (SQLITE_TRANSIENT), and a chunk's buf is rewritten only after SQLite is
// done with it.
func (c *chunk) bytes(s int) {
	if s == len(c.buf) {
		c.add("")
		return
	}
	c.add(unsafe.String(&c.buf[s], len(c.buf)-s))
}

// pipe carries chunks from the generator goroutine to the inserter.
type pipe struct {
	ctx        context.Context
	full, free chan *chunk
	cur        *chunk
}

// row starts a row of t for warehouse w and district d (0 when the table
// has no district), returning the chunk to add its values to.
func (p *pipe) row(t *table, w, d int) (*chunk, error) {
	key := w*100 + d
	if c := p.cur; c != nil {
		if c.err != nil {
			return nil, c.err
		}
		if c.t != t || c.key != key || c.rows >= chunkRows {
			if err := p.flush(); err != nil {
				return nil, err
			}
		}
	}
	if p.cur == nil {
		select {
		case c := <-p.free:
			c.t, c.key, c.rows, c.vals, c.shared, c.buf = t, key, 0, c.vals[:0], c.shared[:0], c.buf[:0]
			c.per = batchRows(t) * (len(t.cols) - t.nShare)
			p.cur = c
		case <-p.ctx.Done():
			return nil, p.ctx.Err()
		}
	}
	p.cur.rows++
	p.cur.col, p.cur.sk = 0, 0
	return p.cur, nil
}

func (p *pipe) flush() error {
	if p.cur == nil {
		return nil
	}
	if p.cur.err != nil {
		return p.cur.err
	}
	select {
	case p.full <- p.cur:
		p.cur = nil
		return nil
	case <-p.ctx.Done():
		return p.ctx.Err()
	}
}

// startGenerator generates every row in a goroutine of its own, into
// chunks the caller takes from p.full and gives back to p.free; genErr says
// how generation ended once p.full is closed. cancel stops it.
func startGenerator(ctx context.Context, cfg LoadConfig, k Constants) (p *pipe, genErr <-chan error, cancel func()) {
	gctx, cancel := context.WithCancel(ctx)
	p = &pipe{ctx: gctx, full: make(chan *chunk, 3), free: make(chan *chunk, 4)}
	for i := 0; i < cap(p.free); i++ {
		p.free <- &chunk{vals: make([]driver.NamedValue, 0, chunkRows*len(tStock.cols)), buf: make([]byte, 0, chunkRows*320)}
	}
	errc := make(chan error, 1)
	go func() {
		err := generate(p, cfg, k)
		if err == nil {
			err = p.flush()
		}
		close(p.full)
		errc <- err
	}()
	return p, errc, cancel
}

// generate makes every row of Clause 4.3.3.1, table by table in primary-key
// order, so that inserts append to each B-tree.
func generate(p *pipe, cfg LoadConfig, k Constants) error {
	now := cfg.Now.UTC().Format(dateFormat)
	if err := genItems(p, cfg.Seed); err != nil {
		return err
	}
	for w := 1; w <= cfg.Warehouses; w++ {
		steps := []func() error{
			func() error { return genWarehouse(p, cfg.Seed, w) },
			func() error { return genStock(p, cfg.Seed, w) },
			func() error { return genDistricts(p, cfg.Seed, w) },
		}
		for d := 1; d <= DistrictsPerWH; d++ {
			steps = append(steps,
				func() error { return genCustomers(p, cfg.Seed, w, d, k, now) },
				func() error { return genOrders(p, cfg.Seed, w, d, now) })
		}
		for _, f := range steps {
			if err := f(); err != nil {
				return err
			}
		}
	}
	return nil
}

// genItems: ITEM, 100,000 rows (Clause 4.3.3.1).
func genItems(p *pipe, seed int64) error {
	g := newGen(seed, labelItem)
	orig := selector{k: Items / 10, n: Items}
	for i := 1; i <= Items; i++ {
		c, err := p.row(tItem, 0, 0)
		if err != nil {
			return err
		}
		c.int(i)                        // I_ID
		c.int(uniform(g, 1, 10000))     // I_IM_ID
		c.aString(g, 14, 24)            // I_NAME
		c.money(uniform(g, 100, 10000)) // I_PRICE [1.00 .. 100.00]
		c.data(g, orig.take(g))         // I_DATA, ORIGINAL in 10%
	}
	return nil
}

// address adds street 1, street 2, city, state and zip (Clause 4.3.3.1).
func address(c *chunk, g *gen) {
	c.aString(g, 10, 20)
	c.aString(g, 10, 20)
	c.aString(g, 10, 20)
	c.letters(g, 2)
	c.zip(g)
}

// genWarehouse: one WAREHOUSE row.
func genWarehouse(p *pipe, seed int64, w int) error {
	g := newGen(seed, labelWarehouse, uint64(w))
	c, err := p.row(tWarehouse, w, 0)
	if err != nil {
		return err
	}
	c.int(w)
	c.aString(g, 6, 10)
	address(c, g)
	c.fraction(uniform(g, 0, 2000)) // W_TAX [0.0000 .. 0.2000]
	c.money(30000000)               // W_YTD 300,000.00
	return nil
}

// genStock: STOCK, 100,000 rows per warehouse.
func genStock(p *pipe, seed int64, w int) error {
	g := newGen(seed, labelStock, uint64(w))
	orig := selector{k: StockPerWarehouse / 10, n: StockPerWarehouse}
	for i := 1; i <= StockPerWarehouse; i++ {
		c, err := p.row(tStock, w, 0)
		if err != nil {
			return err
		}
		c.int(i)
		c.int(w)
		c.int(uniform(g, 10, 100)) // S_QUANTITY
		for d := 0; d < 10; d++ {
			c.aString(g, 24, 24) // S_DIST_01 .. S_DIST_10
		}
		c.int(0) // S_YTD
		c.int(0) // S_ORDER_CNT
		c.int(0) // S_REMOTE_CNT
		c.data(g, orig.take(g))
	}
	return nil
}

// genDistricts: DISTRICT, 10 rows per warehouse.
func genDistricts(p *pipe, seed int64, w int) error {
	g := newGen(seed, labelDistrict, uint64(w))
	for d := 1; d <= DistrictsPerWH; d++ {
		c, err := p.row(tDistrict, w, 0)
		if err != nil {
			return err
		}
		c.int(d)
		c.int(w)
		c.aString(g, 6, 10)
		address(c, g)
		c.fraction(uniform(g, 0, 2000)) // D_TAX
		c.money(3000000)                // D_YTD 30,000.00
		c.int(OrdersPerDist + 1)        // D_NEXT_O_ID 3,001
	}
	return nil
}

// genCustomers: CUSTOMER, 3,000 rows per district, and HISTORY, one row per
// customer.
func genCustomers(p *pipe, seed int64, w, d int, k Constants, now string) error {
	g := newGen(seed, labelCustomer, uint64(w), uint64(d))
	bad := selector{k: CustomersPerDist / 10, n: CustomersPerDist}
	for id := 1; id <= CustomersPerDist; id++ {
		c, err := p.row(tCustomer, w, d)
		if err != nil {
			return err
		}
		c.int(id)
		c.int(d)
		c.int(w)
		c.aString(g, 8, 16) // C_FIRST
		c.str("OE")         // C_MIDDLE
		if id <= customersNamedSeq {
			c.lastName(id - 1)
		} else {
			c.lastName(NURand(g, aLast, 0, 999, k.CLast))
		}
		address(c, g)
		c.nString(g, 16) // C_PHONE
		c.str(now)       // C_SINCE
		if bad.take(g) {
			c.str("BC")
		} else {
			c.str("GC")
		}
		c.money(5000000)                // C_CREDIT_LIM 50,000.00
		c.fraction(uniform(g, 0, 5000)) // C_DISCOUNT [0.0000 .. 0.5000]
		c.money(-1000)                  // C_BALANCE -10.00
		c.money(1000)                   // C_YTD_PAYMENT 10.00
		c.int(1)                        // C_PAYMENT_CNT
		c.int(0)                        // C_DELIVERY_CNT
		c.aString(g, 300, 500)          // C_DATA
	}
	g = newGen(seed, labelHistory, uint64(w), uint64(d))
	for id := 1; id <= CustomersPerDist; id++ {
		c, err := p.row(tHistory, w, d)
		if err != nil {
			return err
		}
		c.int(id)
		c.int(d)
		c.int(w)
		c.int(d)
		c.int(w)
		c.str(now)           // H_DATE
		c.money(1000)        // H_AMOUNT 10.00
		c.aString(g, 12, 24) // H_DATA
	}
	return nil
}

// genOrders: ORDER, 3,000 rows per district, their ORDER-LINE rows, and
// NEW-ORDER for the last 900.
func genOrders(p *pipe, seed int64, w, d int, now string) error {
	g := newGen(seed, labelOrders, uint64(w), uint64(d))
	// O_C_ID: sequentially from a random permutation of [1 .. 3,000].
	perm := make([]int, OrdersPerDist)
	for i := range perm {
		perm[i] = i + 1
	}
	for i := len(perm) - 1; i > 0; i-- {
		j := g.IntN(i + 1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	olCnt := make([]int, OrdersPerDist+1)
	for o := 1; o <= OrdersPerDist; o++ {
		c, err := p.row(tOrders, w, d)
		if err != nil {
			return err
		}
		olCnt[o] = uniform(g, 5, 15)
		c.int(o)
		c.int(d)
		c.int(w)
		c.int(perm[o-1])
		c.str(now) // O_ENTRY_D
		if o < firstNewOrder {
			c.int(uniform(g, 1, 10)) // O_CARRIER_ID
		} else {
			c.null()
		}
		c.int(olCnt[o])
		c.int(1) // O_ALL_LOCAL
	}
	g = newGen(seed, labelOrderLine, uint64(w), uint64(d))
	for o := 1; o <= OrdersPerDist; o++ {
		for n := 1; n <= olCnt[o]; n++ {
			c, err := p.row(tOrderLine, w, d)
			if err != nil {
				return err
			}
			c.int(o)
			c.int(d)
			c.int(w)
			c.int(n)
			c.int(uniform(g, 1, Items)) // OL_I_ID
			c.int(w)                    // OL_SUPPLY_W_ID
			if o < firstNewOrder {
				c.str(now) // OL_DELIVERY_D = O_ENTRY_D
			} else {
				c.null()
			}
			c.int(5) // OL_QUANTITY
			if o < firstNewOrder {
				c.money(0)
			} else {
				c.money(uniform(g, 1, 999999)) // [0.01 .. 9,999.99]
			}
			c.aString(g, 24, 24) // OL_DIST_INFO
		}
	}
	for o := firstNewOrder; o <= OrdersPerDist; o++ {
		c, err := p.row(tNewOrder, w, d)
		if err != nil {
			return err
		}
		c.int(o)
		c.int(d)
		c.int(w)
	}
	return nil
}
