package engine

// PostgreSQL as an Engine: a server given by a DSN, or a managed throwaway
// one (pgserver.Start) with shared_buffers sized to the data.
//
// Schema. Everything numalab creates lives in one schema (Options.Schema,
// default "numalab"), which every connection has as its search_path. Open
// creates it with the comment schemaMarker when it does not exist. When it
// exists without that comment, Open stops with an error: numalab neither
// uses nor drops a schema it did not make. With Options.UserSchema and a
// DSN there is no such schema: the connections keep the DSN's search path.
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
	"maps"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
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
	// timeout bounds each connection's connecting (ConnectBound).
	timeout time.Duration
	// ownLog is numalab's own server's log, "" with a --dsn server.
	ownLog string
	db     *sql.DB

	mu      sync.Mutex
	params  map[string]string // runtime parameters of new connections
	dop     int
	workers int // the server's max_worker_processes

	pmPinned bool  // SetDOPPlaced set the postmaster's CPUs
	pmCPUs   []int // the postmaster's CPUs before, given back by Close
	pmPID    int
}

var _ Engine = (*pgEngine)(nil)

func openPostgres(ctx context.Context, opt Options) (_ *pgEngine, err error) {
	e := &pgEngine{schema: opt.Schema, pin: opt.PinBackends}
	if e.schema == "" {
		e.schema = DefaultSchema
	}
	dsn, where, srv, err := serverDSN(ctx, "postgres", opt, func(ctx context.Context) (*pgserver.Server, error) {
		cfg := opt.PG
		if cfg.SharedBuffers <= 0 {
			cfg.SharedBuffers = pgserver.SharedBuffersFor(opt.DataBytes)
		}
		cfg.Settings = serverSettings(cfg.Settings, opt.ServerSettings)
		if opt.TCP {
			cfg.Settings = serverSettings(cfg.Settings, map[string]string{"listen_addresses": loopback()})
		}
		return pgserver.Start(ctx, cfg)
	})
	if err != nil {
		return nil, err
	}
	e.where = where
	e.timeout = connectBound(opt.ConnectTimeout, srv != nil)
	if srv != nil {
		e.server, e.pin, e.ownLog = srv, true, srv.LogPath()
		defer func() {
			if err != nil {
				srv.Stop()
			}
		}()
	}
	// Connect once first: ConnectPG's errors hide the password and say
	// what to check.
	c, err := connectPG(ctx, dsn, e.ownLog, e.timeout)
	if err != nil {
		return nil, fmt.Errorf("opening postgres: %w", err)
	}
	e.cfg = c.Config().Copy()
	e.params = map[string]string{"search_path": e.schema}
	if opt.UserSchema && srv == nil {
		e.schema, e.params = "", map[string]string{}
	} else {
		err = claimSchema(ctx, c, e.schema)
	}
	if err == nil {
		err = c.QueryRow(ctx, "SELECT current_setting('max_worker_processes')::int").Scan(&e.workers)
	}
	c.Close(ctx)
	if err != nil {
		return nil, fmt.Errorf("opening postgres %s: %w", e.where, err)
	}
	e.db = stdlib.OpenDB(*e.cfg, stdlib.OptionBeforeConnect(func(ctx context.Context, cc *pgx.ConnConfig) error {
		e.mu.Lock()
		defer e.mu.Unlock()
		// cc is a shallow copy: its map is every connection's (and
		// e.cfg's), which connections opened at once read.
		cc.RuntimeParams = maps.Clone(cc.RuntimeParams)
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
	err := c.QueryRow(ctx, "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1",
		schema).Scan(&comment)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		_, err = c.Exec(ctx, fmt.Sprintf("CREATE SCHEMA %s; COMMENT ON SCHEMA %[1]s IS '%s'",
			pgx.Identifier{schema}.Sanitize(), schemaMarker))
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
		return fmt.Errorf("%w: schema %s exists with %s, not %q: numalab will neither use nor drop it "+
			"(use another database, or drop the schema yourself if it is numalab's)", ErrNotOurSchema, schema, got, schemaMarker)
	}
	return nil
}

func (e *pgEngine) Name() string   { return "postgres" }
func (e *pgEngine) DB() *sql.DB    { return e.db }
func (e *pgEngine) Path() string   { return "" }
func (e *pgEngine) Schema() string { return e.schema }

// managed is the managed server's description and its TCP address, when
// it listens on one (listen_addresses).
func (e *pgEngine) managed() (Managed, bool) {
	if e.server == nil {
		return Managed{}, false
	}
	m := Managed{Describe: e.server.Describe(), Reclaimed: len(e.server.Reclaimed) > 0 || e.server.ReclaimErr != nil}
	if addr := e.server.Settings()["listen_addresses"]; addr != "" {
		m.TCPDSN = fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable",
			addr, e.cfg.Port, e.cfg.User, e.cfg.Database)
	}
	return m, true
}

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

// connect opens a connection with cc, bounded by e.timeout (ConnectBound);
// a timeout of numalab's own server quotes its log.
func (e *pgEngine) connect(ctx context.Context, cc *pgx.ConnConfig) (*pgx.Conn, error) {
	c, err := ConnectBound(ctx, e.timeout,
		func(ctx context.Context) (*pgx.Conn, error) { return pgx.ConnectConfig(ctx, cc) })
	return c, ownServerTimeout(err, e.ownLog)
}

// Bulk loads with COPY (pgx CopyFrom), one COPY per Flush or per
// pgBulkRows rows, on a connection of its own.
func (e *pgEngine) Bulk(ctx context.Context, table string, columns []string) (Bulk, error) {
	if len(columns) == 0 {
		return nil, fmt.Errorf("loading %s: no columns", table)
	}
	c, err := e.connect(ctx, e.connConfig())
	if err != nil {
		return nil, fmt.Errorf("loading %s: connecting to postgres %s: %s", table, e.where, result.Redact(err.Error()))
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
	c, err := e.connect(ctx, cc)
	if err != nil {
		return nil, fmt.Errorf("connecting to postgres %s: %s%s",
			e.where, result.Redact(err.Error()), pgConnectHint(err, e.server != nil))
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
			return fmt.Errorf(
				"pinning postgres backend %d: the server %s is not on this machine (pinning needs a local server)", pid, e.where)
		}
		cmd, err := sysfs.New("/").Cmdline(pid)
		if err != nil || !strings.HasPrefix(cmd, "postgres") {
			return fmt.Errorf("pinning postgres backend %d: no local postgres process has that id "+
				"(is the server in a container or on another machine?)", pid)
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
		return fmt.Errorf("setting postgres DOP: %d needs %d parallel workers, and the server allows %d "+
			"(max_worker_processes; raise it and restart the server)", dop, dop-1, e.workers)
	}
	var maxWorkers int
	if err := e.db.QueryRowContext(ctx,
		"SELECT current_setting('max_parallel_workers')::int").Scan(&maxWorkers); err != nil {
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
	rows, err := e.db.QueryContext(ctx,
		"SELECT name, setting || coalesce(unit, '') FROM pg_settings WHERE name = ANY($1)", pgSettingsRecorded)
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

func (e *pgEngine) Close() error {
	err := e.restorePostmaster()
	if cerr := e.db.Close(); err == nil {
		err = cerr
	}
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

	// The context whose cancellation interrupts the connection (watch).
	watched, unwatched context.Context
	stopWatch          func() bool

	// wire is the connection taken over from pgx by the first fast call
	// (wire_pg.go), nil before; stmts counts the statements it prepared.
	wire  *pgWire
	stmts int
}

// watch makes the cancellation of ctx interrupt the connection, and gives
// the context to hand pgx instead, which pgx need not watch. pgx watches
// the context of each call itself: a registration with the context and
// its removal per call, 6% of the client's CPU per select-only call
// against pgbench's script. A stream passes one context to all its
// calls, so the connection registers once per context. An interruption
// is pgx's own (its default handler): the socket's deadline set to now,
// which ends the call with an error and leaves the connection unusable.
func (c *pgConn) watch(ctx context.Context) (context.Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if ctx.Done() == nil {
		return ctx, nil
	}
	if ctx != c.watched {
		c.unwatch()
		conn := c.c.PgConn().Conn()
		c.watched, c.unwatched = ctx, context.WithoutCancel(ctx)
		c.stopWatch = context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	}
	return c.unwatched, nil
}

func (c *pgConn) unwatch() {
	if c.stopWatch != nil {
		c.stopWatch()
		c.watched, c.unwatched, c.stopWatch = nil, nil, nil
	}
}

// cancelled is err, or the context's error when the context's
// cancellation interrupted the call.
func cancelled(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return err
}

func (c *pgConn) Exec(ctx context.Context, query string, args ...any) error {
	if c.wire != nil {
		return fmt.Errorf("running %q: %w", query, errTakenOver)
	}
	pctx, err := c.watch(ctx)
	if err != nil {
		return err
	}
	_, err = c.c.Exec(pctx, query, args...)
	return cancelled(ctx, err)
}

func (c *pgConn) Query(ctx context.Context, query string, args []any, row func([]any) error) (err error) {
	if c.wire != nil {
		return fmt.Errorf("running %q: %w", query, errTakenOver)
	}
	pctx, err := c.watch(ctx)
	if err != nil {
		return err
	}
	defer func() { err = cancelled(ctx, err) }()
	rows, err := c.c.Query(pctx, query, args...)
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

func (c *pgConn) BackendPID() int { return c.pid }
func (c *pgConn) Close() error {
	c.unwatch()
	if c.wire != nil {
		err := c.wire.close()
		c.c.Close(context.Background()) // pgx's side: nothing left to close after the takeover
		return err
	}
	return c.c.Close(context.Background())
}
