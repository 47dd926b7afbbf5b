package tpcc

// Order-Status and Stock-Level on PostgreSQL: each transaction is one call
// of a PL/pgSQL function numalab creates in its schema, so one round trip.
//
// The stream's connection is opened by pgx (startup, authentication, the
// engine's settings, backend pinning), which then prepares the two calls;
// after that the stream takes the connection over (pgconn's Hijack) and
// speaks the extended protocol itself through pgproto3: Bind, Execute and
// Sync in one write, the answer in one read, binary parameters and results.
// pgx's own query path arms and stops a runtime timer around every write
// (its guard against a write/read deadlock), and every armed timer wakes a
// thread sleeping in Go's netpoller; on these virtual machines those
// wake-ups, with the scheduler's, cost about 60 µs of CPU per call against
// pgbench's 12 µs (measured with Stock-Level), which would make numalab
// the bottleneck it must not be. With the engine's blocking socket
// (engine/pgconn_blocking.go) a call is then a write and, on the stream's
// own thread, a wait for the answer (on a unix socket in poll, as libpq
// waits) and a read.
//
// The functions take the customer's last name as its
// number in [0, 999] (Clause 4.3.2.3) and build the name themselves, so that
// a pgbench script, which can only draw numbers, makes exactly the same
// calls (PgbenchScripts).

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/numalab/numalab/internal/engine"
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
		fmt.Fprintf(&b, `CREATE OR REPLACE FUNCTION %[1]s.order_status%[2]s(p_w integer, p_d integer, p_c integer, p_last integer)
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

// lastNameNum maps a last name back to its number.
var lastNameNum = func() map[string]int {
	m := make(map[string]int, 1000)
	for n := 0; n < 1000; n++ {
		m[LastName(n)] = n
	}
	return m
}()

// pgRunner calls the functions on the stream's own connection, speaking
// the protocol itself after pgx has set the connection up.
type pgRunner struct {
	conn      net.Conn
	fe        *pgproto3.Frontend
	closeConn func() error
	augmented bool

	params [4][4]byte // binary int4 parameters
	bind   pgproto3.Bind
	exec   pgproto3.Execute
	sync   pgproto3.Sync
	cols   int // order_status's result columns

	// What call is decoding into: r for Order-Status, else low.
	r   *OrderStatusResult
	low int
	// dates repeats the last date string decoded: nearly all are the
	// load time, so one string serves every row.
	dates string
}

// Prepared statement names on the stream's connection.
const (
	pgStmtOrderStatus = "numalab_order_status"
	pgStmtStockLevel  = "numalab_stock_level"
)

func newPGRunner(ctx context.Context, w *Workload) (*pgRunner, error) {
	c, err := w.eng.Connect(ctx)
	if err != nil {
		return nil, err
	}
	pc := c.Native().Postgres
	s := &pgRunner{closeConn: c.Close, augmented: w.opt.Augmented, cols: 13}
	if s.augmented {
		s.cols++
	}
	for _, q := range w.opt.Session {
		if _, err := pc.Exec(ctx, q); err != nil {
			c.Close()
			return nil, fmt.Errorf("setting up the session with %q: %w", q, err)
		}
	}
	osSQL, slSQL := pgCalls(w.eng.Schema(), w.opt.Augmented)
	for _, p := range [][2]string{{pgStmtOrderStatus, osSQL}, {pgStmtStockLevel, slSQL}} {
		if _, err := pc.Prepare(ctx, p[0], p[1]); err != nil {
			c.Close()
			return nil, fmt.Errorf("preparing %q: %w", p[1], err)
		}
	}
	if s.conn, s.fe, err = engine.TakeOver(ctx, c); err != nil {
		return nil, err
	}
	s.bind.ParameterFormatCodes = []int16{1}
	s.bind.ResultFormatCodes = []int16{1}
	return s, nil
}

func (s *pgRunner) close() error {
	s.fe.Send(&pgproto3.Terminate{})
	s.fe.Flush()
	err := s.conn.Close()
	s.closeConn() // pgx's side: nothing left to close after the takeover
	return err
}

// call runs one prepared statement with int4 arguments, calling row for
// each result row, in one round trip. A cancelled ctx interrupts it by
// shutting the socket (the connection is then unusable).
func (s *pgRunner) call(ctx context.Context, stmt string, args ...int) error {
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { s.conn.SetDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	s.bind.PreparedStatement = stmt
	s.bind.Parameters = s.bind.Parameters[:0]
	for i, a := range args {
		binary.BigEndian.PutUint32(s.params[i][:], uint32(int32(a)))
		s.bind.Parameters = append(s.bind.Parameters, s.params[i][:])
	}
	s.fe.Send(&s.bind)
	s.fe.Send(&s.exec)
	s.fe.Send(&s.sync)
	if err := s.fe.Flush(); err != nil {
		return err
	}
	var callErr error
	for {
		msg, err := s.fe.Receive()
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *pgproto3.DataRow:
			if callErr == nil {
				callErr = s.decode(m.Values)
			}
		case *pgproto3.ErrorResponse:
			if callErr == nil {
				callErr = pgconn.ErrorResponseToPgError(m)
			}
		case *pgproto3.ReadyForQuery:
			return callErr
		}
	}
}

var errPGResult = errors.New("unexpected result shape")

func pgInt(b []byte) int {
	if len(b) != 4 {
		return 0 // NULL
	}
	return int(int32(binary.BigEndian.Uint32(b)))
}

func pgFloat(b []byte) float64 {
	if len(b) != 8 {
		return 0
	}
	return math.Float64frombits(binary.BigEndian.Uint64(b))
}

// decode takes one result row into s.r (Order-Status) or s.low.
func (s *pgRunner) decode(v [][]byte) error {
	r := s.r
	if r == nil {
		if len(v) != 1 {
			return fmt.Errorf("stock-level: %d columns: %w", len(v), errPGResult)
		}
		s.low = pgInt(v[0])
		return nil
	}
	if len(v) != s.cols {
		return fmt.Errorf("order-status: %d columns: %w", len(v), errPGResult)
	}
	if r.First == "" {
		r.CID, r.First, r.Middle, r.Last, r.Balance = pgInt(v[0]), string(v[1]), string(v[2]), string(v[3]), pgFloat(v[4])
		r.OID, r.EntryD, r.CarrierID = pgInt(v[5]), s.date(v[6]), pgInt(v[7])
		if s.augmented {
			r.AvgPrice = pgFloat(v[13])
		}
	}
	if v[8] != nil {
		r.Lines = append(r.Lines, OrderLine{IID: pgInt(v[8]), SupplyWID: pgInt(v[9]), Quantity: pgInt(v[10]),
			Amount: pgFloat(v[11]), DeliveryD: s.date(v[12])})
	}
	return nil
}

// date returns b as a string, the previous one when equal.
func (s *pgRunner) date(b []byte) string {
	if string(b) != s.dates { // no allocation: the comparison converts in place
		s.dates = string(b)
	}
	return s.dates
}

func (s *pgRunner) orderStatus(ctx context.Context, in OrderStatusInput, r *OrderStatusResult) error {
	c, n := in.CID, 0
	if in.Last != "" {
		num, ok := lastNameNum[in.Last]
		if !ok {
			return fmt.Errorf("%q is not a TPC-C last name", in.Last)
		}
		c, n = 0, num
	}
	s.r = r
	err := s.call(ctx, pgStmtOrderStatus, in.W, in.D, c, n)
	s.r = nil
	return err
}

func (s *pgRunner) stockLevel(ctx context.Context, w, d, threshold int) (int, error) {
	s.r, s.low = nil, -1
	if err := s.call(ctx, pgStmtStockLevel, w, d, threshold); err != nil {
		return 0, err
	}
	if s.low < 0 {
		return 0, fmt.Errorf("stock-level: no row: %w", errPGResult)
	}
	return s.low, nil
}
