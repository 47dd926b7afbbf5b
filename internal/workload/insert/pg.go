package insert

// PostgreSQL's loader. The stream's connection is opened by the engine
// (startup, settings, its backend pinned to the stream's CPUs, a socket
// that waits in the kernel on the stream's own thread), which prepares
// the INSERTs; a batch is then one round trip through the engine's fast
// paths (engine/wire_pg.go):
//
//   - copy: COPY ... FROM STDIN, the batch's rows in text format
//     (engine.Copier);
//   - insert: a prepared multi-row INSERT per chunkRows rows, sent
//     together and committed together (engine.Batcher).

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/numalab/numalab/internal/engine"
)

type pgLoader struct {
	cols   []int // the columns sent (loadColumns)
	c      engine.Conn
	method string
	table  string              // schema-qualified and quoted
	stmts  map[int]engine.Stmt // rows per INSERT → its prepared statement
	buf    []byte              // COPY's text, or the INSERT's parameters
	batch  []engine.BatchExec
	args   [][]byte
}

func openPGLoader(ctx context.Context, eng engine.Engine, method string, batch int, cols []int) (*pgLoader, error) {
	c, err := eng.Connect(ctx)
	if err != nil {
		return nil, err
	}
	l := &pgLoader{cols: cols, c: c, method: method, stmts: map[int]engine.Stmt{},
		table: pgx.Identifier{eng.Schema(), Table}.Sanitize()}
	_, copies := c.(engine.Copier)
	_, batches := c.(engine.Batcher)
	if !copies || !batches {
		c.Close()
		return nil, errors.New("opening a loader: the engine's connection has no COPY or batched INSERTs")
	}
	if method == "insert" {
		for _, n := range []int{min(batch, chunkRows), batch % chunkRows} {
			if _, ok := l.stmts[n]; ok || n == 0 {
				continue
			}
			st, err := engine.Prepare(ctx, c, multiRowSQL(l.table, n, true, cols))
			if err != nil {
				c.Close()
				return nil, fmt.Errorf("preparing the %d-row INSERT: %w", n, err)
			}
			l.stmts[n] = st
		}
	}
	return l, nil
}

func (l *pgLoader) load(ctx context.Context, r *rows) (time.Duration, error) {
	if l.method == "copy" {
		return 0, l.copy(ctx, r)
	}
	return 0, l.insert(ctx, r)
}

// appendText appends row i's value of column j in PostgreSQL's text form.
func appendText(b []byte, r *rows, i, j int) []byte {
	switch j {
	case 0:
		return strconv.AppendInt(b, r.id[i], 10)
	case 1:
		return strconv.AppendInt(b, r.stream, 10)
	case 2:
		return strconv.AppendInt(b, r.k[i], 10)
	case 3:
		return strconv.AppendFloat(b, r.v[i], 'g', -1, 64)
	}
	return append(b, r.pad[i]...)
}

func (l *pgLoader) copy(ctx context.Context, r *rows) error {
	b := l.buf[:0]
	for i := range r.n() {
		for x, j := range l.cols {
			if x > 0 {
				b = append(b, '\t')
			}
			b = appendText(b, r, i, j)
		}
		b = append(b, '\n')
	}
	l.buf = b
	return l.c.(engine.Copier).CopyText(ctx, l.table, columnNames(l.cols), b)
}

// insert sends the batch's INSERTs of chunkRows rows each in one round
// trip, committed together.
func (l *pgLoader) insert(ctx context.Context, r *rows) error {
	b, args, batch := l.buf[:0], l.args[:0], l.batch[:0]
	for a := 0; a < r.n(); a += chunkRows {
		end, first := min(a+chunkRows, r.n()), len(args)
		for i := a; i < end; i++ {
			for _, j := range l.cols {
				start := len(b)
				b = appendText(b, r, i, j)
				args = append(args, b[start:len(b):len(b)])
			}
		}
		batch = append(batch, engine.BatchExec{Stmt: l.stmts[end-a], Args: args[first:len(args):len(args)]})
	}
	// An argument points into b's array of its time: b may have grown
	// since, and the earlier arrays live on until the batch is sent.
	l.buf, l.args, l.batch = b, args, batch
	return l.c.(engine.Batcher).ExecBatch(ctx, batch)
}

func (l *pgLoader) pid() int     { return l.c.BackendPID() }
func (l *pgLoader) close() error { return l.c.Close() }
