package engine

// PostgreSQL as an Engine: a server given by a DSN, or a managed throwaway
// one (pgserver.Start) with shared_buffers sized to the data.
//
// Schema. Everything numalab creates lives in one schema (Options.Schema,
// default "numalab"), which every connection has as its search_path. Open
// creates it with the comment schemaMarker when it does not exist. When it
// exists without that comment, Open stops with an error: numalab neither
// uses nor drops a schema it did not make.
//
// Connections. Streams get one pgx connection each (no pool in the hot
// path). pgx prepares each distinct statement once per connection and then
// sends Bind/Execute/Sync: one round trip per call. A stream's connection
// reads its socket in blocking mode, as libpq does (pgconn_blocking.go). With a managed server
// (or Options.PinBackends) Connect pins the new backend's process to the
// CPUs of the calling thread, so that the backend follows the stream's
// placement.
//
// DOP. SetDOP(n) sets max_parallel_workers_per_gather = n−1 on DB's
// connections and on every connection opened afterwards (as a startup
// parameter), and raises the session's max_parallel_workers to n−1 when it
// is lower. It refuses n−1 above the server's max_worker_processes, which
// only a restart can change. Nothing else is changed: parallel_setup_cost,
// parallel_tuple_cost and min_parallel_table_scan_size keep the server's
// values, so a small table may get no parallel plan at any DOP; the plan
// (Explain) says so, and Describe records those settings.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
)

// schemaMarker is the comment on the schema numalab creates.
const schemaMarker = "created by numalab"

// DefaultSchema is numalab's PostgreSQL schema.
const DefaultSchema = "numalab"

// ErrNotOurSchema is wrapped when the schema exists and numalab did not
// create it.
var ErrNotOurSchema = errors.New("schema not created by numalab")

type pgEngine struct {
	server *pgserver.Server // nil with a user's DSN
	cfg    *pgx.ConnConfig
	where  string // the DSN with the password hidden, or the managed server
	schema string
	pin    bool
	db     *sql.DB

	mu      sync.Mutex
	params  map[string]string // runtime parameters of new connections
	dop     int
	workers int // the server's max_worker_processes
}

var _ Engine = (*pgEngine)(nil)

func openPostgres(ctx context.Context, opt Options) (_ *pgEngine, err error) {
	e := &pgEngine{schema: opt.Schema, pin: opt.PinBackends}
	if e.schema == "" {
		e.schema = DefaultSchema
	}
	dsn := opt.DSN
	if dsn == "" {
		cfg := opt.PG
		if cfg.SharedBuffers <= 0 {
			cfg.SharedBuffers = pgserver.SharedBuffersFor(opt.DataBytes)
		}
		s, err := pgserver.Start(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("opening postgres: %w", err)
		}
		e.server, e.pin, dsn = s, true, s.DSN()
		e.where = "managed: " + s.Describe()
		defer func() {
			if err != nil {
				s.Stop()
			}
		}()
	} else {
		e.where = result.Redact(dsn)
	}
	// Connect once first: ConnectPG's errors hide the password and say
	// what to check.
	c, err := ConnectPG(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("opening postgres: %w", err)
	}
	e.cfg = c.Config().Copy()
	err = claimSchema(ctx, c, e.schema)
	if err == nil {
		err = c.QueryRow(ctx, "SELECT current_setting('max_worker_processes')::int").Scan(&e.workers)
	}
	c.Close(ctx)
	if err != nil {
		return nil, fmt.Errorf("opening postgres %s: %w", e.where, err)
	}
	e.params = map[string]string{"search_path": e.schema}
	e.db = stdlib.OpenDB(*e.cfg, stdlib.OptionBeforeConnect(func(ctx context.Context, cc *pgx.ConnConfig) error {
		e.mu.Lock()
		defer e.mu.Unlock()
		for k, v := range e.params {
			cc.RuntimeParams[k] = v
		}
		return nil
	}))
	e.db.SetMaxIdleConns(2)
	return e, nil
}

// claimSchema creates numalab's schema with its marker, or checks that the
// existing one carries it.
func claimSchema(ctx context.Context, c *pgx.Conn, schema string) error {
	var comment *string
	err := c.QueryRow(ctx, "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1", schema).Scan(&comment)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		_, err = c.Exec(ctx, fmt.Sprintf("CREATE SCHEMA %s; COMMENT ON SCHEMA %[1]s IS '%s'", pgx.Identifier{schema}.Sanitize(), schemaMarker))
		if err != nil {
			return fmt.Errorf("creating schema %s: %w (the DSN's user needs CREATE on the database)", schema, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("looking for schema %s: %w", schema, err)
	case comment == nil || *comment != schemaMarker:
		got := "no comment"
		if comment != nil {
			got = fmt.Sprintf("comment %q", *comment)
		}
		return fmt.Errorf("%w: schema %s exists with %s, not %q: numalab will neither use nor drop it (use another database, or drop the schema yourself if it is numalab's)", ErrNotOurSchema, schema, got, schemaMarker)
	}
	return nil
}

func (e *pgEngine) Name() string   { return "postgres" }
func (e *pgEngine) DB() *sql.DB    { return e.db }
func (e *pgEngine) Path() string   { return "" }
func (e *pgEngine) Schema() string { return e.schema }

// Server is the managed server, nil with a user's DSN.
func (e *pgEngine) Server() *pgserver.Server { return e.server }

// connConfig is the configuration of a new connection: the DSN's, with the
// current runtime parameters.
func (e *pgEngine) connConfig() *pgx.ConnConfig {
	cc := e.cfg.Copy()
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, v := range e.params {
		cc.RuntimeParams[k] = v
	}
	return cc
}

// Bulk loads with COPY (pgx CopyFrom), one COPY per Flush or per
// pgBulkRows rows, on a connection of its own.
func (e *pgEngine) Bulk(ctx context.Context, table string, columns []string) (Bulk, error) {
	if len(columns) == 0 {
		return nil, fmt.Errorf("loading %s: no columns", table)
	}
	c, err := pgx.ConnectConfig(ctx, e.connConfig())
	if err != nil {
		return nil, fmt.Errorf("loading %s: connecting: %s", table, result.Redact(err.Error()))
	}
	return &pgBulk{ctx: ctx, c: c, table: pgx.Identifier{e.schema, table}, cols: columns,
		buf: make([]any, 0, pgBulkRows*len(columns))}, nil
}

// pgBulkRows is the most rows buffered for one COPY.
const pgBulkRows = 16384

type pgBulk struct {
	ctx   context.Context
	c     *pgx.Conn
	table pgx.Identifier
	cols  []string
	buf   []any
	rows  int64
}

func (b *pgBulk) Append(vals ...any) error {
	if len(vals) != len(b.cols) {
		return fmt.Errorf("loading %s: %d values for %d columns", b.table.Sanitize(), len(vals), len(b.cols))
	}
	b.buf = append(b.buf, vals...)
	if len(b.buf) >= pgBulkRows*len(b.cols) {
		return b.Flush()
	}
	return nil
}

// copySource walks a flat buffer of rows for CopyFrom.
type copySource struct {
	buf  []any
	ncol int
	i    int
}

func (s *copySource) Next() bool             { s.i++; return s.i*s.ncol <= len(s.buf) }
func (s *copySource) Values() ([]any, error) { return s.buf[(s.i-1)*s.ncol : s.i*s.ncol], nil }
func (s *copySource) Err() error             { return nil }

func (b *pgBulk) Flush() error {
	if len(b.buf) == 0 {
		return nil
	}
	n, err := b.c.CopyFrom(b.ctx, b.table, b.cols, &copySource{buf: b.buf, ncol: len(b.cols)})
	b.rows += n
	clear(b.buf)
	b.buf = b.buf[:0]
	if err != nil {
		return fmt.Errorf("loading %s: %w", b.table.Sanitize(), err)
	}
	return nil
}

func (b *pgBulk) Close() error {
	err := b.Flush()
	if cerr := b.c.Close(context.Background()); err == nil {
		err = cerr
	}
	return err
}

func (b *pgBulk) Rows() int64 { return b.rows }

// Connect opens a stream's connection and, when backends are pinned, pins
// its backend to the calling thread's CPUs.
func (e *pgEngine) Connect(ctx context.Context) (Conn, error) {
	cc := e.connConfig()
	cc.DialFunc = dialBlocking // see pgconn_blocking.go
	c, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, fmt.Errorf("connecting to postgres %s: %s%s", e.where, result.Redact(err.Error()), pgConnectHint(err))
	}
	pc := &pgConn{c: c, pid: int(c.PgConn().PID())}
	if e.pin {
		if err := e.pinBackend(pc.pid); err != nil {
			c.Close(ctx)
			return nil, err
		}
	}
	return pc, nil
}

// pinBackend pins backend pid to the calling thread's CPUs. With a user's
// DSN it first checks that pid is a local postgres process, so that it
// never pins an unrelated one.
func (e *pgEngine) pinBackend(pid int) error {
	cpus, err := place.Affinity()
	if err != nil {
		return fmt.Errorf("pinning postgres backend %d: %w", pid, err)
	}
	if e.server == nil {
		if !localHost(e.cfg.Host) {
			return fmt.Errorf("pinning postgres backend %d: the server %s is not on this machine (pinning needs a local server)", pid, e.where)
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err != nil || !strings.HasPrefix(string(cmd), "postgres") {
			return fmt.Errorf("pinning postgres backend %d: no local postgres process has that id (is the server in a container or on another machine?)", pid)
		}
	}
	if err := place.PinPID(pid, cpus); err != nil {
		return fmt.Errorf("pinning postgres backend %d to CPUs %s: %w", pid, place.FormatCPUs(cpus), err)
	}
	return nil
}

// localHost says whether a DSN host is this machine: a unix socket
// directory or a loopback address.
func localHost(h string) bool {
	if strings.HasPrefix(h, "/") || h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// SetDOP sets max_parallel_workers_per_gather = dop−1 (and
// max_parallel_workers at least as high) for DB and new connections.
func (e *pgEngine) SetDOP(ctx context.Context, dop int) error {
	if err := checkDOP("postgres", dop); err != nil {
		return err
	}
	if dop-1 > e.workers {
		return fmt.Errorf("setting postgres DOP: %d needs %d parallel workers, and the server allows %d (max_worker_processes; raise it and restart the server)", dop, dop-1, e.workers)
	}
	var maxWorkers int
	if err := e.db.QueryRowContext(ctx, "SELECT current_setting('max_parallel_workers')::int").Scan(&maxWorkers); err != nil {
		return fmt.Errorf("setting postgres DOP: %w", err)
	}
	e.mu.Lock()
	e.dop = dop
	e.params["max_parallel_workers_per_gather"] = strconv.Itoa(dop - 1)
	if dop-1 > maxWorkers {
		e.params["max_parallel_workers"] = strconv.Itoa(dop - 1)
	}
	e.mu.Unlock()
	// Idle pooled connections carry the old settings: drop them.
	e.db.SetMaxIdleConns(0)
	e.db.SetMaxIdleConns(2)
	return nil
}

// pgSettingsRecorded are the server settings Describe records.
var pgSettingsRecorded = []string{
	"shared_buffers", "effective_cache_size", "work_mem", "huge_pages", "jit",
	"max_parallel_workers_per_gather", "max_parallel_workers", "max_worker_processes",
	"parallel_setup_cost", "parallel_tuple_cost", "min_parallel_table_scan_size", "min_parallel_index_scan_size",
	"random_page_cost", "seq_page_cost", "effective_io_concurrency", "max_connections",
	"fsync", "synchronous_commit", "autovacuum", "dynamic_shared_memory_type", "shared_memory_type",
}

func (e *pgEngine) Describe(ctx context.Context) (Info, error) {
	in := Info{Engine: "postgres", Where: e.where, Settings: map[string]string{}}
	if err := e.db.QueryRowContext(ctx, "SELECT current_setting('server_version')").Scan(&in.Version); err != nil {
		return in, fmt.Errorf("describing postgres: %w", err)
	}
	rows, err := e.db.QueryContext(ctx, "SELECT name, setting || coalesce(unit, '') FROM pg_settings WHERE name = ANY($1)", pgSettingsRecorded)
	if err != nil {
		return in, fmt.Errorf("describing postgres: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return in, fmt.Errorf("describing postgres: %w", err)
		}
		in.Settings[k] = v
	}
	if err := rows.Err(); err != nil {
		return in, fmt.Errorf("describing postgres: %w", err)
	}
	in.Settings["schema"] = e.schema
	in.Settings["backends pinned"] = strconv.FormatBool(e.pin)
	in.Settings["stream connections"] = "one per stream, blocking socket I/O on the stream's thread"
	if e.server != nil {
		in.Settings["server user"] = e.server.User
		in.Settings["server binaries"] = e.server.Source + " " + e.server.BinDir
	}
	return in, nil
}

// Explain runs EXPLAIN (COSTS OFF): the plan's shape, with "Workers
// Planned" but no costs, estimates or timings.
func (e *pgEngine) Explain(ctx context.Context, query string, args ...any) (string, error) {
	rows, err := e.db.QueryContext(ctx, "EXPLAIN (COSTS OFF) "+query, args...)
	if err != nil {
		return "", fmt.Errorf("explaining on postgres: %w", err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return "", fmt.Errorf("explaining on postgres: %w", err)
		}
		lines = append(lines, l)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("explaining on postgres: %w", err)
	}
	return normalisePlan(lines), nil
}

// Prewarm loads every table and index of numalab's schema into shared
// buffers: with pg_prewarm when it can (in whatever schema its extension
// is installed in, else created in numalab's schema), then by a sequential
// scan of each table and a
// full index scan of each index, which touches every buffer's page from
// this one backend. The prewarming backend runs on the calling thread's
// CPUs when backends are pinned. It then reads that backend's numa_maps
// (managed server, or a local one) to say where the shared memory lies: a
// process's numa_maps counts only the pages it touched itself, hence the
// scans even after pg_prewarm, which does not touch pages already
// buffered. Without pg_prewarm, a table larger than a quarter of
// shared_buffers is read through a small ring of buffers by its
// sequential scan and so is not fully cached: install the server's contrib
// package. pg_prewarm never fails a prewarm: when it is missing, cannot be
// created or fails, the scans alone read the data, and Method says why.
func (e *pgEngine) Prewarm(ctx context.Context) (PrewarmStats, error) {
	var st PrewarmStats
	cn, err := e.Connect(ctx)
	if err != nil {
		return st, fmt.Errorf("prewarming postgres: %w", err)
	}
	defer cn.Close()
	c := cn.(*pgConn).c
	type rel struct {
		oid            uint32
		name, kind, on string
		bytes          int64
	}
	var rels []rel
	rows, err := c.Query(ctx, `SELECT c.oid, c.relname, c.relkind, coalesce(t.relname, ''), pg_relation_size(c.oid)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_index i ON i.indexrelid = c.oid LEFT JOIN pg_class t ON t.oid = i.indrelid
		WHERE n.nspname = $1 AND c.relkind IN ('r', 'i', 'm') ORDER BY c.relkind DESC, c.relname`, e.schema)
	if err != nil {
		return st, fmt.Errorf("prewarming postgres: listing relations: %w", err)
	}
	for rows.Next() {
		var r rel
		if err := rows.Scan(&r.oid, &r.name, &r.kind, &r.on, &r.bytes); err != nil {
			rows.Close()
			return st, fmt.Errorf("prewarming postgres: %w", err)
		}
		rels = append(rels, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("prewarming postgres: %w", err)
	}
	// The scans must run in this backend, not in parallel workers.
	if _, err := c.Exec(ctx, "SET max_parallel_workers_per_gather = 0"); err != nil {
		return st, fmt.Errorf("prewarming postgres: %w", err)
	}
	prewarm, why := e.findPrewarm(ctx, c)
	for _, r := range rels {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if prewarm != "" {
			if _, err := c.Exec(ctx, "SELECT "+prewarm+"($1::oid)", r.oid); err != nil {
				prewarm, why = "", fmt.Sprintf("%s failed on %s: %v", prewarm, r.name, err)
			}
		}
		if err := scanRelation(ctx, c, e.schema, r.oid, r.name, r.kind, r.on); err != nil {
			return st, fmt.Errorf("prewarming postgres: %s: %w", r.name, err)
		}
		st.Objects++
		st.Bytes += r.bytes
	}
	st.Method = "pg_prewarm, scans"
	if prewarm == "" {
		st.Method = "scans (pg_prewarm not used: " + why + ")"
	}
	if e.server != nil || e.pin {
		if ms, err := place.ReadNumaMaps("/", cn.BackendPID()); err == nil {
			u := place.SumNumaMaps(sharedMappings(ms))
			st.Placement = &u
		}
	}
	return st, nil
}

// findPrewarm returns the qualified name of pg_prewarm's function, in the
// schema its extension is installed in (pg_extension), creating the
// extension in numalab's schema when the server has it and it is not
// installed; or "" and why it cannot be used.
func (e *pgEngine) findPrewarm(ctx context.Context, c *pgx.Conn) (fn, why string) {
	_, createErr := c.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_prewarm SCHEMA "+pgx.Identifier{e.schema}.Sanitize())
	var schema string
	err := c.QueryRow(ctx, `SELECT n.nspname FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace
		WHERE x.extname = 'pg_prewarm'`).Scan(&schema)
	switch {
	case err == nil:
		return pgx.Identifier{schema, "pg_prewarm"}.Sanitize(), ""
	case errors.Is(err, pgx.ErrNoRows) && createErr != nil:
		return "", fmt.Sprintf("not installed, and creating it failed: %v", createErr)
	default:
		return "", fmt.Sprintf("finding its schema: %v", err)
	}
}

// sharedMappings keeps the mappings of PostgreSQL's main shared memory:
// shared anonymous memory (/dev/zero, SYSV or /dev/shm), the largest
// non-file mappings, excluding the heap and stack.
func sharedMappings(ms []place.NumaMapping) []place.NumaMapping {
	var out []place.NumaMapping
	for _, m := range ms {
		if m.Heap || m.Stack {
			continue
		}
		f := m.File
		if strings.HasPrefix(f, "/dev/zero") || strings.HasPrefix(f, "/SYSV") || strings.HasPrefix(f, "/dev/shm/PostgreSQL") || strings.HasPrefix(f, "/anon_hugepage") {
			out = append(out, m)
		}
	}
	return out
}

// scanRelation reads a table with a sequential scan, or an index with a
// full index scan (sequential and bitmap scans disabled for the query).
func scanRelation(ctx context.Context, c *pgx.Conn, schema string, oid uint32, name, kind, table string) error {
	if kind != "i" {
		// count(t.*) forms every row, reading the tuples themselves, which
		// fill pages from their end; count(*) would read line pointers only.
		_, err := c.Exec(ctx, "SELECT count(t.*) FROM "+pgx.Identifier{schema, name}.Sanitize()+" t")
		return err
	}
	var cols []string
	rows, err := c.Query(ctx, `SELECT a.attname FROM pg_index i, unnest(i.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
		JOIN pg_attribute a ON a.attnum = k.attnum WHERE i.indexrelid = $1 AND a.attrelid = i.indrelid ORDER BY k.ord`, oid)
	if err != nil {
		return err
	}
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			rows.Close()
			return err
		}
		cols = append(cols, pgx.Identifier{a}.Sanitize())
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(cols) == 0 {
		return err
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	for _, s := range []string{"SET LOCAL enable_seqscan = off", "SET LOCAL enable_bitmapscan = off"} {
		if _, err := tx.Exec(ctx, s); err != nil {
			return err
		}
	}
	_, err = tx.Exec(ctx, fmt.Sprintf("SELECT count(*) FROM (SELECT %s FROM %s ORDER BY %[1]s) x",
		strings.Join(cols, ", "), pgx.Identifier{schema, table}.Sanitize()))
	return err
}

func (e *pgEngine) Close() error {
	err := e.db.Close()
	if e.server != nil {
		if serr := e.server.Stop(); err == nil {
			err = serr
		}
	}
	return err
}

func (e *pgEngine) Discard() error { return e.Close() }

// pgConn is a stream's pgx connection.
type pgConn struct {
	c   *pgx.Conn
	pid int
}

func (c *pgConn) Exec(ctx context.Context, query string, args ...any) error {
	_, err := c.c.Exec(ctx, query, args...)
	return err
}

func (c *pgConn) Query(ctx context.Context, query string, args []any, row func([]any) error) error {
	rows, err := c.c.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return err
		}
		for i, v := range vals {
			vals[i] = normalisePG(v)
		}
		if err := row(vals); err != nil {
			return err
		}
	}
	return rows.Err()
}

// normalisePG also converts numeric.
func normalisePG(v any) any {
	if n, ok := v.(pgtype.Numeric); ok {
		if !n.Valid {
			return nil
		}
		if i, err := n.Int64Value(); err == nil && i.Valid && n.Exp >= 0 {
			return i.Int64
		}
		if f, err := n.Float64Value(); err == nil && f.Valid {
			return f.Float64
		}
		return nil
	}
	return normalise(v)
}

func (c *pgConn) Native() Native  { return Native{Postgres: c.c} }
func (c *pgConn) BackendPID() int { return c.pid }
func (c *pgConn) Close() error    { return c.c.Close(context.Background()) }
