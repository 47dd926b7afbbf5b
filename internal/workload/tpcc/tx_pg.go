package tpcc

// Order-Status and Stock-Level on PostgreSQL: each transaction is one call
// of a PL/pgSQL function numalab creates in its schema, so one round trip.
//
// A stream prepares the two calls and runs them through the engine's
// prepared statements (tx_call.go), which on PostgreSQL speak the extended
// protocol on the engine's blocking socket: Bind, Execute and Sync in one
// write, the answer in one read, binary parameters and results
// (engine/wire_pg.go says why not through pgx's query path).
//
// The functions take the customer's last name as its
// number in [0, 999] (Clause 4.3.2.3) and build the name themselves, so that
// a pgbench script, which can only draw numbers, makes exactly the same
// calls (PgbenchScripts).

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// pgFunctionsSQL creates (or replaces) the four functions in schema:
// order_status, stock_level and their augmented variants order_status_aug
// and stock_level_aug, which also compute avg(i_price) over the items with
// i_id < 15000. Table names are schema-qualified, so the functions work
// whatever the caller's search_path.
func pgFunctionsSQL(schema string) string {
	q := pgx.Identifier{schema}.Sanitize()
	var b strings.Builder
	for _, aug := range []bool{false, true} {
		suffix, avgCol, avgVar, avgSQL, avgOut, avgNull := "", "", "", "", "", ""
		if aug {
			suffix = "_aug"
			avgCol = ", avg_price double precision"
			avgVar = "v_avg double precision;"
			avgSQL = "SELECT avg(i.i_price) INTO v_avg FROM " + q + ".item i WHERE i.i_id < 15000;"
			avgOut = ", v_avg"
			avgNull = ", v_avg"
		}
		fmt.Fprintf(&b,
			`CREATE OR REPLACE FUNCTION %[1]s.order_status%[2]s(p_w integer, p_d integer, p_c integer, p_last integer)
RETURNS TABLE (c_id integer, c_first text, c_middle text, c_last text, c_balance double precision,
	o_id integer, o_entry_d text, o_carrier_id integer,
	ol_i_id integer, ol_supply_w_id integer, ol_quantity integer, ol_amount double precision, ol_delivery_d text%[3]s)
LANGUAGE plpgsql STABLE AS $fn$
#variable_conflict use_column
DECLARE
	syl CONSTANT text[] := ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'];
	v_name text; v_c integer; v_first text; v_middle text; v_balance double precision;
	v_o integer; v_entry text; v_carrier integer; %[4]s
BEGIN
	IF p_c = 0 THEN
		-- Clause 2.6.2.2: the customers of that name by c_first, the one at n/2 rounded up.
		v_name := syl[p_last / 100 + 1] || syl[p_last / 10 %% 10 + 1] || syl[p_last %% 10 + 1];
		SELECT x.c_id, x.c_first, x.c_middle, x.c_balance INTO v_c, v_first, v_middle, v_balance
		FROM (SELECT cu.c_id, cu.c_first, cu.c_middle, cu.c_balance,
				row_number() OVER (ORDER BY cu.c_first) AS rn, count(*) OVER () AS n
			FROM %[1]s.customer cu WHERE cu.c_w_id = p_w AND cu.c_d_id = p_d AND cu.c_last = v_name) x
		WHERE x.rn = (x.n + 1) / 2;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'no customer named %% in warehouse %% district %%', v_name, p_w, p_d;
		END IF;
	ELSE
		v_c := p_c;
		SELECT cu.c_first, cu.c_middle, cu.c_last, cu.c_balance INTO v_first, v_middle, v_name, v_balance
		FROM %[1]s.customer cu WHERE cu.c_w_id = p_w AND cu.c_d_id = p_d AND cu.c_id = p_c;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'no customer %% in warehouse %% district %%', p_c, p_w, p_d;
		END IF;
	END IF;
	SELECT o.o_id, o.o_entry_d, o.o_carrier_id INTO v_o, v_entry, v_carrier
	FROM %[1]s.orders o WHERE o.o_w_id = p_w AND o.o_d_id = p_d AND o.o_c_id = v_c ORDER BY o.o_id DESC LIMIT 1;
	%[5]s
	IF v_o IS NULL THEN
		RETURN QUERY SELECT v_c, v_first, v_middle, v_name, v_balance, NULL::integer, NULL::text, NULL::integer,
			NULL::integer, NULL::integer, NULL::integer, NULL::double precision, NULL::text%[7]s;
		RETURN;
	END IF;
	RETURN QUERY SELECT v_c, v_first, v_middle, v_name, v_balance, v_o, v_entry, v_carrier,
		ol.ol_i_id, ol.ol_supply_w_id, ol.ol_quantity, ol.ol_amount, ol.ol_delivery_d%[6]s
	FROM %[1]s.order_line ol WHERE ol.ol_w_id = p_w AND ol.ol_d_id = p_d AND ol.ol_o_id = v_o;
END $fn$;

CREATE OR REPLACE FUNCTION %[1]s.stock_level%[2]s(p_w integer, p_d integer, p_threshold integer) RETURNS integer
LANGUAGE plpgsql STABLE AS $fn$
DECLARE
	v_next integer; v_low integer; %[4]s
BEGIN
	SELECT d.d_next_o_id INTO v_next FROM %[1]s.district d WHERE d.d_w_id = p_w AND d.d_id = p_d;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'no district %% in warehouse %%', p_d, p_w;
	END IF;
	-- Clause 2.8.2.2: distinct items of the last 20 orders with stock below the threshold.
	SELECT count(DISTINCT s.s_i_id) INTO v_low FROM %[1]s.order_line ol, %[1]s.stock s
	WHERE ol.ol_w_id = p_w AND ol.ol_d_id = p_d AND ol.ol_o_id < v_next AND ol.ol_o_id >= v_next - %[8]d
		AND s.s_w_id = p_w AND s.s_i_id = ol.ol_i_id AND s.s_quantity < p_threshold;
	%[5]s
	RETURN v_low;
END $fn$;
`, q, suffix, avgCol, avgVar, avgSQL, avgOut, avgNull, stockLevelOrders)
	}
	return b.String()
}

// pgCalls are the statements a stream (and pgbench) sends.
func pgCalls(schema string, augmented bool) (orderStatus, stockLevel string) {
	q := pgx.Identifier{schema}.Sanitize()
	suffix := ""
	if augmented {
		suffix = "_aug"
	}
	return fmt.Sprintf("SELECT * FROM %s.order_status%s($1, $2, $3, $4)", q, suffix),
		fmt.Sprintf("SELECT %s.stock_level%s($1, $2, $3)", q, suffix)
}
