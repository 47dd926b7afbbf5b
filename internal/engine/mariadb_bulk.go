package engine

// MariaDB's bulk path: prepared multi-row INSERTs, one transaction per
// Flush, on a connection of its own.

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/numalab/numalab/internal/result"
)

// Bulk loads with prepared multi-row INSERTs (myBulkRows rows each, fewer
// when the columns are many), one transaction per Flush, on a connection
// of its own.
func (e *myEngine) Bulk(ctx context.Context, table string, columns []string) (Bulk, error) {
	if len(columns) == 0 {
		return nil, fmt.Errorf("loading %s: no columns", table)
	}
	c, err := e.connect(ctx, e.cfg, nil)
	if err != nil {
		return nil, fmt.Errorf("loading %s: connecting: %s", table, result.Redact(err.Error()))
	}
	per := max(1, min(myBulkRows, 65535/len(columns)))
	quoted := make([]string, len(columns))
	for i, col := range columns {
		quoted[i] = quoteMy(col)
	}
	return &myBulk{ctx: ctx, c: c, table: quoteMy(table),
		head: fmt.Sprintf("INSERT INTO %s (%s) VALUES ", quoteMy(table), strings.Join(quoted, ", ")),
		ncol: len(columns), per: per, buf: make([]any, 0, myFlushRows*len(columns))}, nil
}

// myBulkRows is the most rows of one INSERT; myFlushRows of one Flush.
const (
	myBulkRows  = 1000
	myFlushRows = 16384
)

type myBulk struct {
	ctx   context.Context
	c     *myOne
	table string
	head  string
	ncol  int
	per   int
	full  *sql.Stmt // the INSERT of per rows, prepared at first use
	buf   []any
	rows  int64
}

func (b *myBulk) Append(vals ...any) error {
	if len(vals) != b.ncol {
		return fmt.Errorf("loading %s: %d values for %d columns", b.table, len(vals), b.ncol)
	}
	b.buf = append(b.buf, vals...)
	if len(b.buf) >= myFlushRows*b.ncol {
		return b.Flush()
	}
	return nil
}

// insert returns the INSERT of n rows.
func (b *myBulk) insert(n int) string {
	row := "(" + strings.Repeat("?, ", b.ncol-1) + "?)"
	return b.head + strings.Repeat(row+", ", n-1) + row
}

func (b *myBulk) Flush() error {
	if len(b.buf) == 0 {
		return nil
	}
	err := b.flush()
	clear(b.buf)
	b.buf = b.buf[:0]
	if err != nil {
		return fmt.Errorf("loading %s: %w", b.table, err)
	}
	return nil
}

func (b *myBulk) flush() error {
	tx, err := b.c.BeginTx(b.ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if b.full == nil {
		if b.full, err = b.c.PrepareContext(b.ctx, b.insert(b.per)); err != nil {
			return err
		}
	}
	full := tx.StmtContext(b.ctx, b.full)
	rows := len(b.buf) / b.ncol
	i := 0
	for ; rows-i >= b.per; i += b.per {
		if _, err := full.ExecContext(b.ctx, b.buf[i*b.ncol:(i+b.per)*b.ncol]...); err != nil {
			return err
		}
	}
	if i < rows {
		if _, err := tx.ExecContext(b.ctx, b.insert(rows-i), b.buf[i*b.ncol:]...); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	b.rows += int64(rows)
	return nil
}

func (b *myBulk) Close() error {
	err := b.Flush()
	if b.full != nil {
		b.full.Close()
	}
	if cerr := b.c.Close(); err == nil {
		err = cerr
	}
	return err
}

func (b *myBulk) Rows() int64 { return b.rows }
