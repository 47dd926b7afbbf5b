package engine

import (
	"context"
	"errors"
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
	ok := encode(t, &pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{{Name: []byte("?column?"), DataTypeOID: 23, DataTypeSize: 4}}},
		&pgproto3.DataRow{Values: [][]byte{[]byte("1")}}, &pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")}, &pgproto3.ReadyForQuery{TxStatus: 'I'})
	bad := encode(t, &pgproto3.ErrorResponse{Severity: "ERROR", Code: "42601", Message: "syntax error"}, &pgproto3.ReadyForQuery{TxStatus: 'I'})
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
