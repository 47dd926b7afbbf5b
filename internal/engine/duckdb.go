package engine

// DuckDB, in-process. One database handle (a duckdb-go Connector) per
// Engine; every stream's connection comes from it, so all streams share one
// buffer manager and one thread pool. SetDOP sets that pool's size (SET
// threads): DuckDB's parallelism belongs to the database, not to a
// connection. A file opened without Options.Create is opened with
// access_mode=READ_ONLY; a new one (Create) is written with the Appender.
// No extension is installed or loaded.

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/duckdb/duckdb-go/v2"
)

type duckEngine struct {
	path    string
	created bool
	conn    *duckdb.Connector
	db      *sql.DB
	release func(stuck string) // the file's entry in the registry (duckhold.go)

	mu  sync.Mutex
	dop int // 0 until SetDOP
	// interrupted, when not empty, says which parallel query was
	// interrupted: DuckDB may hold the file after Close.
	interrupted string
}

var _ Engine = (*duckEngine)(nil)

func openDuckDB(ctx context.Context, opt Options) (*duckEngine, error) {
	if opt.Path == "" {
		return nil, errors.New("opening duckdb: no database file given (name one, e.g. numalab.duckdb)")
	}
	dsn := opt.Path
	if opt.Create {
		f, err := os.OpenFile(opt.Path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			if errors.Is(err, os.ErrExist) {
				return nil, fmt.Errorf("opening duckdb: creating %s: file exists (remove it or choose another file)", opt.Path)
			}
			return nil, fmt.Errorf("opening duckdb: creating %s: %w", opt.Path, err)
		}
		f.Close()
		// DuckDB refuses an existing empty file as a database: it makes its
		// own. The exclusive create above only claims the name.
		os.Remove(opt.Path)
	} else {
		if _, err := os.Stat(opt.Path); err != nil {
			return nil, fmt.Errorf("opening duckdb: %w (load it first)", err)
		}
		if !opt.Write {
			dsn += "?access_mode=READ_ONLY"
		}
	}
	release, err := holdDuckFile(opt.Path)
	if err != nil {
		if opt.Create {
			os.Remove(opt.Path)
		}
		return nil, err
	}
	c, err := duckdb.NewConnector(dsn, nil)
	if err != nil {
		release("")
		if opt.Create {
			os.Remove(opt.Path)
		}
		return nil, fmt.Errorf("opening duckdb %s: %w", opt.Path, err)
	}
	e := &duckEngine{path: opt.Path, created: opt.Create, conn: c, db: sql.OpenDB(c), release: release}
	if err := e.db.PingContext(ctx); err != nil {
		e.Discard()
		return nil, fmt.Errorf("opening duckdb %s: %w", opt.Path, err)
	}
	return e, nil
}

// OpenDuckDBReadOnly opens the DuckDB file at path read-only for a tool
// that reads it (inspect), through the registry of open files; closeDB
// closes it.
func OpenDuckDBReadOnly(path string) (db *sql.DB, closeDB func() error, err error) {
	release, err := holdDuckFile(path)
	if err != nil {
		return nil, nil, err
	}
	c, err := duckdb.NewConnector(path+"?access_mode=READ_ONLY", nil)
	if err != nil {
		release("")
		return nil, nil, err
	}
	db = sql.OpenDB(c)
	return db, func() error {
		inUse := db.Stats().InUse
		err := db.Close()
		stuck := ""
		if inUse > 0 {
			stuck = fmt.Sprintf("closed with %d connections still in use", inUse)
		}
		release(stuck)
		return err
	}, nil
}

func (e *duckEngine) Name() string   { return "duckdb" }
func (e *duckEngine) DB() *sql.DB    { return e.db }
func (e *duckEngine) Path() string   { return e.path }
func (e *duckEngine) Schema() string { return "" }

// Bulk appends through DuckDB's Appender on a connection of its own; columns
// must be all the table's columns, in order.
func (e *duckEngine) Bulk(ctx context.Context, table string, columns []string) (Bulk, error) {
	if !e.created {
		return nil, fmt.Errorf("loading %s into %s: the file is open read-only (load into a new file)", table, e.path)
	}
	var n int
	if err := e.db.QueryRowContext(ctx, "SELECT count(*) FROM duckdb_columns() WHERE table_name = ? "+
		"AND schema_name = current_schema() AND database_name = current_database()", table).Scan(&n); err != nil {
		return nil, fmt.Errorf("loading %s: %w", table, err)
	}
	if n != len(columns) {
		return nil, fmt.Errorf("loading %s: the Appender fills all %d columns, %d given", table, n, len(columns))
	}
	dc, err := e.conn.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", table, err)
	}
	a, err := duckdb.NewAppenderFromConn(dc, "", table)
	if err != nil {
		dc.Close()
		return nil, fmt.Errorf("loading %s: %w", table, err)
	}
	return &duckBulk{table: table, dc: dc, a: a, ncol: len(columns), row: make([]driver.Value, len(columns))}, nil
}

type duckBulk struct {
	table string
	dc    driver.Conn
	a     *duckdb.Appender
	ncol  int
	row   []driver.Value
	rows  int64
}

func (b *duckBulk) Append(vals ...any) error {
	if len(vals) != b.ncol {
		return fmt.Errorf("loading %s: %d values for %d columns", b.table, len(vals), b.ncol)
	}
	for i, v := range vals {
		if x, ok := v.(int); ok {
			v = int64(x)
		}
		b.row[i] = v
	}
	if err := b.a.AppendRow(b.row...); err != nil {
		return fmt.Errorf("loading %s: %w", b.table, err)
	}
	b.rows++
	if b.rows%duckFlushRows == 0 {
		if err := b.a.Flush(); err != nil {
			return fmt.Errorf("loading %s: %w", b.table, err)
		}
	}
	return nil
}

// duckFlushRows is how often the Appender's buffered chunks go to the
// table: 8 row groups (a flush per caller's Flush would cut row groups
// short, costing a third of the load rate and a fifth more file).
const duckFlushRows = 8 * 122880

// Flush has nothing to do: the Appender copies values (strings included)
// as they are appended, and writes its chunks every duckFlushRows rows
// and at Close.
func (b *duckBulk) Flush() error { return nil }

func (b *duckBulk) Close() error {
	err := b.a.Close()
	if cerr := b.dc.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("loading %s: %w", b.table, err)
	}
	return nil
}

func (b *duckBulk) Rows() int64 { return b.rows }

// Connect takes a connection of the shared database for one stream.
func (e *duckEngine) Connect(ctx context.Context) (Conn, error) {
	c, err := e.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("connecting to duckdb %s: %w", e.path, err)
	}
	return &duckConn{c: c, e: e}, nil
}

// callContext is the context of one stream call: cancelled
// duckInterruptGrace after ctx is (DuckDB then interrupts the query), not
// at once, so that a query in flight when a cell's window closes ends by
// itself. An interrupt at more than one thread marks the engine: DuckDB
// may then hold the file after Close (duckhold.go). done ends the call.
func (e *duckEngine) callContext(ctx context.Context, query string) (_ context.Context, done func()) {
	if ctx.Done() == nil || ctx.Err() != nil {
		return ctx, func() {}
	}
	qctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var mu sync.Mutex
	var late *time.Timer
	finished := false
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if finished {
			return
		}
		late = time.AfterFunc(duckInterruptGrace, func() {
			e.mu.Lock()
			if threads := cmp.Or(e.dop, runtime.NumCPU()); threads > 1 && e.interrupted == "" {
				e.interrupted = fmt.Sprintf("a query at %d threads was interrupted %v after it was cancelled (%.40q)",
					threads, duckInterruptGrace, query)
			}
			e.mu.Unlock()
			cancel()
		})
	})
	return qctx, func() {
		stop()
		mu.Lock()
		finished = true
		if late != nil {
			late.Stop()
		}
		mu.Unlock()
		cancel()
	}
}

// SetDOP sets DuckDB's thread pool to dop threads.
func (e *duckEngine) SetDOP(ctx context.Context, dop int) error {
	if err := checkDOP("duckdb", dop); err != nil {
		return err
	}
	if _, err := e.db.ExecContext(ctx, "SET threads = "+strconv.Itoa(dop)); err != nil {
		return fmt.Errorf("setting duckdb DOP: %w", err)
	}
	e.mu.Lock()
	e.dop = dop
	e.mu.Unlock()
	return nil
}

// duckSettings are the DuckDB settings Describe records.
var duckSettings = []string{"threads", "external_threads", "memory_limit", "max_memory", "access_mode",
	"preserve_insertion_order", "default_block_size", "temp_directory", "checkpoint_threshold", "enable_object_cache"}

func (e *duckEngine) Describe(ctx context.Context) (Info, error) {
	in := Info{Engine: "duckdb", Where: e.path, Settings: map[string]string{}}
	if err := e.db.QueryRowContext(ctx, "SELECT version()").Scan(&in.Version); err != nil {
		return in, fmt.Errorf("describing duckdb: %w", err)
	}
	rows, err := e.db.QueryContext(ctx, "SELECT name, coalesce(value, '') FROM duckdb_settings() WHERE name IN ('"+
		strings.Join(duckSettings, "','")+"')")
	if err != nil {
		return in, fmt.Errorf("describing duckdb: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return in, fmt.Errorf("describing duckdb: %w", err)
		}
		in.Settings[k] = v
	}
	if err := rows.Err(); err != nil {
		return in, fmt.Errorf("describing duckdb: %w", err)
	}
	in.Settings["connections"] = "one per stream, from one shared database handle"
	return in, nil
}

// Explain renders DuckDB's JSON physical plan as an indented tree of
// operator names and their details, without cardinality estimates.
func (e *duckEngine) Explain(ctx context.Context, query string, args ...any) (string, error) {
	var key, plan string
	if err := e.db.QueryRowContext(ctx, "EXPLAIN (FORMAT JSON) "+query, args...).Scan(&key, &plan); err != nil {
		return "", fmt.Errorf("explaining on duckdb: %w", err)
	}
	return duckPlanText(plan)
}

// duckNode is one operator of DuckDB's JSON plan.
type duckNode struct {
	Name     string          `json:"name"`
	Extra    json.RawMessage `json:"extra_info"`
	Children []duckNode      `json:"children"`
}

// duckPlanText turns DuckDB's JSON plan into text.
func duckPlanText(plan string) (string, error) {
	var roots []duckNode
	if err := json.Unmarshal([]byte(plan), &roots); err != nil {
		var one duckNode
		if err2 := json.Unmarshal([]byte(plan), &one); err2 != nil {
			return "", fmt.Errorf("reading duckdb's plan: %w", err)
		}
		roots = []duckNode{one}
	}
	var lines []string
	var walk func(n duckNode, depth int)
	walk = func(n duckNode, depth int) {
		ind := strings.Repeat("  ", depth)
		lines = append(lines, ind+strings.TrimSpace(n.Name))
		for _, l := range duckExtra(n.Extra) {
			lines = append(lines, ind+"    "+l)
		}
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	return normalisePlan(lines), nil
}

// duckExtra lists an operator's details as "key: value" lines, sorted by
// key, leaving out estimates ("Estimated Cardinality") and timings.
func duckExtra(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "EC:") && !strings.HasPrefix(l, "~") {
				out = append(out, l)
			}
		}
		return out
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if strings.Contains(strings.ToLower(k), "estimated") || strings.Contains(strings.ToLower(k), "timing") {
			continue
		}
		switch v := m[k].(type) {
		case []any:
			parts := make([]string, len(v))
			for i, x := range v {
				parts[i] = fmt.Sprint(x)
			}
			out = append(out, k+": "+strings.Join(parts, ", "))
		default:
			out = append(out, fmt.Sprintf("%s: %v", k, v))
		}
	}
	return out
}

// Prewarm reads every value of every table (readAll), so that DuckDB's
// buffer manager holds the whole database: a count of a column would not,
// DuckDB answers it from its statistics.
func (e *duckEngine) Prewarm(ctx context.Context) (PrewarmStats, error) {
	st, err := e.readAll(ctx)
	if err != nil {
		return st, fmt.Errorf("prewarming duckdb: %w", err)
	}
	var used, block int64
	if err := e.db.QueryRowContext(ctx,
		"SELECT used_blocks, block_size FROM pragma_database_size() WHERE database_name = current_database()").
		Scan(&used, &block); err == nil {
		st.Bytes = used * block
	}
	return st, nil
}

// quoteIdent quotes an SQL identifier (all three engines accept "x").
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func (e *duckEngine) Close() error { return e.closeDB() }

// closeDB closes the database handle and takes the file out of the
// registry, or keeps it there as one DuckDB may still hold.
func (e *duckEngine) closeDB() error {
	inUse := e.db.Stats().InUse
	err := e.db.Close()
	e.mu.Lock()
	stuck := e.interrupted
	e.mu.Unlock()
	if inUse > 0 {
		stuck = fmt.Sprintf("closed with %d connections still in use (a call that did not return)", inUse)
	}
	e.release(stuck)
	return err
}

func (e *duckEngine) Discard() error {
	err := e.closeDB()
	if e.created {
		for _, p := range []string{e.path, e.path + ".wal"} {
			if rerr := os.Remove(p); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
				err = rerr
			}
		}
	}
	return err
}

// duckConn is a stream's connection: a database/sql connection held for
// the stream's life (DuckDB's own per-query cost dwarfs database/sql's).
type duckConn struct {
	c *sql.Conn
	e *duckEngine
}

func (c *duckConn) Exec(ctx context.Context, query string, args ...any) error {
	ctx, done := c.e.callContext(ctx, query)
	defer done()
	_, err := c.c.ExecContext(ctx, query, args...)
	return err
}

func (c *duckConn) Query(ctx context.Context, query string, args []any, row func([]any) error) error {
	ctx, done := c.e.callContext(ctx, query)
	defer done()
	return scanSQLRows(c.c.QueryContext(ctx, query, args...))(row)
}

func (c *duckConn) BackendPID() int { return 0 }
func (c *duckConn) Close() error    { return c.c.Close() }

// scanSQLRows reads database/sql rows into normalised values for row.
func scanSQLRows(rows *sql.Rows, err error) func(row func([]any) error) error {
	return func(row func([]any) error) error {
		if err != nil {
			return err
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		raw := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range raw {
			ptrs[i] = &raw[i]
		}
		vals := make([]any, len(cols))
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			for i, v := range raw {
				vals[i] = normaliseDuck(v)
			}
			if err := row(vals); err != nil {
				return err
			}
		}
		return rows.Err()
	}
}

// normaliseDuck also converts DuckDB's DECIMAL and interval values.
func normaliseDuck(v any) any {
	switch x := v.(type) {
	case duckdb.Decimal:
		f := x.Float64()
		if x.Scale == 0 && x.Value != nil && x.Value.IsInt64() {
			return x.Value.Int64()
		}
		return f
	case time.Time:
		return x
	}
	return normalise(v)
}
