package engine

// The engine interface: what a workload and the driver need from a database,
// whichever it is.
//
//	eng, err := engine.Open(ctx, "postgres", engine.Options{DataBytes: n}) // or "sqlite", "duckdb"
//	if err != nil { ... }
//	defer eng.Close()
//	b, err := eng.Bulk(ctx, "t", []string{"a", "b"})   // fastest bulk path
//	... b.Append(1, "x") ... b.Close()
//	eng.SetDOP(ctx, 4)                                   // then open the streams
//	c, err := eng.Connect(ctx)                           // one per stream, on its thread
//
// An Engine knows no workload: a workload writes its own SQL, spelled as
// the engine's SQL says (SQLOf(Engine.Name()): placeholders, types,
// casts, the marker table, statistics), and, where speed matters, asks a
// stream's connection for a fast path (fast.go: prepared statements,
// repeated calls, batches, COPY, the Appender); no driver handle leaves
// this package. The engine gives every engine the same
// five things: a setup handle (DB) for schema statements and checks, a bulk
// loader, stream connections, the degree of parallelism of one query, and a
// description (version, settings) and query plans for the record.
//
// What each engine refuses:
//
//   - sqlite runs every query on one thread: SetDOP accepts only 1.
//   - duckdb's DOP is its one thread pool (SET threads), shared by every
//     connection of the database: it is not per stream.
//   - postgres creates, loads and drops objects only inside its own schema
//     (Options.Schema, default "numalab"), which it marks with a comment
//     when it creates it; it refuses to use a schema of that name that it
//     did not create, and never drops a schema.
//   - mariadb (MariaDB, or MySQL 8 through a DSN) does the same with its
//     own database (a MySQL schema), marked by a table; it runs each query
//     on one thread: SetDOP accepts only 1.

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"runtime"
	"strings"
	"time"

	"github.com/numalab/numalab/internal/mariaserver"
	"github.com/numalab/numalab/internal/pgserver"
	"github.com/numalab/numalab/internal/place"
)

// Engine is one opened database. Open one with [Open]; Close it when done.
// Its methods may be called from any goroutine, one at a time; connections
// from Connect belong to one stream each.
type Engine interface {
	// Name is the engine's name in the registry (Lookup): "sqlite",
	// "duckdb", "postgres" or "mariadb".
	Name() string
	// DB is a database/sql handle for schema statements, index builds,
	// checks and reports, not for the measured hot path. On PostgreSQL its
	// connections use numalab's schema (search_path) and the current DOP.
	DB() *sql.DB
	// Path is the database file (SQLite, DuckDB); "" on PostgreSQL.
	Path() string
	// Schema is numalab's PostgreSQL schema (MariaDB database); "" on
	// SQLite and DuckDB.
	Schema() string
	// Bulk starts a bulk load into table (which must exist) of the given
	// columns, by the engine's fastest path: COPY on PostgreSQL, the
	// Appender on DuckDB, prepared multi-row INSERTs in large transactions
	// on SQLite.
	Bulk(ctx context.Context, table string, columns []string) (Bulk, error)
	// Connect opens one stream's connection. Call it on the stream's own
	// locked and pinned OS thread: on PostgreSQL the new backend is then
	// pinned to that thread's CPUs (Options.PinBackends).
	Connect(ctx context.Context) (Conn, error)
	// SetDOP sets the degree of parallelism of one query, for DB and for
	// connections opened afterwards (open streams after it): PostgreSQL
	// max_parallel_workers_per_gather = dop−1, DuckDB threads = dop,
	// SQLite only 1. A dop above the machine's CPUs is refused.
	SetDOP(ctx context.Context, dop int) error
	// Describe says which engine and version this is and lists the settings
	// that shape a measurement, for the record.
	Describe(ctx context.Context) (Info, error)
	// Explain returns query's plan at the current DOP (args bind its
	// parameters), normalised for comparison: no costs, row estimates or
	// timings, so that two plans are the same exactly when their texts are.
	Explain(ctx context.Context, query string, args ...any) (string, error)
	// Prewarm brings numalab's data into memory from the calling thread:
	// the file's pages (SQLite), every value of every table (DuckDB), every
	// table and index of numalab's schema (PostgreSQL, pg_prewarm when the
	// server has it, else scans).
	Prewarm(ctx context.Context) (PrewarmStats, error)
	// Close closes the engine's handles, and stops a managed server.
	Close() error
	// Discard closes the engine after a load that failed and removes what
	// Open created for it: the new file (SQLite and DuckDB with
	// Options.Create). On PostgreSQL it removes nothing (a workload drops
	// its own tables inside numalab's schema; a managed server is thrown
	// away anyway).
	Discard() error
}

// Conn is one stream's connection.
type Conn interface {
	// Exec runs a statement.
	Exec(ctx context.Context, query string, args ...any) error
	// Query runs query and calls row once per result row with its values,
	// normalised across engines: integers int64, floating point and
	// PostgreSQL numeric float64 (integral numerics int64), text string,
	// NULL nil, dates and times time.Time. The slice is reused by the next
	// row.
	Query(ctx context.Context, query string, args []any, row func(vals []any) error) error
	// BackendPID is the server process serving this connection
	// (PostgreSQL) or its server thread (MariaDB, from
	// performance_schema), 0 for an in-process engine.
	BackendPID() int
	Close() error
}

// Bulk is a bulk load into one table. Values are int64 (or int), float64,
// string, []byte, time.Time or nil, in the columns' order.
type Bulk interface {
	// Append adds one row. The engine may keep the values (strings
	// included) until the next Flush: do not change their memory before.
	Append(vals ...any) error
	// Flush hands the rows appended so far to the engine. After it returns
	// the caller may reuse the values' memory. The engine may hold the rows
	// (copied) a while longer: other connections see them after Close.
	Flush() error
	// Close flushes and ends the load; Rows is then final.
	Close() error
	// Rows is how many rows have been appended.
	Rows() int64
}

// Info describes an engine for the record.
type Info struct {
	Engine  string `json:"engine"`
	Version string `json:"version"`
	// Where is the file (SQLite, DuckDB), or the server (a DSN with the
	// password hidden, or the managed server's description, "managed PostgreSQL ..."), of the database.
	Where string `json:"where"`
	// Settings shape a measurement: caches, parallelism, memory, pinning.
	Settings map[string]string `json:"settings"`
}

// PrewarmStats say what Prewarm read.
type PrewarmStats struct {
	Bytes   int64  `json:"bytes"`   // data read (file bytes, or relation sizes)
	Objects int    `json:"objects"` // tables, indexes or columns read
	Method  string `json:"method"`  // how: "read file", "pg_prewarm, scans", "scans (pg_prewarm not used: why)"
	// Placement is where the data's memory is, per NUMA node, when the
	// engine can tell: PostgreSQL's shared memory as the prewarming
	// backend maps it (numa_maps).
	Placement *place.NumaUsage `json:"placement,omitempty"`
}

// Options say which database to open and how.
type Options struct {
	// Path is the database file (SQLite, DuckDB).
	Path string
	// Create makes a new file at Path for a load (SQLite, DuckDB), refusing
	// one that exists. Without it the file must exist; SQLite opens it
	// read-only and immutable.
	Create bool

	// DSN is a PostgreSQL server to use (URL or keyword/value), or for
	// mariadb a MariaDB or MySQL server (go-sql-driver/mysql's
	// user:password@unix(/socket)/ or user:password@tcp(host:port)/).
	// Empty means a managed throwaway server (pgserver.Start with PG,
	// mariaserver.Start with MariaDB).
	DSN string
	// PG configures the managed server; when PG.SharedBuffers is 0 it is
	// pgserver.SharedBuffersFor(DataBytes).
	PG pgserver.Config
	// MariaDBCacheMetadata asks a MariaDB server, for stream connections
	// (Connect), to send a prepared statement's column definitions only
	// when they change (mariadb_meta.go), as libmariadb does under
	// sysbench: for the repeated calls (Repeater, wire_mariadb.go), which
	// read such answers. Such a connection refuses Prepare: the driver's
	// prepared statements cannot read them.
	MariaDBCacheMetadata bool
	// MariaDB configures a managed MariaDB server (a "mariadb" engine
	// without DSN); when MariaDB.BufferPool is 0 it is
	// mariaserver.BufferPoolFor(DataBytes).
	MariaDB mariaserver.Config
	// ServerSettings are extra settings a managed server (PostgreSQL or
	// MariaDB) starts with, over PG.Settings and MariaDB.Settings (a
	// library to preload, a log to keep); a --dsn server is never started,
	// so they do not apply to it.
	ServerSettings map[string]string
	// TCP asks a managed PostgreSQL server to listen on a loopback address
	// too (ManagedServer's TCPDSN); a managed MariaDB server always does.
	TCP bool
	// DataBytes is about how large the data to load is, to size caches.
	DataBytes int64
	// Schema is numalab's PostgreSQL schema (default "numalab").
	Schema string
	// ConnectTimeout bounds connecting to a server, each connection
	// (PostgreSQL, MariaDB); 0 means DefaultConnectTimeout for a --dsn
	// server, OwnServerConnectTimeout for numalab's own.
	ConnectTimeout time.Duration
	// PinBackends pins each PostgreSQL backend to the CPUs of the thread
	// that called Connect. Always done with a managed server; with a DSN
	// only when set, and only for a backend that is a local postgres
	// process.
	PinBackends bool
	// Write opens an existing SQLite or DuckDB file read-write, for DB
	// and for the streams' connections (SQLite: each with a busy timeout
	// of WriteBusyTimeout), not read-only: a workload whose statements
	// are the user's (run sql) may write. Ignored with Create, which
	// writes anyway.
	Write bool
	// UserSchema, with a DSN, leaves the connections in the database and
	// search path the DSN and the server give, and Open creates no schema
	// (MariaDB database) of numalab's there: a workload whose statements
	// are the user's (run sql) reads the user's tables and writes nothing
	// of its own. Ignored for a managed server, whose schema is numalab's.
	UserSchema bool
}

// BindServer is o with a managed server's memory bound to node, for
// --data-node (node < 0: o as it is): the postmaster or mariadbd, and so
// every backend or thread that touches the shared buffers first, takes
// its memory there, where PlaceData then checks it. A --dsn server is not
// numalab's to start, and is left as it is.
func (o Options) BindServer(node int) Options {
	if o.DSN == "" && node >= 0 {
		o.PG.MemPolicy = place.Policy{Mode: place.Bind, Nodes: []int{node}}
		o.MariaDB.MemPolicy = o.PG.MemPolicy
	}
	return o
}

// Engines lists the engine names Open knows.
var Engines = Names(nil)

// Open opens the named engine.
func Open(ctx context.Context, name string, opt Options) (Engine, error) {
	switch name {
	case "sqlite":
		return openSQLite(opt)
	case "duckdb":
		return openDuckDB(ctx, opt)
	case "postgres":
		return openPostgres(ctx, opt)
	case "mariadb":
		return openMariaDB(ctx, opt)
	}
	return nil, fmt.Errorf("opening engine: unknown engine %q (expected %s)", name, List(nil))
}

// checkDOP refuses a DOP that is not positive or exceeds the machine's CPUs.
func checkDOP(engine string, dop int) error {
	if dop < 1 {
		return fmt.Errorf("setting %s DOP: %d is not a positive degree of parallelism (try 1)", engine, dop)
	}
	if n := runtime.NumCPU(); dop > n {
		return fmt.Errorf("setting %s DOP: %d is more than the machine's %d CPUs (try at most %d)", engine, dop, n, n)
	}
	return nil
}

// normalisePlan trims trailing spaces and blank lines.
func normalisePlan(lines []string) string {
	var out []string
	for _, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		if l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// normalise converts a driver's value to Conn.Query's types.
func normalise(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		return int64(x)
	case float32:
		return float64(x)
	case []byte:
		return string(x)
	case *big.Int:
		if x.IsInt64() {
			return x.Int64()
		}
		f, _ := new(big.Float).SetInt(x).Float64()
		return f
	}
	return v
}
