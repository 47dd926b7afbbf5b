package engine

// Fast paths: optional interfaces of a stream's Conn, for a workload's hot
// path where Conn.Query's per-call cost (a statement parsed per call,
// values boxed and normalised) would matter. A workload asks for one as
// database/sql asks a driver's connection for QueryerContext:
//
//	if p, ok := c.(engine.Preparer); ok { st, err := p.Prepare(ctx, q) ... }
//
// and falls back to Conn.Exec and Conn.Query when the engine lacks it. No
// driver handle leaves the engine: the wire protocols (PostgreSQL's after
// pgx has set the connection up, MariaDB's packets) are spoken here
// (wire_pg.go, wire_mariadb.go).
//
// Which engine has which:
//
//	           Preparer  Repeater  Batcher  Copier  Appender
//	sqlite     yes       -         -        -       -
//	duckdb     yes       -         -        -       yes
//	postgres   yes       yes       yes      yes     -
//	mariadb    yes(1)    yes       -        -       -
//
// (1) not on a connection opened asking the server to cache prepared
// statements' metadata (Options.MariaDBCacheMetadata), whether or not
// the server agreed: the driver's prepared statements cannot read those
// answers.
//
// On PostgreSQL the first call of a fast path takes the connection over
// from pgx: prepare every statement first; Conn.Exec and Conn.Query refuse
// after that.

import "context"

// Preparer is a Conn that prepares statements once and runs them with
// their rows read in place.
type Preparer interface {
	Prepare(ctx context.Context, query string) (Stmt, error)
}

// Stmt is a prepared statement of one connection.
type Stmt interface {
	// Query runs the statement with args (int, int64, float64, string or
	// nil) and calls row once per result row (row may be nil: the rows
	// are read and dropped). The Row is valid until row returns. A
	// cancelled ctx interrupts a server's call by shutting its socket
	// (the connection is then unusable); SQLite and DuckDB run with
	// whatever ctx they are given (pass context.Background() where a
	// cancellable one costs the driver a goroutine per call).
	Query(ctx context.Context, args []any, row func(Row) error) error
	Close() error
}

// Row is one result row read in place. A NULL reads as 0 or "".
type Row interface {
	// Len is the number of columns.
	Len() int
	Null(i int) bool
	// Int is an integer column's value (a float's truncated).
	Int(i int) int64
	// Float is a floating-point (or integer) column's value.
	Float(i int) float64
	// Text is a column's text; on PostgreSQL and SQLite a column's
	// previous text when it is the same, so that repeated values cost
	// nothing.
	Text(i int) string
}

// Repeater is a Conn that sends one statement again and again as the
// servers' own benchmark clients send it (libpq under pgbench, libmysql
// under sysbench): the command encoded once, one write and one read per
// call, the answer walked in place and its rows dropped.
type Repeater interface {
	// Repeat prepares query (prepared: server-side prepared and executed
	// as pgbench -M prepared and sysbench do; else sent as text each
	// call, pgbench -M simple). Its parameters are integers, set with
	// Repeat.Param (MariaDB; PostgreSQL's take none).
	Repeat(ctx context.Context, query string, prepared bool) (Repeat, error)
}

// Repeat is one repeated statement.
type Repeat interface {
	// Call makes one call and returns the first error the server reported.
	// A cancelled ctx interrupts it by shutting the socket (the
	// connection is then unusable); the connection watches each context
	// once, not per call.
	Call(ctx context.Context) error
	// Param sets parameter i (from 0) of the following calls.
	Param(i int, v int32)
}

// Batcher is a Conn that executes several prepared statements in one
// round trip and commits them together.
type Batcher interface {
	// ExecBatch executes each of batch in order, in one transaction (one
	// Sync on PostgreSQL), and returns the first error.
	ExecBatch(ctx context.Context, batch []BatchExec) error
}

// BatchExec is one execution of a batch: a statement from the same
// connection's Prepare and its arguments in text form (a number as
// strconv writes it). Args may point into memory the caller reuses after
// ExecBatch returns.
type BatchExec struct {
	Stmt Stmt
	Args [][]byte
}

// Copier is a Conn that loads rows in bulk in one round trip.
type Copier interface {
	// CopyText loads data into table's columns (table as it is written in
	// SQL, qualified and quoted as needed): rows in PostgreSQL's COPY text
	// format, columns separated by tabs, each row ended by a newline.
	CopyText(ctx context.Context, table string, columns []string, data []byte) error
}

// Appender is a Conn that appends rows to a table through the engine's
// bulk path, on the stream's own connection.
type Appender interface {
	// AppendRows appends n rows to table's columns; row(i, vals) fills
	// row i's values (int64, float64, string, []byte, time.Time or nil)
	// into vals. The rows are in the table when it returns.
	AppendRows(ctx context.Context, table string, columns []string, n int, row func(i int, vals []any)) error
}
