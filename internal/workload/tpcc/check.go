package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/numalab/numalab/internal/engine"
)

// ErrInconsistent is wrapped by every violation Check reports.
var ErrInconsistent = errors.New("inconsistent")

// maxReported is how many violations of one condition Check lists.
const maxReported = 10

// condition is one consistency check: a query whose rows are violations.
type condition struct {
	name  string // where it comes from and what it says
	query string
	// describe formats one violating row (all columns scanned as int64 or
	// nil; money is in cents).
	describe func(v []sql.NullInt64) string
}

func cents(x string) string { return "CAST(round((" + x + ")*100) AS BIGINT)" }

// The conditions are written once for all the engines: no output
// aliases in WHERE (PostgreSQL has none), sums cast to BIGINT (DuckDB's
// sum of integers is HUGEINT), which MariaDB spells SIGNED (engine.SQL's IntCasts).

// conditions are the consistency conditions of Clause 3.3.2 that hold for
// a database as loaded (Clause 3.3.2.11 holds only before any New-Order,
// which numalab never runs), and the cardinalities of Clause 4.3.3.1.
var conditions = []condition{
	{"clause 3.3.2.1: W_YTD = sum(D_YTD)",
		`SELECT * FROM (SELECT w_id, ` + cents("w_ytd") + ` AS y, (SELECT ` + cents("sum(d_ytd)") +
			` FROM district WHERE d_w_id = w_id) AS s
		FROM warehouse) x WHERE s IS NULL OR s != y`,
		func(v []sql.NullInt64) string {
			return fmt.Sprintf("warehouse %s: w_ytd %s, sum(d_ytd) %s", n(v[0]), money(v[1]), money(v[2]))
		}},
	{"clause 3.3.2.2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
		`SELECT * FROM (SELECT d_w_id, d_id, d_next_o_id - 1 AS dn,
			(SELECT max(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id) AS mo,
			(SELECT max(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id) AS mn
		FROM district) x WHERE mo IS NULL OR mn IS NULL OR dn != mo OR mo != mn`,
		func(v []sql.NullInt64) string {
			return fmt.Sprintf("warehouse %s district %s: d_next_o_id-1 %s, max(o_id) %s, max(no_o_id) %s",
				n(v[0]), n(v[1]), n(v[2]), n(v[3]), n(v[4]))
		}},
	{"clause 3.3.2.3: max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER",
		`SELECT no_w_id, no_d_id, max(no_o_id) - min(no_o_id) + 1, count(*) FROM new_order
		GROUP BY no_w_id, no_d_id HAVING max(no_o_id) - min(no_o_id) + 1 != count(*)`,
		func(v []sql.NullInt64) string {
			return fmt.Sprintf("warehouse %s district %s: max-min+1 %s, rows %s", n(v[0]), n(v[1]), n(v[2]), n(v[3]))
		}},
	{"clause 3.3.2.4: sum(O_OL_CNT) = rows in ORDER-LINE",
		`SELECT * FROM (SELECT d_w_id, d_id,
			(SELECT CAST(sum(o_ol_cnt) AS BIGINT) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id) AS s,
			(SELECT count(*) FROM order_line WHERE ol_w_id = d_w_id AND ol_d_id = d_id) AS c
		FROM district) x WHERE s IS NULL OR s != c`,
		func(v []sql.NullInt64) string {
			return fmt.Sprintf("warehouse %s district %s: sum(o_ol_cnt) %s, order lines %s", n(v[0]), n(v[1]), n(v[2]), n(v[3]))
		}},
	{"clause 3.3.2.5: O_CARRIER_ID is null exactly when a NEW-ORDER row exists",
		`SELECT o_w_id, o_d_id, o_id, o_carrier_id FROM orders
		WHERE (o_carrier_id IS NULL) != EXISTS (SELECT 1 FROM new_order WHERE no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id)
		UNION ALL
		SELECT no_w_id, no_d_id, no_o_id, -1 FROM new_order
		WHERE NOT EXISTS (SELECT 1 FROM orders WHERE o_w_id = no_w_id AND o_d_id = no_d_id AND o_id = no_o_id)`,
		func(v []sql.NullInt64) string {
			if v[3].Valid && v[3].Int64 == -1 {
				return fmt.Sprintf("warehouse %s district %s order %s: in NEW-ORDER but not in ORDER", n(v[0]), n(v[1]), n(v[2]))
			}
			return fmt.Sprintf("warehouse %s district %s order %s: o_carrier_id %s disagrees with NEW-ORDER",
				n(v[0]), n(v[1]), n(v[2]), n(v[3]))
		}},
	{"clause 3.3.2.6: O_OL_CNT = the order's rows in ORDER-LINE",
		`SELECT * FROM (SELECT o_w_id, o_d_id, o_id, o_ol_cnt,
			(SELECT count(*) FROM order_line WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id) AS c
		FROM orders) x WHERE o_ol_cnt IS NULL OR o_ol_cnt != c`,
		func(v []sql.NullInt64) string {
			return fmt.Sprintf("warehouse %s district %s order %s: o_ol_cnt %s, order lines %s",
				n(v[0]), n(v[1]), n(v[2]), n(v[3]), n(v[4]))
		}},
	{"clause 3.3.2.7: OL_DELIVERY_D is null exactly when O_CARRIER_ID is null",
		`SELECT ol_w_id, ol_d_id, ol_o_id, ol_number FROM order_line
		LEFT JOIN orders ON o_w_id = ol_w_id AND o_d_id = ol_d_id AND o_id = ol_o_id
		WHERE o_id IS NULL OR (ol_delivery_d IS NULL) != (o_carrier_id IS NULL)`,
		func(v []sql.NullInt64) string {
			return fmt.Sprintf("warehouse %s district %s order %s line %s: ol_delivery_d disagrees with its order's "+
				"o_carrier_id (or the order is missing)", n(v[0]), n(v[1]), n(v[2]), n(v[3]))
		}},
	{"clause 3.3.2.8: W_YTD = sum(H_AMOUNT)",
		`SELECT w_id, ` + cents("w_ytd") + `, h.s FROM warehouse
		LEFT JOIN (SELECT h_w_id, ` + cents("sum(h_amount)") + ` AS s FROM history GROUP BY h_w_id) h ON h.h_w_id = w_id
		WHERE h.s IS NULL OR h.s != ` + cents("w_ytd"),
		func(v []sql.NullInt64) string {
			return fmt.Sprintf("warehouse %s: w_ytd %s, sum(h_amount) %s", n(v[0]), money(v[1]), money(v[2]))
		}},
	{"clause 3.3.2.9: D_YTD = sum(H_AMOUNT)",
		`SELECT d_w_id, d_id, ` + cents("d_ytd") + `, h.s FROM district
		LEFT JOIN (SELECT h_w_id, h_d_id, ` + cents("sum(h_amount)") + ` AS s FROM history GROUP BY h_w_id, h_d_id) h
			ON h.h_w_id = d_w_id AND h.h_d_id = d_id
		WHERE h.s IS NULL OR h.s != ` + cents("d_ytd"),
		func(v []sql.NullInt64) string {
			return fmt.Sprintf("warehouse %s district %s: d_ytd %s, sum(h_amount) %s",
				n(v[0]), n(v[1]), money(v[2]), money(v[3]))
		}},
	{"clause 3.3.2.10 and 3.3.2.12: C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT) " +
		"and C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)",
		`SELECT c_w_id, c_d_id, c_id, ` + cents("c_balance") + `, ` + cents("c_ytd_payment") +
			`, coalesce(o.s, 0), coalesce(h.s, 0)
		FROM customer
		LEFT JOIN (SELECT h_c_w_id AS w, h_c_d_id AS d, h_c_id AS id, ` + cents("sum(h_amount)") + ` AS s
			FROM history GROUP BY 1, 2, 3) h ON h.w = c_w_id AND h.d = c_d_id AND h.id = c_id
		LEFT JOIN (SELECT o_w_id AS w, o_d_id AS d, o_c_id AS id, ` + cents("sum(ol_amount)") + ` AS s
			FROM orders JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
			WHERE ol_delivery_d IS NOT NULL GROUP BY 1, 2, 3) o ON o.w = c_w_id AND o.d = c_d_id AND o.id = c_id
		WHERE ` + cents("c_balance") + ` != coalesce(o.s, 0) - coalesce(h.s, 0)
			OR ` + cents("c_balance") + ` + ` + cents("c_ytd_payment") + ` != coalesce(o.s, 0)`,
		func(v []sql.NullInt64) string {
			return fmt.Sprintf("warehouse %s district %s customer %s: c_balance %s, c_ytd_payment %s, delivered "+
				"sum(ol_amount) %s, sum(h_amount) %s",
				n(v[0]), n(v[1]), n(v[2]), money(v[3]), money(v[4]), money(v[5]), money(v[6]))
		}},
	{"clause 3.3.2.11: rows in ORDER - rows in NEW-ORDER = 2100",
		`SELECT * FROM (SELECT d_w_id, d_id,
			(SELECT count(*) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id) AS o,
			(SELECT count(*) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id) AS nn
		FROM district) x WHERE o - nn != 2100`,
		func(v []sql.NullInt64) string {
			return fmt.Sprintf("warehouse %s district %s: orders %s, new orders %s", n(v[0]), n(v[1]), n(v[2]), n(v[3]))
		}},
}

// cardinality is a table's expected row count for w warehouses (Clause
// 4.3.3.1); ORDER-LINE's varies and is checked by condition 4.
var cardinality = []struct {
	t     *table
	count func(w int64) int64
}{
	{tItem, func(int64) int64 { return Items }},
	{tWarehouse, func(w int64) int64 { return w }},
	{tStock, func(w int64) int64 { return w * StockPerWarehouse }},
	{tDistrict, func(w int64) int64 { return w * DistrictsPerWH }},
	{tCustomer, func(w int64) int64 { return w * DistrictsPerWH * CustomersPerDist }},
	{tHistory, func(w int64) int64 { return w * DistrictsPerWH * CustomersPerDist }},
	{tOrders, func(w int64) int64 { return w * DistrictsPerWH * OrdersPerDist }},
	{tNewOrder, func(w int64) int64 { return w * DistrictsPerWH * NewOrdersPerDist }},
}

func n(v sql.NullInt64) string {
	if !v.Valid {
		return "null"
	}
	return fmt.Sprint(v.Int64)
}

func money(v sql.NullInt64) string {
	if !v.Valid {
		return "null"
	}
	s := ""
	x := v.Int64
	if x < 0 {
		s, x = "-", -x
	}
	return fmt.Sprintf("%s%d.%02d", s, x/100, x%100)
}

// Check runs the consistency conditions of Clause 3.3.2 that apply to a
// freshly loaded database (1 to 12) and the row counts of Clause 4.3.3.1
// for the warehouses loaded, on the TPC-C database in eng, and returns
// every violation found (at most 10 listed per condition), each wrapping
// ErrInconsistent; nil if there are none. It refuses, as Open does, a
// database that is not a numalab TPC-C database (ErrNotTPCC) or whose load
// did not finish (ErrUnfinished).
func Check(ctx context.Context, eng engine.Engine) error {
	spec, _ := engine.Lookup(eng.Name())
	if _, err := readMeta(ctx, eng.DB(), spec); err != nil {
		return err
	}
	return check(ctx, eng.DB(), spec)
}

// check runs Check's conditions without looking at the marker table: a
// load checks what it loaded before it marks it complete.
func check(ctx context.Context, db *sql.DB, spec engine.Spec) error {
	var errs []error
	var w int64
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM warehouse").Scan(&w); err != nil {
		return fmt.Errorf("checking consistency: counting warehouses: %w", err)
	}
	if err := db.QueryRowContext(ctx, spec.SQL.IntCasts("SELECT CAST(value AS INTEGER) FROM "+metaTable(spec)+" WHERE "+
		spec.SQL.Quote("key")+" = 'warehouses'")).Scan(&w); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("checking consistency: reading the loaded warehouses: %w", err)
	}
	for _, c := range cardinality {
		var got int64
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+c.t.name).Scan(&got); err != nil {
			return fmt.Errorf("checking consistency: counting %s: %w", c.t.name, err)
		}
		if want := c.count(w); got != want {
			errs = append(errs, fmt.Errorf("%w: clause 4.3.3.1: %s has %d rows, want %d for %d warehouses",
				ErrInconsistent, c.t.name, got, want, w))
		}
	}
	for _, c := range conditions {
		rows, err := db.QueryContext(ctx, spec.SQL.IntCasts(c.query))
		if err != nil {
			return fmt.Errorf("checking consistency: %s: %w", c.name, err)
		}
		cols, _ := rows.Columns()
		v := make([]sql.NullInt64, len(cols))
		ptrs := make([]any, len(cols))
		for i := range v {
			ptrs[i] = &v[i]
		}
		count := 0
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return fmt.Errorf("checking consistency: %s: %w", c.name, err)
			}
			if count < maxReported {
				errs = append(errs, fmt.Errorf("%w: %s: %s", ErrInconsistent, c.name, c.describe(v)))
			}
			count++
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("checking consistency: %s: %w", c.name, err)
		}
		if count > maxReported {
			errs = append(errs, fmt.Errorf("%w: %s: and %d more", ErrInconsistent, c.name, count-maxReported))
		}
	}
	return errors.Join(errs...)
}
