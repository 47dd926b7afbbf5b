package tpcc

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// SchemaVersion changes whenever the tables, indexes or generated values
// change; a file of another version must be reloaded.
const SchemaVersion = 1

// Cardinalities of Clause 4.3.3.1 (per warehouse unless said otherwise).
const (
	Items             = 100000 // in ITEM, for the whole database
	StockPerWarehouse = 100000
	DistrictsPerWH    = 10
	CustomersPerDist  = 3000
	OrdersPerDist     = 3000
	NewOrdersPerDist  = 900
	firstNewOrder     = OrdersPerDist - NewOrdersPerDist + 1 // 2101: orders from here are undelivered
	customersNamedSeq = 1000                                 // the first 1000 customers take names 0..999 in order
	stockLevelOrders  = 20                                   // Clause 2.8.2.2: the last 20 orders
)

// table is one table of the schema: its columns in the specification's
// order, and its DDL. Shared columns hold the same value in every row of a
// load chunk (one district's rows, or constants): a multi-row INSERT binds
// them once.
type table struct {
	name   string
	cols   []string
	ddl    string
	shared []bool
	nShare int
}

// share marks the named columns as shared.
func (t *table) share(names string) {
	t.shared = make([]bool, len(t.cols))
	for _, n := range strings.Fields(names) {
		i := slices.Index(t.cols, n)
		if i < 0 {
			panic("tpcc: no column " + n + " in " + t.name)
		}
		t.shared[i] = true
		t.nShare++
	}
}

func init() {
	tWarehouse.share("")
	tItem.share("")
	tDistrict.share("d_w_id d_ytd d_next_o_id")
	tCustomer.share("c_d_id c_w_id c_middle c_since c_credit_lim c_balance c_ytd_payment c_payment_cnt c_delivery_cnt")
	tHistory.share("h_c_d_id h_c_w_id h_d_id h_w_id h_date h_amount")
	tNewOrder.share("no_d_id no_w_id")
	tOrders.share("o_d_id o_w_id o_entry_d o_all_local")
	tOrderLine.share("ol_d_id ol_w_id ol_supply_w_id ol_quantity")
	tStock.share("s_w_id s_ytd s_order_cnt s_remote_cnt")
}

// The nine tables of Clause 1.3 with the primary keys of Clause 1.3's
// "Primary Key" lines. Tables with a primary key are WITHOUT ROWID, so rows
// are stored in key order (clustered), as in the other engines; HISTORY has
// no primary key. Dates are TEXT ('YYYY-MM-DD HH:MM:SS') so that the client
// does not parse them; money is REAL.
var (
	tWarehouse = &table{name: "warehouse",
		cols: cols("w_id w_name w_street_1 w_street_2 w_city w_state w_zip w_tax w_ytd"),
		ddl: `CREATE TABLE warehouse (
	w_id INTEGER NOT NULL, w_name TEXT, w_street_1 TEXT, w_street_2 TEXT, w_city TEXT,
	w_state TEXT, w_zip TEXT, w_tax REAL, w_ytd REAL,
	PRIMARY KEY (w_id)) WITHOUT ROWID`}
	tDistrict = &table{name: "district",
		cols: cols("d_id d_w_id d_name d_street_1 d_street_2 d_city d_state d_zip d_tax d_ytd d_next_o_id"),
		ddl: `CREATE TABLE district (
	d_id INTEGER NOT NULL, d_w_id INTEGER NOT NULL, d_name TEXT, d_street_1 TEXT, d_street_2 TEXT,
	d_city TEXT, d_state TEXT, d_zip TEXT, d_tax REAL, d_ytd REAL, d_next_o_id INTEGER,
	PRIMARY KEY (d_w_id, d_id)) WITHOUT ROWID`}
	tCustomer = &table{name: "customer", cols: cols("c_id c_d_id c_w_id c_first c_middle c_last c_street_1 c_street_2 " +
		"c_city c_state c_zip c_phone c_since c_credit c_credit_lim c_discount c_balance c_ytd_payment c_payment_cnt " +
		"c_delivery_cnt c_data"),
		ddl: `CREATE TABLE customer (
	c_id INTEGER NOT NULL, c_d_id INTEGER NOT NULL, c_w_id INTEGER NOT NULL,
	c_first TEXT, c_middle TEXT, c_last TEXT, c_street_1 TEXT, c_street_2 TEXT, c_city TEXT,
	c_state TEXT, c_zip TEXT, c_phone TEXT, c_since TEXT, c_credit TEXT, c_credit_lim REAL,
	c_discount REAL, c_balance REAL, c_ytd_payment REAL, c_payment_cnt INTEGER,
	c_delivery_cnt INTEGER, c_data TEXT,
	PRIMARY KEY (c_w_id, c_d_id, c_id)) WITHOUT ROWID`}
	tHistory = &table{name: "history", cols: cols("h_c_id h_c_d_id h_c_w_id h_d_id h_w_id h_date h_amount h_data"),
		ddl: `CREATE TABLE history (
	h_c_id INTEGER, h_c_d_id INTEGER, h_c_w_id INTEGER, h_d_id INTEGER, h_w_id INTEGER,
	h_date TEXT, h_amount REAL, h_data TEXT)`}
	tNewOrder = &table{name: "new_order", cols: cols("no_o_id no_d_id no_w_id"), ddl: `CREATE TABLE new_order (
	no_o_id INTEGER NOT NULL, no_d_id INTEGER NOT NULL, no_w_id INTEGER NOT NULL,
	PRIMARY KEY (no_w_id, no_d_id, no_o_id)) WITHOUT ROWID`}
	tOrders = &table{name: "orders", cols: cols("o_id o_d_id o_w_id o_c_id o_entry_d o_carrier_id o_ol_cnt o_all_local"),
		ddl: `CREATE TABLE orders (
	o_id INTEGER NOT NULL, o_d_id INTEGER NOT NULL, o_w_id INTEGER NOT NULL, o_c_id INTEGER,
	o_entry_d TEXT, o_carrier_id INTEGER, o_ol_cnt INTEGER, o_all_local INTEGER,
	PRIMARY KEY (o_w_id, o_d_id, o_id)) WITHOUT ROWID`}
	tOrderLine = &table{name: "order_line", cols: cols("ol_o_id ol_d_id ol_w_id ol_number ol_i_id ol_supply_w_id " +
		"ol_delivery_d ol_quantity ol_amount ol_dist_info"),
		ddl: `CREATE TABLE order_line (
	ol_o_id INTEGER NOT NULL, ol_d_id INTEGER NOT NULL, ol_w_id INTEGER NOT NULL,
	ol_number INTEGER NOT NULL, ol_i_id INTEGER, ol_supply_w_id INTEGER, ol_delivery_d TEXT,
	ol_quantity INTEGER, ol_amount REAL, ol_dist_info TEXT,
	PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)) WITHOUT ROWID`}
	tItem = &table{name: "item", cols: cols("i_id i_im_id i_name i_price i_data"), ddl: `CREATE TABLE item (
	i_id INTEGER NOT NULL, i_im_id INTEGER, i_name TEXT, i_price REAL, i_data TEXT,
	PRIMARY KEY (i_id)) WITHOUT ROWID`}
	tStock = &table{name: "stock", cols: cols("s_i_id s_w_id s_quantity s_dist_01 s_dist_02 s_dist_03 s_dist_04 " +
		"s_dist_05 s_dist_06 s_dist_07 s_dist_08 s_dist_09 s_dist_10 s_ytd s_order_cnt s_remote_cnt s_data"),
		ddl: `CREATE TABLE stock (
	s_i_id INTEGER NOT NULL, s_w_id INTEGER NOT NULL, s_quantity INTEGER,
	s_dist_01 TEXT, s_dist_02 TEXT, s_dist_03 TEXT, s_dist_04 TEXT, s_dist_05 TEXT,
	s_dist_06 TEXT, s_dist_07 TEXT, s_dist_08 TEXT, s_dist_09 TEXT, s_dist_10 TEXT,
	s_ytd INTEGER, s_order_cnt INTEGER, s_remote_cnt INTEGER, s_data TEXT,
	PRIMARY KEY (s_w_id, s_i_id)) WITHOUT ROWID`}
)

// tables lists the nine tables.
var tables = []*table{tWarehouse, tDistrict, tCustomer, tHistory, tNewOrder, tOrders, tOrderLine, tItem, tStock}

// indexes are built after the data: the secondary indexes the two read-only
// transactions need. Order-Status by last name reads customers of a district
// by C_LAST in C_FIRST order (Clause 2.6.2.2); it then finds the customer's
// most recent order (the largest O_ID for O_C_ID).
var indexes = []string{
	`CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first)`,
	`CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)`,
}

func cols(s string) []string { return strings.Fields(s) }

// insertSQL is a multi-row INSERT of n rows into t with numbered
// parameters: ?1 .. ?S are the shared columns, the rows' own values follow
// in row order.
func insertSQL(t *table, n int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(t.name)
	b.WriteString(" VALUES ")
	next := t.nShare + 1
	for r := 0; r < n; r++ {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		k := 1
		for i := range t.cols {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('?')
			if t.shared[i] {
				b.WriteString(strconv.Itoa(k))
				k++
			} else {
				b.WriteString(strconv.Itoa(next))
				next++
			}
		}
		b.WriteByte(')')
	}
	return b.String()
}

// colRE finds a column's type in the SQLite DDL; pkRE the primary key.
var (
	colRE = regexp.MustCompile(`(?m)\b([a-z_0-9]+) (INTEGER|TEXT|REAL)\b`)
	pkRE  = regexp.MustCompile(`PRIMARY KEY \(([^)]*)\)`)
)

// primaryKey is t's primary key columns, "" for HISTORY.
func primaryKey(t *table) string {
	m := pkRE.FindStringSubmatch(t.ddl)
	if m == nil {
		return ""
	}
	return m[1]
}
