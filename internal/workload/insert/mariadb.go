package insert

// MariaDB's loader. The stream's connection is opened by the engine (a
// blocking socket read on the stream's own thread, its server thread
// pinned to the stream's CPUs); each batch is one multi-row INSERT in
// the text protocol, committed on its own (autocommit), or, for a batch
// of more than myChunkRows rows, several INSERTs between BEGIN and
// COMMIT. The statement's text is built from the batch's numbers and
// padding (letters and digits), so nothing needs escaping.
//
// The table is InnoDB's, whose rows live in the leaves of the primary
// key's B-tree (the clustered index):
//
//   - none: no primary key, so InnoDB clusters the rows by its hidden
//     row id, which one server-wide counter hands out: on MariaDB even
//     "none" appends every stream's rows to the one right-most leaf;
//   - stream: PRIMARY KEY (id), each stream numbering its own range, so
//     each appends at the right edge of its own part of the tree;
//   - shared: id BIGINT AUTO_INCREMENT PRIMARY KEY, one counter every
//     stream draws from (innodb_autoinc_lock_mode 1, the default: a
//     multi-row INSERT of known size takes its ids under a short mutex),
//     and every stream appends to the one right-most leaf.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/engine"
)

// myChunkRows is the most rows of one INSERT statement: about 80 KB of
// text, far below max_allowed_packet's 16 MiB default.
const myChunkRows = 1000

type myLoader struct {
	cols     []int
	c        engine.Conn
	head     string // INSERT INTO ... VALUES
	buf      []byte
	threadID int64 // performance_schema's THREAD_ID of the server thread
	tid      int   // its operating-system thread id
	connID   int   // the session's id (engine.SQL.SessionID), the processlist's
}

func openMyLoader(ctx context.Context, eng engine.Engine, cols []int) (*myLoader, error) {
	c, err := eng.Connect(ctx)
	if err != nil {
		return nil, err
	}
	l := &myLoader{cols: cols, c: c, tid: c.BackendPID(),
		head: fmt.Sprintf("INSERT INTO %s (%s) VALUES ", Table, strings.Join(columnNames(cols), ", "))}
	q := engine.SQLOf(eng.Name()).SessionID()
	if err := c.Query(ctx, q, nil, func(v []any) error {
		id, ok := v[0].(int64)
		l.connID = int(id)
		if !ok {
			return fmt.Errorf("%s gave %v", q, v[0])
		}
		return nil
	}); err != nil {
		c.Close()
		return nil, fmt.Errorf("reading the loader's connection id: %w", err)
	}
	// Without performance_schema the waits are not read: thread id 0.
	err = c.Query(ctx, "SELECT thread_id FROM performance_schema.threads WHERE processlist_id = connection_id()", nil,
		func(v []any) error {
			l.threadID, _ = v[0].(int64)
			return nil
		})
	if err != nil && !noPerfSchema(err) {
		c.Close()
		return nil, fmt.Errorf("finding the loader's thread in performance_schema.threads: %w", err)
	}
	return l, nil
}

// noPerfSchema says that err is a server without performance_schema (or
// one the DSN's user may not read).
func noPerfSchema(err error) bool {
	if errors.Is(err, sql.ErrNoRows) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "Error 1142") || strings.Contains(msg, "Error 1146") ||
		strings.Contains(msg, "Error 1044")
}

// appendMy appends row i's value of column j as a SQL literal.
func appendMy(b []byte, r *rows, i, j int) []byte {
	if j == 4 {
		b = append(b, '\'')
		b = append(b, r.pad[i]...)
		return append(b, '\'')
	}
	return appendText(b, r, i, j)
}

// statement is the INSERT of rows [a, z) of r.
func (l *myLoader) statement(r *rows, a, z int) string {
	b := append(l.buf[:0], l.head...)
	for i := a; i < z; i++ {
		if i > a {
			b = append(b, ", "...)
		}
		b = append(b, '(')
		for x, j := range l.cols {
			if x > 0 {
				b = append(b, ", "...)
			}
			b = appendMy(b, r, i, j)
		}
		b = append(b, ')')
	}
	l.buf = b
	return string(b)
}

func (l *myLoader) load(ctx context.Context, r *rows) (time.Duration, error) {
	if r.n() <= myChunkRows {
		return 0, l.c.Exec(ctx, l.statement(r, 0, r.n()))
	}
	if err := l.c.Exec(ctx, "BEGIN"); err != nil {
		return 0, err
	}
	for a := 0; a < r.n(); a += myChunkRows {
		if err := l.c.Exec(ctx, l.statement(r, a, min(a+myChunkRows, r.n()))); err != nil {
			l.c.Exec(context.WithoutCancel(ctx), "ROLLBACK")
			return 0, err
		}
	}
	return 0, l.c.Exec(ctx, "COMMIT")
}

func (l *myLoader) pid() int     { return l.connID }
func (l *myLoader) close() error { return l.c.Close() }

// claimMyTable makes numalab's MariaDB table afresh in the engine's
// database: it drops a table of that name only when its comment is
// marker, and refuses any other.
func claimMyTable(ctx context.Context, db *sql.DB, schema string, indexes bool, key string, d dialect) error {
	var comment string
	err := db.QueryRowContext(ctx,
		"SELECT table_comment FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
		schema, Table).Scan(&comment)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("checking %s.%s: %w", schema, Table, err)
	case comment != marker:
		return fmt.Errorf(
			"loading into %s.%s: %w: it exists without numalab's comment (drop or rename it, or use another --dsn)",
			schema, Table, ErrNotOurs)
	default:
		if _, err := db.ExecContext(ctx, "DROP TABLE "+Table); err != nil {
			return fmt.Errorf("dropping numalab's earlier %s.%s: %w", schema, Table, err)
		}
	}
	q := createSQL(d, Table, key)[0]
	if indexes {
		q = strings.TrimSuffix(q, ")") + ", INDEX (k))"
	}
	q += " ENGINE = InnoDB COMMENT = '" + marker + "'"
	if _, err := db.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("creating %s.%s: %w", schema, Table, err)
	}
	return nil
}

// myThreads are the performance_schema thread ids of the cell's loaders
// (0 left out: no performance_schema).
func (cs *cellState) myThreads() []string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var ids []string
	for _, st := range cs.opened {
		if l, ok := st.l.(*myLoader); ok && l.threadID > 0 {
			ids = append(ids, strconv.FormatInt(l.threadID, 10))
		}
	}
	return ids
}
