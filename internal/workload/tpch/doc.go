// Package tpch is numalab's decision-support workload
// (docs/workloads/tpch.md): the TPC-H schema, a data generator written from
// the TPC-H specification, a parallel loader into SQLite, DuckDB and
// PostgreSQL, and the 22 queries with the specification's substitution
// parameters. Results measured with it are TPC-H-derived, not audited TPC-H
// results.
//
// # Data
//
// [Load] creates the eight tables and fills them for a scale factor SF
// ([CountsFor]: SF × 10,000 suppliers, 200,000 parts, 800,000 partsupps,
// 150,000 customers, 1,500,000 orders and about 6,000,000 lineitems; 25
// nations and 5 regions). Every row is a function of the seed and its key
// alone (each row draws from its own RNG), so the workers, which split
// the key ranges between them, give the same data however many there are.
// Keys, value ranges, derived columns (extended and total prices, line
// and order status, return flags, ship, commit and receipt dates) and the
// comment text follow the specification's clause 4.2; docs/workloads/tpch.md
// lists what is simplified.
//
// Each engine loads by its bulk path: COPY in binary format on PostgreSQL,
// each worker streaming each table's rows into a COPY of its own as it
// makes them (load_postgres.go); on DuckDB one
// INSERT a table from a table function that DuckDB's threads call for
// rows, which they generate a chunk of keys at a time (load_duckdb.go);
// prepared multi-row INSERTs on SQLite (load_sqlite.go). Decimals are DECIMAL(15,2) on PostgreSQL and
// DuckDB and doubles on SQLite; dates are text on SQLite. PostgreSQL gets
// primary keys after the load, SQLite has them from the start, DuckDB has
// none. [EstimatedBytes] says how much a load writes, before it starts.
//
// # Queries
//
// [QueryFor] returns query 1 to 22 for an engine, its parameters drawn as
// qgen draws them from an RNG of the seed: the same seed gives the same
// parameters on every engine. The SQL is the specification's; date
// arithmetic on parameters is done before the SQL is written, year
// extraction has an SQLite form, and Q15's view is a WITH clause. A test
// loads SF 0.01 into the three engines and checks that all 22 queries
// return the same rows.
//
// # Running
//
// [Open] loads or reuses numalab's data, marked by a tpch_meta table.
// [Sweep] is the workload for the sweep engine ('numalab run tpch'): power
// cells (one query, one stream, per DOP) with the plan and its estimated
// cost ([Explain]), and throughput cells (S streams, each a permutation of
// the queries). [Analyze] turns the cells into speedup against DOP, plan
// changes, the cost model against the clock and a DOP recommendation.
//
// What it refuses: a scale factor that is not positive (or below one
// supplier) or that the disk cannot hold, a query number outside 1–22,
// SQLite at a DOP above 1, and a file or tables that hold tpch tables
// without numalab's marker (left untouched).
package tpch
