package tpcc

// Order-Status and Stock-Level on MariaDB (and MySQL 8): each transaction
// is one CALL of a stored procedure numalab creates in its database, so
// one round trip, as PostgreSQL's functions are (tx_pg.go). The stream
// prepares the two CALLs once on its connection (tx_call.go; the engine's
// server-side prepared statements, COM_STMT_EXECUTE with binary parameters
// and results) and reads each call's one result set.
//
// The procedures take the customer's last name as its number in [0, 999]
// (Clause 4.3.2.3) and build the name themselves, as the PostgreSQL
// functions do. Order-Status by name takes the customer at position n/2
// rounded up by C_FIRST (Clause 2.6.2.2) with LIMIT, its ties in the
// index's order (C_ID), as SQLite's are.

import (
	"context"
	"fmt"
	"strings"

	"github.com/numalab/numalab/internal/engine"
)

// mySyllables is Clause 4.3.2.3's syllables as ELT's arguments.
const mySyllables = "'BAR', 'OUGHT', 'ABLE', 'PRI', 'PRES', 'ESE', 'ANTI', 'CALLY', 'ATION', 'EING'"

// myProceduresSQL are the statements that (re)create the four procedures
// in the current database: order_status, stock_level and their augmented
// variants, which also compute avg(i_price) over the items with i_id <
// 15000 (Order-Status returns it as a last column).
func myProceduresSQL() []string {
	var out []string
	for _, aug := range []bool{false, true} {
		suffix, avgVar, avgSQL, avgOut := "", "", "", ""
		if aug {
			suffix = "_aug"
			avgVar = "DECLARE v_avg DOUBLE;"
			avgSQL = "SELECT avg(i_price) INTO v_avg FROM item WHERE i_id < 15000;"
			avgOut = ", v_avg"
		}
		out = append(out, "DROP PROCEDURE IF EXISTS order_status"+suffix,
			fmt.Sprintf(`CREATE PROCEDURE order_status%[1]s(p_w INT, p_d INT, p_c INT, p_last INT)
READS SQL DATA
BEGIN
	DECLARE v_name VARCHAR(16); DECLARE v_first VARCHAR(16); DECLARE v_middle VARCHAR(2);
	DECLARE v_c INT; DECLARE v_n INT; DECLARE v_o INT; DECLARE v_carrier INT;
	DECLARE v_balance DOUBLE; DECLARE v_entry VARCHAR(32); %[2]s
	IF p_c = 0 THEN
		SET v_name = CONCAT(ELT(p_last DIV 100 + 1, %[5]s), ELT(p_last DIV 10 MOD 10 + 1, %[5]s), ELT(p_last MOD 10 + 1, %[5]s));
		SELECT count(*) INTO v_n FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = v_name;
		IF v_n = 0 THEN
			SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no customer of that last name in the district';
		END IF;
		-- Clause 2.6.2.2: the customers of that name by c_first, the one at n/2 rounded up.
		SET v_n = (v_n + 1) DIV 2 - 1;
		SELECT c_id, c_first, c_middle, c_balance INTO v_c, v_first, v_middle, v_balance FROM customer
		WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = v_name ORDER BY c_first LIMIT v_n, 1;
	ELSE
		SET v_c = p_c;
		SELECT c_first, c_middle, c_last, c_balance INTO v_first, v_middle, v_name, v_balance FROM customer
		WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = p_c;
		IF v_first IS NULL THEN
			SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no such customer in the district';
		END IF;
	END IF;
	SELECT o_id, o_entry_d, o_carrier_id INTO v_o, v_entry, v_carrier FROM orders
	WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_c ORDER BY o_id DESC LIMIT 1;
	%[3]s
	IF v_o IS NULL THEN
		SELECT v_c, v_first, v_middle, v_name, v_balance, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL%[4]s;
	ELSE
		SELECT v_c, v_first, v_middle, v_name, v_balance, v_o, v_entry, v_carrier,
			ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d%[4]s
		FROM order_line WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_o;
	END IF;
END`, suffix, avgVar, avgSQL, avgOut, mySyllables),
			"DROP PROCEDURE IF EXISTS stock_level"+suffix,
			fmt.Sprintf(`CREATE PROCEDURE stock_level%[1]s(p_w INT, p_d INT, p_threshold INT)
READS SQL DATA
BEGIN
	DECLARE v_next INT; %[2]s
	SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w AND d_id = p_d;
	IF v_next IS NULL THEN
		SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no such district';
	END IF;
	%[3]s
	-- Clause 2.8.2.2: distinct items of the last 20 orders with stock below the threshold.
	SELECT count(DISTINCT s.s_i_id) FROM order_line ol JOIN stock s ON s.s_w_id = p_w AND s.s_i_id = ol.ol_i_id
	WHERE ol.ol_w_id = p_w AND ol.ol_d_id = p_d AND ol.ol_o_id < v_next AND ol.ol_o_id >= v_next - %[4]d
		AND s.s_quantity < p_threshold;
END`, suffix, avgVar, avgSQL, stockLevelOrders))
	}
	return out
}

// createMyProcedures (re)creates the procedures in eng's database.
func createMyProcedures(ctx context.Context, eng engine.Engine) error {
	for _, q := range myProceduresSQL() {
		if _, err := eng.DB().ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", strings.SplitN(q, "(", 2)[0], err)
		}
	}
	return nil
}

// myCalls are the statements a stream sends.
func myCalls(augmented bool) (orderStatus, stockLevel string) {
	suffix := ""
	if augmented {
		suffix = "_aug"
	}
	return "CALL order_status" + suffix + "(?, ?, ?, ?)", "CALL stock_level" + suffix + "(?, ?, ?)"
}
