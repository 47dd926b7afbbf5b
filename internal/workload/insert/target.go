package insert

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mattn/go-sqlite3"

	"github.com/numalab/numalab/internal/engine"
)

// Table is the one table every stream loads into.
const Table = "insert_target"

// Columns are the table's columns, in the order a row's values come.
var Columns = []string{"id", "stream", "k", "v", "pad"}

// loadColumns are the indexes in Columns of the columns a stream sends:
// all of them, or all but id when the engine draws it from one sequence.
func loadColumns(key string) []int {
	if key == "shared" {
		return []int{1, 2, 3, 4}
	}
	return []int{0, 1, 2, 3, 4}
}

// columnNames are the names of the columns at cols.
func columnNames(cols []int) []string {
	names := make([]string, len(cols))
	for i, j := range cols {
		names[i] = Columns[j]
	}
	return names
}

// padLen is the length of a row's text column.
const padLen = 32

// RowBytes is a row's payload: four 8-byte numbers and padLen bytes of
// text. MB/s counts these bytes, not what the engine writes to disk.
const RowBytes = 4*8 + padLen

// marker marks numalab's table: PostgreSQL's table comment, and the one
// row of the embedded files' meta table.
const marker = "numalab insert target: emptied and reloaded by numalab run insert"

// metaTable holds marker in a SQLite or DuckDB file numalab made.
const metaTable = "numalab_insert_meta"

// ErrNotOurs is wrapped by the refusal of a table or file that numalab's
// insert workload did not make.
var ErrNotOurs = errors.New("not made by numalab's insert workload")

// rows is one stream's batch, a column each, regenerated for each batch
// from the stream's own RNG. Typed columns, not a slice of interfaces:
// boxing every value would make the garbage collector stop the streams
// (on PostgreSQL's blocking socket a stream keeps its P while it waits,
// so a collection waits for it).
type rows struct {
	cols   []int // the columns sent (loadColumns)
	id, k  []int64
	v      []float64
	pad    []string
	pads   []string
	rng    *rand.Rand
	stream int64
	next   int64
}

func newRows(batch int, stream int64, cols []int, rng *rand.Rand) *rows {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	pads := make([]string, 256)
	b := make([]byte, padLen)
	for i := range pads {
		for j := range b {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		}
		pads[i] = string(b)
	}
	return &rows{cols: cols, id: make([]int64, batch), k: make([]int64, batch), v: make([]float64, batch),
		pad: make([]string, batch), pads: pads, rng: rng, stream: stream}
}

// fill makes the next batch: ids are unique across streams (the stream
// in the top bits; not sent when the engine draws them), k is uniform, so
// an index on it is written everywhere.
func (r *rows) fill() {
	for i := range r.id {
		r.id[i] = r.stream<<40 | r.next
		r.k[i] = r.rng.Int64()
		r.v[i] = r.rng.Float64()
		r.pad[i] = r.pads[r.rng.IntN(len(r.pads))]
		r.next++
	}
}

func (r *rows) n() int { return len(r.id) }

// value is row i's value of column j, as a driver takes it.
func (r *rows) value(i, j int) any {
	switch j {
	case 0:
		return r.id[i]
	case 1:
		return r.stream
	case 2:
		return r.k[i]
	case 3:
		return r.v[i]
	}
	return r.pad[i]
}

// loader is one stream's connection: load hands one batch to the engine
// and says how long it waited for a lock it could not have at once.
type loader interface {
	load(ctx context.Context, r *rows) (wait time.Duration, err error)
	pid() int // the server session: PostgreSQL's backend, MariaDB's connection id; 0 in-process
	close() error
}

// multiRowSQL is an INSERT of n rows of the columns cols with numbered
// parameters ($1) or question marks.
func multiRowSQL(table string, n int, numbered bool, cols []int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", table, strings.Join(columnNames(cols), ", "))
	p := 1
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for j := range cols {
			if j > 0 {
				b.WriteString(", ")
			}
			if numbered {
				fmt.Fprintf(&b, "$%d", p)
			} else {
				b.WriteByte('?')
			}
			p++
		}
		b.WriteByte(')')
	}
	return b.String()
}

// chunkRows is the most rows of one INSERT statement: 500 parameters,
// within every engine's limit.
const chunkRows = 100

// duckLoader appends each batch through an Appender of its own, closed
// (flushed into the table) at the end of the batch. Without id, the
// Appender leaves it to the column's default, the shared sequence.
type duckLoader struct{ c engine.Conn }

func (l *duckLoader) load(ctx context.Context, r *rows) (time.Duration, error) {
	a, ok := l.c.(engine.Appender)
	if !ok {
		return 0, errors.New("loading: the engine's connection has no Appender")
	}
	return 0, a.AppendRows(ctx, Table, columnNames(r.cols), r.n(), func(i int, vals []any) {
		for j, c := range r.cols {
			vals[j] = r.value(i, c)
		}
	})
}

func (l *duckLoader) pid() int     { return 0 }
func (l *duckLoader) close() error { return l.c.Close() }

// sqliteLoader writes each batch in one transaction begun with BEGIN
// IMMEDIATE: it takes SQLite's one write lock, and the time it takes is
// the stream's wait for the writers before it.
type sqliteLoader struct {
	cols  []int
	c     *sqlite3.SQLiteConn
	stmts map[int]driver.StmtExecContext
	args  []driver.NamedValue
}

// sqliteParams open a file for writing by many connections: WAL, no
// fsync (as the load does), and a busy timeout long enough that a writer
// waits for the lock rather than fail.
const sqliteParams = "_journal_mode=WAL&_synchronous=OFF&_busy_timeout=60000"

func sqliteDSN(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return "file:" + abs + "?" + sqliteParams, nil
}

func openSQLiteLoader(path string, cols []int) (*sqliteLoader, error) {
	dsn, err := sqliteDSN(path)
	if err != nil {
		return nil, err
	}
	dc, err := (&sqlite3.SQLiteDriver{}).Open(dsn)
	if err != nil {
		return nil, fmt.Errorf("opening %s for writing: %w", path, err)
	}
	return &sqliteLoader{cols: cols, c: dc.(*sqlite3.SQLiteConn), stmts: map[int]driver.StmtExecContext{}}, nil
}

func (l *sqliteLoader) stmt(n int) (driver.StmtExecContext, error) {
	if s, ok := l.stmts[n]; ok {
		return s, nil
	}
	s, err := l.c.Prepare(multiRowSQL(Table, n, false, l.cols))
	if err != nil {
		return nil, err
	}
	l.stmts[n] = s.(driver.StmtExecContext)
	return l.stmts[n], nil
}

func (l *sqliteLoader) load(ctx context.Context, r *rows) (time.Duration, error) {
	start := time.Now()
	if _, err := l.c.Exec("BEGIN IMMEDIATE", nil); err != nil {
		return time.Since(start), engine.SQLiteError(err)
	}
	wait := time.Since(start)
	for a := 0; a < r.n(); a += chunkRows {
		b := min(a+chunkRows, r.n())
		s, err := l.stmt(b - a)
		if err == nil {
			l.args = l.args[:0]
			for i := a; i < b; i++ {
				for _, j := range l.cols {
					l.args = append(l.args, driver.NamedValue{Ordinal: len(l.args) + 1, Value: r.value(i, j)})
				}
			}
			_, err = s.ExecContext(ctx, l.args)
		}
		if err != nil {
			l.c.Exec("ROLLBACK", nil)
			return wait, engine.SQLiteError(err)
		}
	}
	_, err := l.c.Exec("COMMIT", nil)
	return wait, engine.SQLiteError(err)
}

func (l *sqliteLoader) pid() int { return 0 }

func (l *sqliteLoader) close() error {
	for _, s := range l.stmts {
		s.(driver.Stmt).Close()
	}
	return l.c.Close()
}

// duckSequence is the sequence DuckDB's shared key draws from.
const duckSequence = "numalab_insert_id"

// claimFile removes path when it is a file numalab's insert workload made
// (its meta table holds marker), and refuses, untouched, any other file.
// A missing file is fine.
func claimFile(ctx context.Context, engineName, path string) error {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	refuse := func(why string) error {
		return fmt.Errorf("opening %s: %w: %s (choose another --db, or remove the file yourself if it is numalab's)",
			path, ErrNotOurs, why)
	}
	kind, err := engine.FileEngine(path)
	switch {
	case errors.Is(err, engine.ErrUnknownFile):
		return refuse(err.Error())
	case err != nil: // unreadable: nothing was learnt of whose it is
		return fmt.Errorf("opening %s: %w", path, err)
	}
	if kind != engineName {
		return refuse("it is a " + kind + " file")
	}
	eng, err := engine.Open(ctx, engineName, engine.Options{Path: path})
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("opening %s: %w", path, ctx.Err()) // stopped, not refused
	}
	if err != nil {
		return refuse(err.Error())
	}
	var note string
	err = eng.DB().QueryRowContext(ctx, "SELECT note FROM "+metaTable).Scan(&note)
	eng.Close()
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("opening %s: reading %s: %w", path, metaTable, ctx.Err()) // stopped, not refused
	}
	if err != nil || note != marker {
		return refuse("it has no " + metaTable + " table saying so")
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + ".wal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing numalab's earlier %s: %w", p, err)
		}
	}
	return nil
}

// createFile makes a new SQLite or DuckDB file with the meta table
// (first, so that a file cut short is still known as numalab's) and the
// empty target table.
func createFile(ctx context.Context, eng engine.Engine, key string) error {
	_, d, _ := dialectOf(eng.Name())
	for _, q := range append([]string{
		"CREATE TABLE " + metaTable + " (note TEXT NOT NULL)",
		"INSERT INTO " + metaTable + " VALUES ('" + marker + "')",
	}, createSQL(d, Table, key)...) {
		if _, err := eng.DB().ExecContext(ctx, q); err != nil {
			return fmt.Errorf("creating %s: %w", eng.Path(), err)
		}
	}
	return nil
}

// claimPGTable makes numalab's PostgreSQL table afresh: it drops a table
// of that name only when its comment is marker, and refuses any other.
func claimPGTable(ctx context.Context, db *sql.DB, schema string, indexes bool, key string, d dialect) error {
	name := pgx.Identifier{schema, Table}.Sanitize()
	var comment sql.NullString
	err := db.QueryRowContext(ctx, `SELECT obj_description(c.oid, 'pg_class') FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`, schema, Table).Scan(&comment)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("checking %s: %w", name, err)
	case comment.String != marker:
		return fmt.Errorf(
			"loading into %s: %w: it exists without numalab's comment (drop or rename it, or use another --dsn)",
			name, ErrNotOurs)
	default:
		if _, err := db.ExecContext(ctx, "DROP TABLE "+name); err != nil {
			return fmt.Errorf("dropping numalab's earlier %s: %w", name, err)
		}
	}
	qs := append(createSQL(d, name, key), "COMMENT ON TABLE "+name+" IS '"+marker+"'")
	if indexes && key == "none" {
		qs = append(qs, "ALTER TABLE "+name+" ADD PRIMARY KEY (id)")
	}
	if indexes {
		qs = append(qs, "CREATE INDEX ON "+name+" (k)")
	}
	for _, q := range qs {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("creating %s: %w", name, err)
		}
	}
	return nil
}
