package engine

// MariaDB (and MySQL 8) as an Engine: a server given by a DSN
// (go-sql-driver/mysql's form, user:password@unix(/path)/ or
// user:password@tcp(host:port)/), or a managed throwaway MariaDB server
// (mariaserver.Start) with its buffer pool sized to the data.
//
// Schema. Everything numalab creates lives in one database
// (Options.Schema, default "numalab"), which every connection uses. Open
// creates it (utf8mb4, utf8mb4_bin: strings compare by code point, as in
// PostgreSQL's C locale) with a marker table, numalab_owner, whose
// comment is schemaMarker: MySQL has no comment on a database. When the
// database exists without that table and comment, Open stops with an
// error: numalab neither uses nor drops a database it did not make. With
// Options.UserSchema and a DSN there is no such database: the connections
// use the DSN's database, if it names one.
//
// Connections. Streams get one connection each (a database/sql pool of
// one, held as one *sql.Conn), whose socket is read in blocking mode on
// the stream's thread (pgconn_blocking.go), as libmysqlclient does. Its
// server thread (MariaDB and MySQL run a connection on a thread of
// their one process) is found in performance_schema.threads
// (THREAD_OS_ID of the connection's PROCESSLIST_ID); with a managed server
// (or Options.PinBackends) Connect pins that thread to the CPUs of the
// calling thread. A server without performance_schema cannot be pinned.
//
// DOP. MariaDB and MySQL run each query on one thread (MySQL's
// innodb_parallel_read_threads speeds only a bare COUNT(*) and CHECK
// TABLE): SetDOP accepts only 1, as on SQLite.

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/numalab/numalab/internal/managed"
	"github.com/numalab/numalab/internal/mariaserver"
)

// ownerTable is the marker table in numalab's MariaDB database.
const ownerTable = "numalab_owner"

func init() {
	// The driver logs to stderr what it also returns as errors, and a
	// connection a stopped server closed: keep the terminal to numalab.
	mysql.SetLogger(log.New(io.Discard, "", 0))
}

type myEngine struct {
	server *mariaserver.Server // nil with a user's DSN
	cfg    *mysql.Config       // the DSN's, with numalab's database
	where  string
	schema string
	pin    bool
	cache  bool // Options.MariaDBCacheMetadata
	// timeout bounds each connection's connecting (ConnectBound).
	timeout time.Duration
	// ownLog is numalab's own server's log, "" with a --dsn server.
	ownLog string
	db     *sql.DB
	// threadCPUs are mariadbd's CPUs before SetDOPPlaced set its threads
	// to a cell's (nil: not set), given back by a cell with no CPUs.
	threadCPUs []int
}

var _ Engine = (*myEngine)(nil)

func openMariaDB(ctx context.Context, opt Options) (_ *myEngine, err error) {
	e := &myEngine{schema: opt.Schema, pin: opt.PinBackends, cache: opt.MariaDBCacheMetadata}
	if e.schema == "" {
		e.schema = DefaultSchema
	}
	dsn, where, srv, err := serverDSN(ctx, "mariadb", opt, func(ctx context.Context) (*mariaserver.Server, error) {
		cfg := opt.MariaDB
		if cfg.BufferPool <= 0 {
			cfg.BufferPool = mariaserver.BufferPoolFor(opt.DataBytes)
		}
		cfg.Settings = serverSettings(cfg.Settings, opt.ServerSettings)
		return mariaserver.Start(ctx, cfg)
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
	if e.cfg, err = mysql.ParseDSN(dsn); err != nil {
		return nil, &pgConnectError{
			msg: fmt.Sprintf("reading MariaDB/MySQL DSN %q: %v (expected user:password@unix(/path/to/socket)/ "+
				"or user:password@tcp(host:port)/)", dsn, err),
			dsn: dsn, err: err,
		}
	}
	e.cfg.ParseTime = true
	base := e.cfg.Clone()
	base.DBName = ""
	c, err := e.connect(ctx, base, nil)
	if err != nil {
		return nil, &pgConnectError{msg: fmt.Sprintf("opening mariadb: connecting to %s: %v%s",
			e.where, err, myConnectHint(err, e.ownLog)), dsn: dsn, err: err}
	}
	if opt.UserSchema && srv == nil {
		e.schema = e.cfg.DBName // the DSN's, maybe none
	} else {
		err = claimDatabase(ctx, c, e.schema)
		e.cfg.DBName = e.schema
	}
	c.Close()
	if err != nil {
		return nil, fmt.Errorf("opening mariadb %s: %w", e.where, err)
	}
	conn, err := mysql.NewConnector(e.cfg)
	if err != nil {
		return nil, fmt.Errorf("opening mariadb %s: %w", e.where, err)
	}
	e.db = sql.OpenDB(conn)
	e.db.SetMaxIdleConns(2)
	return e, nil
}

// connect opens a pool of one connection with cfg, dialling with dial
// when it is not nil, and returns the connection (closing it closes the
// pool's last connection; the pool itself is closed with it). Connecting
// is bounded by e.timeout (ConnectBound); a timeout of numalab's own
// server quotes its log.
func (e *myEngine) connect(ctx context.Context, cfg *mysql.Config,
	dial func(context.Context, string, string) (net.Conn, error)) (*myOne, error) {
	cfg = cfg.Clone()
	if dial != nil {
		cfg.DialFunc = dial
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	c, err := ConnectBound(ctx, e.timeout, db.Conn)
	if err != nil {
		db.Close()
		return nil, ownServerTimeout(err, e.ownLog)
	}
	return &myOne{Conn: c, db: db}, nil
}

// myOne is one connection and the pool that holds only it.
type myOne struct {
	*sql.Conn
	db *sql.DB
}

// Close closes the connection and its pool. A connection the driver
// already closed is not an error: a call cancelled in flight (a cell's
// window closing) makes the driver drop the socket, and the next call on
// it gives driver.ErrBadConn, after which database/sql closes the Conn
// itself and its Close says sql.ErrConnDone.
func (o *myOne) Close() error {
	err := o.Conn.Close()
	if errors.Is(err, sql.ErrConnDone) {
		err = nil
	}
	if derr := o.db.Close(); err == nil {
		err = derr
	}
	return err
}

// claimDatabase creates numalab's database with its marker table, or
// checks that the existing one has it.
func claimDatabase(ctx context.Context, c *myOne, name string) error {
	q := quoteMy(name)
	var n int
	if err := c.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.schemata WHERE schema_name = ?",
		name).Scan(&n); err != nil {
		return fmt.Errorf("looking for database %s: %w", name, err)
	}
	if n == 0 {
		for _, stmt := range []string{
			fmt.Sprintf("CREATE DATABASE %s CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", q),
			fmt.Sprintf("CREATE TABLE %s.%s (note varchar(64)) COMMENT '%s'", q, ownerTable, schemaMarker),
		} {
			if _, err := c.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("creating database %s: %w (the DSN's user needs CREATE)", name, err)
			}
		}
		return nil
	}
	var comment string
	err := c.QueryRowContext(ctx,
		"SELECT table_comment FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
		name, ownerTable).Scan(&comment)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: database %s exists without numalab's table %s: numalab will neither use nor drop it "+
			"(use --schema with another name, or drop the database yourself if it is numalab's)",
			ErrNotOurSchema, name, ownerTable)
	case err != nil:
		return fmt.Errorf("looking for database %s: %w", name, err)
	case comment != schemaMarker:
		return fmt.Errorf("%w: database %s has a table %s with comment %q, not %q: numalab will neither use nor drop it",
			ErrNotOurSchema, name, ownerTable, comment, schemaMarker)
	}
	return nil
}

// quoteMy quotes an identifier with backticks.
func quoteMy(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// myConnectHint suggests what to check for common connection failures;
// ownLog is numalab's own server's log ("" for a --dsn server), whose end
// is quoted where the server closed the connection at once.
func myConnectHint(err error, ownLog string) string {
	own := ownLog != ""
	var me *mysql.MySQLError
	var timeout *ConnectTimeoutError
	if errors.As(err, &timeout) {
		return "" // it says what to check
	}
	if errors.As(err, &me) {
		switch me.Number {
		case 1045:
			return " (check the user name and password in the DSN)"
		case 1049:
			return " (the database does not exist: check the DSN's database name)"
		}
		return ""
	}
	switch {
	case own && (errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)):
		return " (numalab's own server is no longer running: it stopped or was killed; run again to start a fresh one)"
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOENT):
		return " (is the server running and listening at that socket or host and port? " +
			"omit --dsn to let numalab start its own server)"
	case errors.Is(err, context.DeadlineExceeded):
		return " (no answer in time: check the host name, port and firewall)"
	case errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, driver.ErrBadConn):
		// The driver's word for a connection the server closed before
		// or during the handshake (it logs the cause, which numalab
		// silences).
		if own {
			return ": numalab's own server closed the connection at once, before it answered the handshake" +
				cmp.Or(managed.LogTail(ownLog), "; its log "+ownLog+" is empty")
		}
		return ": the server closed the connection at once, before it answered the handshake " +
			"(is a MariaDB or MySQL server listening there, and does it take this client: " +
			"max_connections, host-based rules, TLS required? its error log says why)"
	}
	return ""
}

func (e *myEngine) Name() string   { return "mariadb" }
func (e *myEngine) DB() *sql.DB    { return e.db }
func (e *myEngine) Path() string   { return "" }
func (e *myEngine) Schema() string { return e.schema }

// Server is the managed server, nil with a user's DSN.
func (e *myEngine) Server() *mariaserver.Server { return e.server }

// SetDOP accepts only 1: MariaDB and MySQL run a query on one thread.
func (e *myEngine) SetDOP(ctx context.Context, dop int) error {
	if err := checkDOP("mariadb", dop); err != nil {
		return err
	}
	if dop != 1 {
		return fmt.Errorf("setting mariadb DOP: %d, but MariaDB and MySQL run each query on one thread (use DOP 1)", dop)
	}
	return nil
}

// mySettingsRecorded are the server variables Describe records.
var mySettingsRecorded = []string{
	"innodb_buffer_pool_size", "innodb_buffer_pool_instances", "innodb_flush_log_at_trx_commit", "innodb_flush_method",
	"innodb_doublewrite", "innodb_log_file_size", "innodb_io_capacity", "innodb_read_io_threads",
	"innodb_write_io_threads",
	"thread_handling", "thread_pool_size", "max_connections", "performance_schema", "query_cache_type",
	"tmp_table_size", "max_heap_table_size", "join_buffer_size", "sort_buffer_size", "optimizer_switch",
	"collation_server", "transaction_isolation", "tx_isolation", "log_bin", "sync_binlog", "version_comment",
}

func (e *myEngine) Describe(ctx context.Context) (Info, error) {
	in := Info{Engine: "mariadb", Where: e.where, Settings: map[string]string{}}
	if err := e.db.QueryRowContext(ctx, "SELECT version()").Scan(&in.Version); err != nil {
		return in, fmt.Errorf("describing mariadb: %w", err)
	}
	rows, err := e.db.QueryContext(ctx,
		"SELECT lower(variable_name), variable_value FROM information_schema.global_variables")
	if err != nil {
		// MySQL 8 keeps them in performance_schema.
		rows, err = e.db.QueryContext(ctx, "SELECT variable_name, variable_value FROM performance_schema.global_variables")
	}
	if err != nil {
		return in, fmt.Errorf("describing mariadb: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return in, fmt.Errorf("describing mariadb: %w", err)
		}
		if slices.Contains(mySettingsRecorded, strings.ToLower(k)) {
			in.Settings[strings.ToLower(k)] = v
		}
	}
	if err := rows.Err(); err != nil {
		return in, fmt.Errorf("describing mariadb: %w", err)
	}
	in.Settings["schema"] = e.schema
	in.Settings["server threads pinned"] = strconv.FormatBool(e.pin)
	in.Settings["stream connections"] = "one per stream, blocking socket I/O on the stream's thread"
	if e.server != nil {
		in.Settings["server user"] = e.server.User
		in.Settings["server binaries"] = e.server.BinDir
	}
	return in, nil
}

// Explain runs EXPLAIN and keeps, per row, the access path without the
// row estimates: id, select_type, table, type, key, Extra.
func (e *myEngine) Explain(ctx context.Context, query string, args ...any) (string, error) {
	rows, err := e.db.QueryContext(ctx, "EXPLAIN "+query, args...)
	if err != nil {
		return "", fmt.Errorf("explaining on mariadb: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", fmt.Errorf("explaining on mariadb: %w", err)
	}
	keep := map[string]bool{"id": true, "select_type": true, "table": true, "type": true, "key": true, "Extra": true}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var lines []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return "", fmt.Errorf("explaining on mariadb: %w", err)
		}
		var f []string
		for i, c := range cols {
			if keep[c] && vals[i].Valid {
				f = append(f, c+"="+vals[i].String)
			}
		}
		lines = append(lines, strings.Join(f, " "))
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("explaining on mariadb: %w", err)
	}
	return normalisePlan(lines), nil
}

// Prewarm reads every table of numalab's database through each of its
// indexes (the primary key is the table itself in InnoDB), which brings
// their pages into the buffer pool, on a connection of its own whose
// server thread runs on the calling thread's CPUs (a managed server's,
// or with Options.PinBackends), so that the pages it reads land on their
// node. On a managed server it then says where the buffer pool lies
// (Placement, mariadb_place.go).
func (e *myEngine) Prewarm(ctx context.Context) (PrewarmStats, error) {
	st := PrewarmStats{Method: "index scans"}
	cn, err := e.Connect(ctx)
	if err != nil {
		return st, fmt.Errorf("prewarming mariadb: %w", err)
	}
	defer cn.Close()
	if e.pin {
		st.Method = "index scans on a server thread pinned to the prewarming thread's CPUs"
	}
	c := cn.(*myConn).one
	rows, err := c.QueryContext(ctx, `SELECT s.table_name, s.index_name, max(t.data_length + t.index_length)
		FROM information_schema.statistics s JOIN information_schema.tables t USING (table_schema, table_name)
		WHERE s.table_schema = ? AND s.table_name <> ? GROUP BY s.table_name, s.index_name ORDER BY 1, 2`,
		e.schema, ownerTable)
	if err != nil {
		return st, fmt.Errorf("prewarming mariadb: %w", err)
	}
	type idx struct{ table, index string }
	var idxs []idx
	sizes := map[string]int64{}
	for rows.Next() {
		var i idx
		var size int64
		if err := rows.Scan(&i.table, &i.index, &size); err != nil {
			rows.Close()
			return st, fmt.Errorf("prewarming mariadb: %w", err)
		}
		idxs = append(idxs, i)
		sizes[i.table] = size
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("prewarming mariadb: %w", err)
	}
	for _, i := range idxs {
		var n int64
		q := fmt.Sprintf("SELECT count(*) FROM %s FORCE INDEX (%s)", quoteMy(i.table), quoteMy(i.index))
		if err := c.QueryRowContext(ctx, q).Scan(&n); err != nil {
			return st, fmt.Errorf("prewarming mariadb table %s through index %s: %w", i.table, i.index, err)
		}
		st.Objects++
	}
	for _, s := range sizes {
		st.Bytes += s
	}
	if st.Placement, err = e.poolPlacement(ctx); err != nil {
		return st, fmt.Errorf("prewarming mariadb: %w", err)
	}
	return st, nil
}

func (e *myEngine) Close() error {
	err := e.db.Close()
	if e.server != nil {
		if serr := e.server.Stop(); err == nil {
			err = serr
		}
	}
	return err
}

func (e *myEngine) Discard() error { return e.Close() }

// managed is the managed server's description and its TCP address.
func (e *myEngine) managed() (Managed, bool) {
	if e.server == nil {
		return Managed{}, false
	}
	return Managed{Describe: e.server.Describe(), Reclaimed: len(e.server.Reclaimed) > 0 || e.server.ReclaimErr != nil,
		TCPDSN: e.server.TCPDSN()}, true
}
