package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// encode is the wire form of backend messages.
func encode(t *testing.T, msgs ...pgproto3.BackendMessage) []byte {
	t.Helper()
	var b []byte
	for _, m := range msgs {
		var err error
		if b, err = m.Encode(b); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// TestPGWireReadsAnswersInPieces repeats a call against a server on a
// real unix socket that answers each call in pieces of 3 bytes, with an
// error on the second call and a notice it sends unasked after the third
// call's ReadyForQuery: every call ends at its ReadyForQuery, the second
// fails with the server's error, the notice waits for the fourth, and the
// small read buffer grows.
func TestPGWireReadsAnswersInPieces(t *testing.T) {
	l, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	req := []byte("Q\x00\x00\x00\x0dSELECT 1\x00")
	ok := encode(t, &pgproto3.RowDescription{
		Fields: []pgproto3.FieldDescription{{Name: []byte("?column?"), DataTypeOID: 23, DataTypeSize: 4}}},
		&pgproto3.DataRow{Values: [][]byte{[]byte("1")}}, &pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")},
		&pgproto3.ReadyForQuery{TxStatus: 'I'})
	bad := encode(t, &pgproto3.ErrorResponse{Severity: "ERROR", Code: "42601", Message: "syntax error"},
		&pgproto3.ReadyForQuery{TxStatus: 'I'})
	notice := encode(t, &pgproto3.NoticeResponse{Severity: "NOTICE", Code: "00000", Message: "unasked"})
	answers := [][]byte{ok, bad, append(ok[:len(ok):len(ok)], notice...), ok}
	served := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			served <- err
			return
		}
		defer c.Close()
		for _, a := range answers {
			got := make([]byte, len(req))
			if _, err := c.Read(got); err != nil || string(got) != string(req) {
				served <- errors.Join(err, errors.New("request "+string(got)))
				return
			}
			for i := 0; i < len(a); i += 3 {
				c.Write(a[i:min(i+3, len(a))])
				time.Sleep(time.Millisecond)
			}
		}
		served <- nil
	}()
	conn, err := net.Dial("unix", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	w := &pgWire{watcher: watcher{conn: conn}, in: make([]byte, 8)}
	defer w.close()
	s := &pgRepeat{c: &pgConn{wire: w}, req: req}
	ctx := context.Background()
	for i := range answers {
		err := s.Call(ctx)
		var pgErr *pgconn.PgError
		switch {
		case i == 1 && (!errors.As(err, &pgErr) || pgErr.Code != "42601"):
			t.Errorf("call %d: %v; want the server's syntax error", i, err)
		case i != 1 && err != nil:
			t.Errorf("call %d: %v", i, err)
		}
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if w.r != w.w || len(w.in) <= 8 {
		t.Errorf("after the calls %d bytes unread, buffer %d bytes; want none unread and a grown buffer", w.w-w.r, len(w.in))
	}
}

// TestPGFastPaths prepares statements, then calls them on the wire: rows
// of integers, floats, text and NULLs read in place, an error the server
// reports, a batch committed together, a COPY, and the plain interface
// refused once the connection speaks the protocol itself.
func TestPGFastPaths(t *testing.T) {
	s := pg.Server(t)
	ctx := context.Background()
	eng, err := Open(ctx, "postgres", Options{DSN: s.DSN(), Schema: "numalab_fast_test"})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	for _, q := range []string{"DROP TABLE IF EXISTS fast", "CREATE TABLE fast (a bigint, b double precision, c text)"} {
		if _, err := eng.DB().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	c, err := eng.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sel, err := c.(Preparer).Prepare(ctx, "SELECT $1::int4 + 1, $2::float8 / 2, $3::text || 'x', NULL::int4, 5::int2")
	if err != nil {
		t.Fatal(err)
	}
	ins, err := c.(Preparer).Prepare(ctx, "INSERT INTO fast VALUES ($1, $2, $3)")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = sel.Query(ctx, []any{41, 3.0, "ab"}, func(r Row) error {
		got = append(got, fmt.Sprintf("%v %v %v %v %v %v %v %v",
			r.Len(), r.Int(0), r.Float(1), r.Text(2), r.Null(3), r.Int(3), r.Int(4), r.Text(0)))
		return nil
	})
	if want := "5 42 1.5 abx true 0 5 42"; err != nil || len(got) != 1 || got[0] != want {
		t.Errorf("a prepared call: %q, %v; want [%q]", got, err, want)
	}
	if err := sel.Query(ctx, []any{1, 1.0, "x", 4}, nil); err == nil {
		t.Error("four arguments for three parameters: no error")
	}
	var pgErr *pgconn.PgError
	if err := sel.Query(ctx, []any{math.MaxInt32, 1.0, "x"}, nil); !errors.As(err, &pgErr) || pgErr.Code != "22003" {
		t.Errorf("an integer overflow: %v; want the server's 22003", err)
	}
	batch := []BatchExec{{Stmt: ins, Args: [][]byte{[]byte("1"), []byte("0.5"), []byte("one")}},
		{Stmt: ins, Args: [][]byte{[]byte("2"), []byte("1.5"), []byte("two")}}}
	if err := c.(Batcher).ExecBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := c.(Copier).CopyText(ctx, "fast", []string{"a", "b", "c"},
		[]byte("3\t2.5\tthree\n4\t\\N\tfour\n")); err != nil {
		t.Fatal(err)
	}
	if err := c.(Copier).CopyText(ctx, "fast", []string{"a"}, []byte("not a number\n")); !errors.As(err, &pgErr) {
		t.Errorf("a bad COPY: %v; want the server's error", err)
	}
	var n, sum int64
	if err := eng.DB().QueryRowContext(ctx, "SELECT count(*), sum(a) FROM fast").Scan(&n, &sum); err != nil ||
		n != 4 || sum != 10 {
		t.Errorf("after the batch and the COPY: %d rows summing %d (%v); want 4 summing 10", n, sum, err)
	}
	if err := c.Exec(ctx, "SELECT 1"); !errors.Is(err, errTakenOver) {
		t.Errorf("Exec after a fast call: %v; want it refused", err)
	}
	if _, err := c.(Preparer).Prepare(ctx, "SELECT 1"); !errors.Is(err, errTakenOver) {
		t.Errorf("Prepare after a fast call: %v; want it refused", err)
	}
}
