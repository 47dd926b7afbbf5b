// Package tpcc is numalab's tpcc-ro workload: a TPC-C database loaded with
// the specification's row counts and value distributions, checked with its
// consistency conditions, and driven with only its two read-only
// transactions, Order-Status and Stock-Level, 50/50
// (docs/workloads/tpcc-ro.md).
//
// Clause numbers in comments refer to the TPC-C Standard Specification,
// revision 5.11.
//
// # Loading
//
// Load fills a new database (a file made with engine.Options.Create, or
// numalab's PostgreSQL schema): ITEM (100,000 rows) and, per warehouse,
// STOCK 100,000, DISTRICT 10, CUSTOMER 30,000, HISTORY 30,000, ORDER
// 30,000, NEW-ORDER 9,000 and ORDER-LINE about 300,000 (Clause 4.3.3.1),
// with NURand and its C constants (2.1.6), last names from syllables
// (4.3.2.3), a-strings and n-strings (4.3.2.2), zip codes (4.3.2.7) and
// "ORIGINAL" in exactly 10% of I_DATA and S_DATA. One goroutine generates
// rows while another inserts them by the engine's fastest path: on SQLite
// prepared multi-row INSERTs, a write transaction per chunk, no journal;
// COPY on PostgreSQL; the Appender on DuckDB. Indexes come after the data.
// The generator is the same for all engines, so the same seed and load
// time give the same rows everywhere (money is double precision, dates
// text). After the load, the consistency conditions run (Check); only then
// is a load_complete row written to the marker table. Open refuses a
// database without it, and a failed or cancelled load removes what it
// created (the file, through Prepare; its tables in PostgreSQL).
//
// # Running
//
//	w, loaded, err := tpcc.Prepare(ctx, tpcc.Source{Engine: "postgres", Load: tpcc.LoadConfig{Warehouses: 4}})
//	defer w.Engine().Close()
//	s, err := w.OpenStream(ctx, rng) // per stream, on its pinned thread
//
// Prepare opens a database, loading it first where it is missing; Open
// alone opens an engine that holds a load. Each stream owns its connection,
// its prepared statements and its random numbers, and runs transactions
// with Next, each in one read transaction, on the engine's fast path where
// database/sql's per-call cost would show (engine.Prepare: on SQLite its C
// API, one cgo call a statement; database/sql costs several times SQLite's own
// work for these short transactions). The warehouse and
// district of each call are drawn uniformly. With Options.Augmented, every
// transaction also computes avg(i_price) over the items with i_id < 15000,
// which adds a 15,000-row range scan.
//
// # Engines
//
// The package picks its way of running on an engine once, by how the
// engine keeps a table and whether it is a server (dialect.go's kindOf),
// takes the engine's spelling of the generic SQL from engine.SQL, and
// knows nothing about how the engine was opened. DuckDB gets no indexes (rows in key order and zone maps);
// its streams share one database, each with its own connection.
// PostgreSQL gets primary keys, the two indexes and VACUUM ANALYZE inside
// numalab's schema; there each transaction is one call of a PL/pgSQL
// function (order_status, stock_level, and the _aug variants), and
// PgbenchScripts writes pgbench scripts that make the same calls.
//
// What the package does not do: it runs none of the three read-write
// transactions, keeps no terminal-to-warehouse binding, and has no think or
// keying times.
//
// # Memory placement
//
// Streams share one copy of the data: every connection memory-maps the file
// (mmap_size covers it, up to SQLite's 2 GiB limit), so all of them read
// the kernel's page cache pages rather than private copies. On a NUMA
// machine those pages live on the node where they first entered the page
// cache, "first touch": the node of the thread whose read (or, right after
// a load, whose write) brought them in, not the node of the threads that
// later map or read them. Prewarm, called with evict from a thread pinned to
// node N before streams open the file, drops the file's cached pages and
// reads them back from that thread, which places the data on node N; pages
// still mapped by open connections cannot be dropped and stay where they
// were. Driving that data from threads on another node is the remote half
// of the local-versus-remote experiment.
package tpcc
