package engine

// PostgreSQL's bulk fast paths (fast.go's Batcher and Copier) on the wire
// taken over from pgx (wire_pg.go): a batch or a COPY in one round trip.
// pgx's own CopyFrom reads the socket from a second goroutine while the
// first writes; on the engine's blocking socket each of those waits holds
// a P, and a batch of 200 rows took 100 ms instead of one.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

var (
	_ Batcher = (*pgConn)(nil)
	_ Copier  = (*pgConn)(nil)
)

// ExecBatch sends a Bind and an Execute per execution, its arguments in
// text, then one Sync, which commits them together.
func (c *pgConn) ExecBatch(ctx context.Context, batch []BatchExec) error {
	w, err := c.takeOver(ctx)
	if err != nil {
		return err
	}
	var bind pgproto3.Bind
	for _, e := range batch {
		s, ok := e.Stmt.(*pgStmt)
		if !ok || s.c != c {
			w.out = w.out[:0]
			return errors.New("executing a batch: a statement not prepared on this connection")
		}
		bind.PreparedStatement, bind.Parameters = s.name, e.Args
		if err := w.encode(&bind, &pgproto3.Execute{}); err != nil {
			w.out = w.out[:0]
			return err
		}
	}
	if err := w.encode(&pgproto3.Sync{}); err != nil {
		return err
	}
	if err := w.send(); err != nil {
		return err
	}
	return w.answer(nil, nil)
}

// copyChunk is the most bytes of one CopyData message.
const copyChunk = 256 << 10

// CopyText runs COPY ... FROM STDIN: the data in CopyData messages of at
// most copyChunk bytes, then CopyDone.
func (c *pgConn) CopyText(ctx context.Context, table string, columns []string, data []byte) error {
	w, err := c.takeOver(ctx)
	if err != nil {
		return err
	}
	q := fmt.Sprintf("COPY %s (%s) FROM STDIN", table, strings.Join(columns, ", "))
	if err := w.encode(&pgproto3.Query{String: q}); err != nil {
		return err
	}
	if err := w.send(); err != nil {
		return err
	}
	for {
		typ, body, err := w.next()
		if err != nil {
			return err
		}
		if typ == 'G' { // CopyInResponse
			break
		}
		if typ == 'E' {
			var m pgproto3.ErrorResponse
			if err = m.Decode(body); err == nil {
				err = pgconn.ErrorResponseToPgError(&m)
			}
			return w.answer(err, nil)
		}
	}
	for len(data) > 0 {
		n := min(len(data), copyChunk)
		if err := w.encode(&pgproto3.CopyData{Data: data[:n]}); err != nil {
			return err
		}
		data = data[n:]
	}
	if err := w.encode(&pgproto3.CopyDone{}); err != nil {
		return err
	}
	if err := w.send(); err != nil {
		return err
	}
	return w.answer(nil, nil)
}
