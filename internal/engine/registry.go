package engine

// The registry: each engine's identity and what it can do, as data. The
// rest of numalab asks it (Lookup(name).Server, .SQL, .Storage,
// .Parallel.Query) instead of comparing engine names; a fifth engine is a
// new Spec here, an adapter and an SQL in this package
// (docs/adding-an-engine.md).

import (
	"slices"
	"strings"

	"github.com/numalab/numalab/internal/setting"
)

// Spec is one engine: its identity and its capabilities.
type Spec struct {
	// Name is --engine's value, Engine.Name and the stored runs' engine.
	Name string
	// Title names the engine in messages ("PostgreSQL"); Article is it
	// with its indefinite article ("a PostgreSQL").
	Title, Article string
	// SQL is how the engine spells the SQL every workload writes
	// (dialect.go).
	SQL SQL
	// Server says the engine is a server numalab talks to over a socket,
	// one it starts (managed) or one a --dsn names; otherwise the engine
	// is embedded: a --db file, queried in this process through cgo.
	Server bool
	// FileExt is an embedded engine's database file extension ("" for a
	// server).
	FileExt string
	// Parallel is how one query uses several threads.
	Parallel Parallel
	// Storage is how the engine keeps a table's rows, which a workload
	// chooses its keys and its loader by.
	Storage Storage
	// BulkMethod is how Engine.Bulk loads, for the record.
	BulkMethod string
	// PageCosts says the optimizer prices page reads by settings that a
	// storage probe can advise on (PostgreSQL's random_page_cost and
	// seq_page_cost).
	PageCosts bool
	// Placement is how data is put on a NUMA node, and how it is checked.
	Placement Placement
	// Threads is how a connection's server thread is found and pinned.
	Threads Threads
	// Monitoring names the monitoring facilities the engine offers
	// (internal/monitor's Facilities of this engine).
	Monitoring []string
	// Inspect is what `numalab inspect` reads on this engine.
	Inspect Inspect
	// Plan is the form of the plan planest reads.
	Plan PlanForm
	// Waits is what the engine tells of where its sessions waited, "" when
	// nothing (an embedded engine has no sessions of its own).
	Waits string
}

// Storage is how an engine keeps a table's rows.
type Storage int

const (
	// StorageClustered keeps rows in their primary key's order (InnoDB
	// always, SQLite for a WITHOUT ROWID table: SQL.ClusteredTable): a
	// key is declared with the table, and rows loaded in its order make
	// the tree grow at its end; adding a key later rewrites the table, or
	// cannot be done (SQLite).
	StorageClustered Storage = iota + 1
	// StorageHeap keeps rows in the order they came, indexes beside them
	// (PostgreSQL): a key is best added after a bulk load.
	StorageHeap
	// StorageColumns keeps compressed columns in row groups with min/max
	// zone maps (DuckDB): scans need no index, and an index slows a load.
	StorageColumns
)

// Parallel is an engine's intra-query parallelism.
type Parallel struct {
	// Query says one query may run on more than one thread.
	Query bool
	// DOP is how SetDOP sets the degree of parallelism.
	DOP string
	// Launched says the plan of a query run (planest's ANALYZE) says
	// how many workers it launched.
	Launched bool
	// Refusal says why a DOP above 1 is refused, when it is.
	Refusal string
	// Costed says the optimizer prices parallelism in its plan's cost, so
	// that the estimated speedup against DOP means something.
	Costed bool
}

// Placement is how an engine's data is put on a node (--data-node).
type Placement struct {
	// How the data gets there, and how PlaceData checks that it did.
	How, Verified string
	// FilePages says the data is a file's cached pages, moved and counted
	// by place.MoveFilePages and place.FilePageNodes; otherwise it is
	// memory the engine allocates (a server's shared memory, DuckDB's
	// buffer pool), bound by the thread or server that touches it first.
	FilePages bool
	// Fresh says the database must be opened afresh before its data is
	// placed, so that none of it is in the engine's memory already
	// (DuckDB's buffer pool keeps the blocks a load left).
	Fresh bool
	// ServerMemory names a server's data memory, which the whole server
	// is bound to ("" for an embedded engine).
	ServerMemory string
}

// Threads is how a stream connection's work is found and pinned.
type Threads struct {
	// Own says each connection has a server thread or process of its own
	// that numalab can pin apart from its client (Conn.BackendPID).
	Own bool
	// Find is how that thread is found; Pin how it is pinned.
	Find, Pin string
}

// Inspect is what `numalab inspect` reads.
type Inspect struct {
	// Reads says what is read, and from where.
	Reads string
	// Usage says it reads usage counters since the statistics were reset
	// and each table's last ANALYZE.
	Usage bool
	// Unqualified is the schema whose tables are named without it.
	Unqualified string
	// Catalog is where the sizes and structure are read from.
	Catalog Catalog
}

// Catalog is the kind of catalog `numalab inspect` reads, which engines
// of one family share (a MySQL server's is MariaDB's).
type Catalog int

const (
	// NoCatalog: the engine cannot be inspected.
	NoCatalog Catalog = iota
	// CatalogSQLiteFile is an SQLite file's own b-tree pages.
	CatalogSQLiteFile
	// CatalogDuckDB is DuckDB's duckdb_tables and pragma_storage_info.
	CatalogDuckDB
	// CatalogPostgres is PostgreSQL's pg_class and statistics views.
	CatalogPostgres
	// CatalogMySQL is MariaDB's and MySQL's information_schema.
	CatalogMySQL
)

// PlanForm is the kind of plan planest reads from an engine.
type PlanForm int

const (
	// PlanText is the engine's EXPLAIN text, without cost (SQLite).
	PlanText PlanForm = iota
	// PlanPostgresJSON is EXPLAIN (FORMAT JSON), optionally with ANALYZE.
	PlanPostgresJSON
	// PlanDuckJSON is DuckDB's EXPLAIN (FORMAT JSON): row estimates.
	PlanDuckJSON
	// PlanMySQLJSON is the EXPLAIN text with EXPLAIN FORMAT=JSON's cost
	// where the server gives one.
	PlanMySQLJSON
)

// specs are the engines, in the order help texts list them.
var specs = []Spec{
	{Name: "sqlite", Title: "SQLite", Article: "an SQLite", SQL: sqliteSQL, FileExt: "db",
		Storage: StorageClustered, BulkMethod: "prepared multi-row INSERT in large transactions",
		Parallel: Parallel{DOP: "none: every query runs on one thread, SetDOP accepts only 1",
			Refusal: "SQLite runs each query on one thread"},
		Placement: Placement{FilePages: true,
			How: "the file's clean cached pages dropped and read back from a thread bound to the node, " +
				"pages still elsewhere moved (move_pages)",
			Verified: "the file's cached pages by node (move_pages in query mode): at least 99% on the node"},
		Threads: Threads{Find: "none: the query runs on the stream's own thread", Pin: "the stream's thread is pinned"},
		Inspect: Inspect{Catalog: CatalogSQLiteFile,
			Reads: "the file's b-tree pages read directly (dbstat's accounting) per table and index, " +
				"the freelist, pragma table_info and index lists", Unqualified: "main"},
		Plan: PlanText},
	{Name: "duckdb", Title: "DuckDB", Article: "a DuckDB", SQL: duckSQL, FileExt: "duckdb",
		Storage: StorageColumns, BulkMethod: "appender",
		Parallel: Parallel{Query: true, DOP: "SET threads = dop: one thread pool for every connection of the database"},
		Placement: Placement{Fresh: true,
			How: "the file's pages as SQLite's, " +
				"then the buffer pool filled by one thread bound to the node (SET threads = 1)",
			Verified: "the anonymous memory this process gained per node (numa_maps) against the buffer pool's size"},
		Threads: Threads{Find: "none: the query runs on the stream's thread and DuckDB's own pool",
			Pin: "the stream's thread is pinned; DuckDB's workers are not"},
		Inspect: Inspect{Catalog: CatalogDuckDB,
			Reads: "duckdb_tables' estimated rows, pragma_storage_info's blocks per column, duckdb_indexes, " +
				"pragma_database_size (no per-index sizes)"},
		Plan: PlanDuckJSON},
	{Name: "postgres", Title: "PostgreSQL", Article: "a PostgreSQL", SQL: postgresSQL, Server: true,
		Storage: StorageHeap, BulkMethod: "COPY", PageCosts: true,
		Parallel: Parallel{Query: true, Costed: true, Launched: true,
			DOP: "max_parallel_workers_per_gather = dop-1 in every session"},
		Placement: Placement{ServerMemory: "PostgreSQL's shared memory",
			How: "a managed server's memory bound to the node (the postmaster's policy), " +
				"its shared memory prewarmed by a backend pinned there",
			Verified: "the shared memory's pages by node as the prewarming backend maps it (numa_maps): " +
				"at least 99% on the node"},
		Threads: Threads{Own: true, Find: "pg_backend_pid(): a process per connection",
			Pin: "sched_setaffinity on the backend's PID to its stream's CPUs"},
		Monitoring: []string{"pg_stat_statements", "auto_explain", "auto_explain_analyze", "log_all", "track_io_timing"},
		Inspect: Inspect{Usage: true, Catalog: CatalogPostgres,
			Reads: "every schema but the system's (or --schema): " +
				"pg_relation_size and pg_total_relation_size per table and index, " +
				"pg_stat_user_tables' and _indexes' usage counters and last ANALYZE; " +
				"free space within pages only with pgstattuple"},
		Plan:  PlanPostgresJSON,
		Waits: "pg_stat_activity's wait events, sampled"},
	{Name: "mariadb", Title: "MariaDB", Article: "a MariaDB", SQL: mariadbSQL, Server: true,
		Storage: StorageClustered, BulkMethod: "prepared multi-row INSERT",
		Parallel: Parallel{DOP: "none: every query runs on one thread, SetDOP accepts only 1",
			Refusal: "MariaDB has no intra-query parallelism (each query runs on its connection's one thread)"},
		Placement: Placement{ServerMemory: "MariaDB's buffer pool",
			How: "a managed server's memory bound to the node (mariadbd's policy), " +
				"its buffer pool prewarmed by a connection whose thread is pinned there",
			Verified: "the buffer pool's mappings in mariadbd's numa_maps, per node: at least 99% on the node"},
		Threads: Threads{Own: true, Find: "performance_schema.threads' THREAD_OS_ID of the connection's PROCESSLIST_ID",
			Pin: "sched_setaffinity on that thread's TID"},
		Monitoring: []string{"performance_schema", "general_log", "slow_log", "slow_log_explain"},
		Inspect: Inspect{Catalog: CatalogMySQL,
			Reads: "information_schema.tables (data, index, data_free) and statistics, mysql.innodb_index_stats' index sizes"},
		Plan:  PlanMySQLJSON,
		Waits: "performance_schema's wait sums per thread"},
}

// Lookup is the engine named name; ok is false when there is none (and
// the Spec is then the zero one: no server, no capability).
func Lookup(name string) (Spec, bool) {
	i := slices.IndexFunc(specs, func(s Spec) bool { return s.Name == name })
	if i < 0 {
		return Spec{}, false
	}
	return specs[i], true
}

// Parse is the engine named name, or an error naming the flag --engine,
// the value and the engines there are.
func Parse(name string) (Spec, error) {
	if s, ok := Lookup(name); ok {
		return s, nil
	}
	return Spec{}, setting.Errorf("engine", "%q is not an engine: want %s", name, List(nil))
}

// Specs is every engine, in the order help texts list them.
func Specs() []Spec { return slices.Clone(specs) }

// Names are the engines whose Spec keep says (every one for nil), in
// the registry's order.
func Names(keep func(Spec) bool) []string {
	var out []string
	for _, s := range specs {
		if keep == nil || keep(s) {
			out = append(out, s.Name)
		}
	}
	return out
}

// List is Names for a help text or message: "sqlite, duckdb, postgres
// or mariadb".
func List(keep func(Spec) bool) string {
	return join(Names(keep), "or")
}

// join is "a, b or c".
func join(n []string, last string) string {
	if len(n) < 2 {
		return strings.Join(n, "")
	}
	return strings.Join(n[:len(n)-1], ", ") + " " + last + " " + n[len(n)-1]
}

// Titles is List with the engines' titles and "and" ("PostgreSQL and
// MariaDB").
func Titles(keep func(Spec) bool) string {
	var t []string
	for _, s := range specs {
		if keep == nil || keep(s) {
			t = append(t, s.Title)
		}
	}
	return join(t, "and")
}

// IsServer and IsEmbedded are Names' and List's usual filters.
func IsServer(s Spec) bool   { return s.Server }
func IsEmbedded(s Spec) bool { return !s.Server }

// DefaultServer is the engine a --dsn means when no --engine is given.
const DefaultServer = "postgres"
