package engine

// Prepared statements of the engines whose drivers are database/sql's
// (DuckDB's and MariaDB's through database/sql on the stream's one
// connection), their rows read as the driver gives them. SQLite's run on
// its C API (sqlite_stmt.go).

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/duckdb/duckdb-go/v2"
)

var (
	_ Preparer = (*sqliteConn)(nil)
	_ Preparer = (*duckConn)(nil)
	_ Preparer = (*myConn)(nil)
	_ Appender = (*duckConn)(nil)
)

// valuesRow is a row of Conn.Query's values.
type valuesRow struct{ v []any }

func (r *valuesRow) Len() int        { return len(r.v) }
func (r *valuesRow) Null(i int) bool { return r.v[i] == nil }

func (r *valuesRow) Int(i int) int64     { return intOf(r.v[i]) }
func (r *valuesRow) Float(i int) float64 { return floatOf(r.v[i]) }
func (r *valuesRow) Text(i int) string   { return textOf(r.v[i]) }

// intOf, floatOf and textOf read a driver's value as Row does.
func intOf(v any) int64 {
	switch x := normalise(v).(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

func floatOf(v any) float64 {
	switch x := normalise(v).(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case string:
		f, _ := strconv.ParseFloat(x, 64)
		return f
	}
	return 0
}

func textOf(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	}
	return fmt.Sprint(normalise(v))
}

// sqlStmt is a database/sql statement prepared on a stream's connection.
type sqlStmt struct {
	st   *sql.Stmt
	row  scannedRow
	ptrs []any // Scan's targets, &row.v[i]; nil before the first query
	call func(ctx context.Context) (context.Context, func())
}

// scanned is one column's value as the driver gave it, bytes copied into
// memory of its own that the next row reuses: database/sql would clone
// them (a *any target), or convert them (*string), at every row.
type scanned struct {
	v       any // the value, unless it is bytes
	b       []byte
	isBytes bool
}

func (s *scanned) Scan(src any) error {
	b, ok := src.([]byte)
	s.isBytes, s.v = ok, nil
	if ok {
		s.b = append(s.b[:0], b...)
	} else {
		s.v = src
	}
	return nil
}

// scannedRow is a row of scanned columns.
type scannedRow struct{ v []scanned }

func (r *scannedRow) Len() int        { return len(r.v) }
func (r *scannedRow) Null(i int) bool { return !r.v[i].isBytes && r.v[i].v == nil }

func (r *scannedRow) Int(i int) int64 {
	if r.v[i].isBytes {
		b := r.v[i].b
		if n, err := strconv.ParseInt(string(b), 10, 64); err == nil {
			return n
		}
		f, _ := strconv.ParseFloat(string(b), 64)
		return int64(f)
	}
	return intOf(r.v[i].v)
}

func (r *scannedRow) Float(i int) float64 {
	if r.v[i].isBytes {
		f, _ := strconv.ParseFloat(string(r.v[i].b), 64)
		return f
	}
	return floatOf(r.v[i].v)
}

func (r *scannedRow) Text(i int) string {
	if r.v[i].isBytes {
		return string(r.v[i].b)
	}
	return textOf(r.v[i].v)
}

func (c *duckConn) Prepare(ctx context.Context, query string) (Stmt, error) {
	st, err := c.c.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	call := func(ctx context.Context) (context.Context, func()) { return c.e.callContext(ctx, query) }
	return &sqlStmt{st: st, call: call}, nil
}

// Prepare prepares query with the driver (COM_STMT_PREPARE; executions
// send binary parameters and read binary rows).
func (c *myConn) Prepare(ctx context.Context, query string) (Stmt, error) {
	if c.cache != nil {
		return nil, errors.New("preparing on mariadb: this connection caches prepared statements' metadata " +
			"(Options.MariaDBCacheMetadata), which the driver's prepared statements cannot read")
	}
	st, err := c.one.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &sqlStmt{st: st}, nil
}

func (s *sqlStmt) Query(ctx context.Context, args []any, row func(Row) error) error {
	if s.call != nil {
		var done func()
		ctx, done = s.call(ctx)
		defer done()
	}
	rows, err := s.st.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if s.ptrs == nil {
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		s.row.v = make([]scanned, len(cols))
		s.ptrs = make([]any, len(cols))
		for i := range s.ptrs {
			s.ptrs[i] = &s.row.v[i]
		}
	}
	for rows.Next() {
		if err := rows.Scan(s.ptrs...); err != nil {
			return err
		}
		if row != nil {
			if err := row(&s.row); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return rows.Close()
}

func (s *sqlStmt) Close() error { return s.st.Close() }

// AppendRows appends through an Appender of its own on the stream's
// connection, closed (flushed into the table) before it returns. Columns
// left out take their defaults.
func (c *duckConn) AppendRows(_ context.Context, table string, columns []string, n int,
	row func(i int, vals []any)) error {
	vals := make([]any, len(columns))
	dv := make([]driver.Value, len(columns))
	return c.c.Raw(func(dc any) error {
		a, err := duckdb.NewAppenderWithColumns(dc.(driver.Conn), "", "", table, columns)
		if err != nil {
			return err
		}
		for i := range n {
			row(i, vals)
			for j, v := range vals {
				if x, ok := v.(int); ok {
					v = int64(x)
				}
				dv[j] = v
			}
			if err := a.AppendRow(dv...); err != nil {
				a.Close()
				return err
			}
		}
		return a.Close()
	})
}

// Prepare is c's Prepare when c is a Preparer, else a statement that runs
// query through c.Query at each call: a workload that asks for prepared
// statements runs on any engine.
func Prepare(ctx context.Context, c Conn, query string) (Stmt, error) {
	if p, ok := c.(Preparer); ok {
		return p.Prepare(ctx, query)
	}
	return &plainStmt{c: c, query: query}, nil
}

// plainStmt runs its query through Conn.Query.
type plainStmt struct {
	c     Conn
	query string
	row   valuesRow
}

func (s *plainStmt) Query(ctx context.Context, args []any, row func(Row) error) error {
	return s.c.Query(ctx, s.query, args, func(v []any) error {
		if row == nil {
			return nil
		}
		s.row.v = v
		return row(&s.row)
	})
}

func (s *plainStmt) Close() error { return nil }
