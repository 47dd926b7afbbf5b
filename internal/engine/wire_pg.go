package engine

// PostgreSQL's fast paths (fast.go). pgx opens the stream's connection
// (startup, authentication, the engine's settings, backend pinning) and
// prepares its statements; the first fast call then takes the connection
// over (pgconn's Hijack) and speaks the extended protocol itself on the
// engine's blocking socket (pgconn_blocking.go): a call is one write of
// its messages and, on the stream's own thread, one read of the answer
// (more only when it arrives in pieces), parsed in place up to
// ReadyForQuery; only an ErrorResponse is decoded. pgx's own query path
// arms and stops a runtime timer around every write (its guard against a
// write/read deadlock), and every armed timer wakes a thread sleeping in
// Go's netpoller: on these virtual machines those wake-ups cost about
// 60 µs of CPU per call against pgbench's 12 µs (measured with tpcc's
// Stock-Level), which would make numalab the bottleneck it must not be.
// The bulk paths are in wire_pg_bulk.go.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

var (
	_ Preparer = (*pgConn)(nil)
	_ Repeater = (*pgConn)(nil)
)

var errTakenOver = errors.New("the connection speaks the protocol itself since its first fast call: " +
	"prepare and set up everything before it")

// PostgreSQL's type OIDs that the fast path reads and writes in binary.
const (
	oidInt8   = 20
	oidInt2   = 21
	oidInt4   = 23
	oidFloat4 = 700
	oidFloat8 = 701
)

func binaryOID(oid uint32) bool {
	switch oid {
	case oidInt2, oidInt4, oidInt8, oidFloat4, oidFloat8:
		return true
	}
	return false
}

// pgWire is a connection taken over from pgx.
type pgWire struct {
	watcher
	out []byte // one call's messages, encoded
	// in holds what the server sent; in[r:w] is not parsed yet (a
	// message the server sent unasked, after ReadyForQuery, waits there
	// for the next call).
	in   []byte
	r, w int
}

// watcher shuts a socket when its context is cancelled.
type watcher struct {
	conn net.Conn
	// ctx is the context whose cancellation shuts the socket (stop
	// undoes that): set once per context, not per call.
	ctx  context.Context
	stop func() bool
}

// watch makes ctx's cancellation shut the socket, instead of the
// previous context's.
func (w *watcher) watch(ctx context.Context) {
	if ctx == w.ctx {
		return
	}
	w.unwatch()
	w.ctx = ctx
	if ctx.Done() != nil {
		w.stop = context.AfterFunc(ctx, func() { w.conn.SetDeadline(time.Unix(1, 0)) })
	}
}

// unwatch stops watching; it says whether the watched context had been
// cancelled, which shut the socket.
func (w *watcher) unwatch() (shut bool) {
	if w.stop != nil {
		w.stop()
		w.stop = nil
	}
	return w.ctx != nil && w.ctx.Err() != nil
}

// takeOver returns the connection's wire, hijacking it from pgx on the
// first call.
func (c *pgConn) takeOver(ctx context.Context) (*pgWire, error) {
	if c.wire != nil {
		c.wire.watch(ctx)
		return c.wire, nil
	}
	c.unwatch()
	if err := c.c.PgConn().SyncConn(ctx); err != nil {
		return nil, fmt.Errorf("taking over the connection: %w", err)
	}
	hc, err := c.c.PgConn().Hijack()
	if err != nil {
		return nil, fmt.Errorf("taking over the connection: %w", err)
	}
	c.wire = &pgWire{watcher: watcher{conn: hc.Conn}, in: make([]byte, 8192)}
	c.wire.watch(ctx)
	return c.wire, nil
}

func (w *pgWire) close() error {
	w.unwatch()
	w.conn.Write([]byte{'X', 0, 0, 0, 4}) // Terminate
	return w.conn.Close()
}

// encode appends msgs to w.out.
func (w *pgWire) encode(msgs ...pgproto3.FrontendMessage) error {
	for _, m := range msgs {
		var err error
		if w.out, err = m.Encode(w.out); err != nil {
			w.out = w.out[:0] // the call fails: nothing of it may go with the next
			return fmt.Errorf("encoding %T: %w", m, err)
		}
	}
	return nil
}

// send writes w.out and empties it.
func (w *pgWire) send() error {
	_, err := w.conn.Write(w.out)
	w.out = w.out[:0]
	return err
}

// next returns the next message's type and body, valid until the next
// call.
func (w *pgWire) next() (byte, []byte, error) {
	for {
		if w.w-w.r >= 5 {
			typ, n := w.in[w.r], 1+int(binary.BigEndian.Uint32(w.in[w.r+1:]))
			if n < 5 {
				return 0, nil, fmt.Errorf("reading the answer: message %q of length %d", typ, n-1)
			}
			if w.w-w.r >= n {
				body := w.in[w.r+5 : w.r+n]
				w.r += n
				return typ, body, nil
			}
			if n > len(w.in) {
				w.in = append(w.in, make([]byte, n)...)
			}
		}
		if w.r == w.w {
			w.r, w.w = 0, 0
		} else if w.r > 0 {
			w.w = copy(w.in, w.in[w.r:w.w])
			w.r = 0
		}
		if w.w == len(w.in) {
			w.in = append(w.in, make([]byte, len(w.in))...)
		}
		n, err := w.conn.Read(w.in[w.w:])
		w.w += n
		if err != nil && n == 0 {
			return 0, nil, err
		}
	}
}

// answer reads the server's messages up to ReadyForQuery, handing each
// DataRow's body to row (when not nil, and until an error), and returns
// the first error: err, the server's or row's.
func (w *pgWire) answer(err error, row func(body []byte) error) error {
	for {
		typ, body, rerr := w.next()
		if rerr != nil {
			return errors.Join(err, rerr)
		}
		switch typ {
		case 'D':
			if err == nil && row != nil {
				err = row(body)
			}
		case 'E':
			if err == nil {
				var m pgproto3.ErrorResponse
				if err = m.Decode(body); err == nil {
					err = pgconn.ErrorResponseToPgError(&m)
				}
			}
		case 'Z':
			return err
		}
	}
}

// pgStmt is a statement pgx prepared, then called on the wire with
// binary integers and floats, everything else in text.
type pgStmt struct {
	c      *pgConn
	name   string
	params []uint32 // the parameters' type OIDs
	bind   pgproto3.Bind
	pbuf   []byte
	spans  [][2]int // each parameter's bytes in pbuf; -1: NULL
	row    pgRow
	onRow  func(Row) error // Query's row, for eachRow
	each   func([]byte) error
}

// Prepare prepares query through pgx, before the connection's first fast
// call.
func (c *pgConn) Prepare(ctx context.Context, query string) (Stmt, error) {
	name, sd, err := c.prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	s := &pgStmt{c: c, name: name, params: sd.ParamOIDs}
	s.bind.PreparedStatement = name
	for _, oid := range sd.ParamOIDs {
		s.bind.ParameterFormatCodes = append(s.bind.ParameterFormatCodes, formatCode(oid))
	}
	for _, f := range sd.Fields {
		s.row.oids = append(s.row.oids, f.DataTypeOID)
		s.bind.ResultFormatCodes = append(s.bind.ResultFormatCodes, formatCode(f.DataTypeOID))
	}
	s.each = s.eachRow
	s.row.vals = make([][]byte, len(sd.Fields))
	s.row.last = make([]string, len(sd.Fields))
	return s, nil
}

// prepare prepares query through pgx under a name of the connection's,
// before its first fast call.
func (c *pgConn) prepare(ctx context.Context, query string) (string, *pgconn.StatementDescription, error) {
	if c.wire != nil {
		return "", nil, fmt.Errorf("preparing %q: %w", query, errTakenOver)
	}
	pctx, err := c.watch(ctx)
	if err != nil {
		return "", nil, err
	}
	c.stmts++
	name := "numalab_fast_" + strconv.Itoa(c.stmts)
	sd, err := c.c.Prepare(pctx, name, query)
	if err != nil {
		return "", nil, cancelled(ctx, err)
	}
	return name, sd, nil
}

func formatCode(oid uint32) int16 {
	if binaryOID(oid) {
		return 1
	}
	return 0
}

// Close leaves the statement prepared: it goes with the connection.
func (s *pgStmt) Close() error { return nil }

func (s *pgStmt) Query(ctx context.Context, args []any, row func(Row) error) error {
	if len(args) != len(s.params) {
		return fmt.Errorf("calling %s: %d arguments for %d parameters", s.name, len(args), len(s.params))
	}
	w, err := s.c.takeOver(ctx)
	if err != nil {
		return err
	}
	if err := s.encodeArgs(args); err != nil {
		return err
	}
	if err := w.encode(&s.bind, &pgproto3.Execute{}, &pgproto3.Sync{}); err != nil {
		return err
	}
	if err := w.send(); err != nil {
		return err
	}
	if row == nil {
		return w.answer(nil, nil)
	}
	s.onRow = row
	err = w.answer(nil, s.each)
	s.onRow = nil
	return err
}

// eachRow parses a DataRow and hands it to Query's row.
func (s *pgStmt) eachRow(body []byte) error {
	if err := s.row.parse(body); err != nil {
		return err
	}
	return s.onRow(&s.row)
}

// encodeArgs sets the Bind's parameters.
func (s *pgStmt) encodeArgs(args []any) error {
	b, spans := s.pbuf[:0], s.spans[:0]
	for i, a := range args {
		if a == nil {
			spans = append(spans, [2]int{-1, -1})
			continue
		}
		start := len(b)
		var err error
		if b, err = appendParam(b, s.params[i], a); err != nil {
			return fmt.Errorf("calling %s: argument %d: %w", s.name, i+1, err)
		}
		spans = append(spans, [2]int{start, len(b)})
	}
	s.pbuf, s.spans = b, spans
	s.bind.Parameters = s.bind.Parameters[:0]
	for _, sp := range spans {
		if sp[0] < 0 {
			s.bind.Parameters = append(s.bind.Parameters, nil)
		} else {
			s.bind.Parameters = append(s.bind.Parameters, b[sp[0]:sp[1]:sp[1]])
		}
	}
	return nil
}

// appendParam appends a in the parameter's format: binary for integers
// and floats, text otherwise.
func appendParam(b []byte, oid uint32, a any) ([]byte, error) {
	var i int64
	var f float64
	isInt := true
	switch x := a.(type) {
	case int:
		i = int64(x)
	case int64:
		i = x
	case int32:
		i = int64(x)
	case float64:
		f, isInt = x, false
	case string:
		if binaryOID(oid) {
			return b, fmt.Errorf("text %q for a number", x)
		}
		return append(b, x...), nil
	case []byte:
		if binaryOID(oid) {
			return b, fmt.Errorf("bytes for a number")
		}
		return append(b, x...), nil
	default:
		return b, fmt.Errorf("a %T (want int, int64, float64 or string)", a)
	}
	switch oid {
	case oidInt2:
		return binary.BigEndian.AppendUint16(b, uint16(i)), nil
	case oidInt4:
		return binary.BigEndian.AppendUint32(b, uint32(i)), nil
	case oidInt8:
		return binary.BigEndian.AppendUint64(b, uint64(i)), nil
	case oidFloat4, oidFloat8:
		if isInt {
			f = float64(i)
		}
		if oid == oidFloat4 {
			return binary.BigEndian.AppendUint32(b, math.Float32bits(float32(f))), nil
		}
		return binary.BigEndian.AppendUint64(b, math.Float64bits(f)), nil
	}
	if isInt {
		return strconv.AppendInt(b, i, 10), nil
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64), nil
}

// pgRow is a DataRow read in place.
type pgRow struct {
	oids []uint32
	vals [][]byte // nil: NULL
	last []string // each column's last text
}

var errPGResult = errors.New("unexpected result shape")

func (r *pgRow) parse(body []byte) error {
	if len(body) < 2 || int(binary.BigEndian.Uint16(body)) != len(r.vals) {
		return fmt.Errorf("a row not of %d columns: %w", len(r.vals), errPGResult)
	}
	p := body[2:]
	for i := range r.vals {
		if len(p) < 4 {
			return fmt.Errorf("a row cut short: %w", errPGResult)
		}
		n := int(int32(binary.BigEndian.Uint32(p)))
		p = p[4:]
		if n < 0 {
			r.vals[i] = nil
			continue
		}
		if n > len(p) {
			return fmt.Errorf("a row cut short: %w", errPGResult)
		}
		r.vals[i], p = p[:n:n], p[n:]
	}
	return nil
}

func (r *pgRow) Len() int        { return len(r.vals) }
func (r *pgRow) Null(i int) bool { return r.vals[i] == nil }

func (r *pgRow) Int(i int) int64 {
	b := r.vals[i]
	switch r.oids[i] {
	case oidInt2:
		if len(b) == 2 {
			return int64(int16(binary.BigEndian.Uint16(b)))
		}
	case oidInt4:
		if len(b) == 4 {
			return int64(int32(binary.BigEndian.Uint32(b)))
		}
	case oidInt8:
		if len(b) == 8 {
			return int64(binary.BigEndian.Uint64(b))
		}
	case oidFloat4, oidFloat8:
		return int64(r.Float(i))
	default:
		n, _ := strconv.ParseInt(string(b), 10, 64)
		return n
	}
	return 0
}

func (r *pgRow) Float(i int) float64 {
	b := r.vals[i]
	switch r.oids[i] {
	case oidFloat4:
		if len(b) == 4 {
			return float64(math.Float32frombits(binary.BigEndian.Uint32(b)))
		}
	case oidFloat8:
		if len(b) == 8 {
			return math.Float64frombits(binary.BigEndian.Uint64(b))
		}
	case oidInt2, oidInt4, oidInt8:
		return float64(r.Int(i))
	default:
		f, _ := strconv.ParseFloat(string(b), 64)
		return f
	}
	return 0
}

func (r *pgRow) Text(i int) string {
	b := r.vals[i]
	switch {
	case b == nil:
		return ""
	case r.oids[i] == oidFloat4 || r.oids[i] == oidFloat8:
		return strconv.FormatFloat(r.Float(i), 'g', -1, 64)
	case binaryOID(r.oids[i]):
		return strconv.FormatInt(r.Int(i), 10)
	}
	if string(b) != r.last[i] { // no allocation: the comparison converts in place
		r.last[i] = string(b)
	}
	return r.last[i]
}

// pgRepeat is one statement's call, its messages encoded once.
type pgRepeat struct {
	c   *pgConn
	req []byte
	err error // a Param call's: PostgreSQL's repeats take no parameters
}

// Repeat sends what libpq does under pgbench: prepared, Bind, Describe
// (of the portal), Execute and Sync, the answer in text with its
// RowDescription; simple, a Query.
func (c *pgConn) Repeat(ctx context.Context, query string, prepared bool) (Repeat, error) {
	var msgs []pgproto3.FrontendMessage
	if prepared {
		name, sd, err := c.prepare(ctx, query)
		if err != nil {
			return nil, err
		}
		if len(sd.ParamOIDs) > 0 {
			return nil, fmt.Errorf("preparing %q: PostgreSQL's repeated calls take no parameters", query)
		}
		msgs = []pgproto3.FrontendMessage{&pgproto3.Bind{PreparedStatement: name},
			&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{}}
	} else {
		msgs = []pgproto3.FrontendMessage{&pgproto3.Query{String: query}}
	}
	r := &pgRepeat{c: c}
	for _, m := range msgs {
		var err error
		if r.req, err = m.Encode(r.req); err != nil {
			return nil, fmt.Errorf("encoding %T: %w", m, err)
		}
	}
	return r, nil
}

func (r *pgRepeat) Param(i int, _ int32) {
	r.err = fmt.Errorf("setting parameter %d: PostgreSQL's repeated calls take no parameters", i+1)
}

func (r *pgRepeat) Call(ctx context.Context) error {
	if r.err != nil {
		return r.err
	}
	w, err := r.c.takeOver(ctx)
	if err != nil {
		return err
	}
	if _, err := w.conn.Write(r.req); err != nil {
		return err
	}
	return w.answer(nil, nil)
}
