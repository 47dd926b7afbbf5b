// Package transtats is numalab's reporting workload
// (docs/workloads/transtats.md): a tran_stats table of N rows, six small
// dimension tables and their cross join, dimension, and two queries, P1 and
// P2, run in closed loops by streams at a chosen degree of parallelism (DOP).
//
// # Data
//
// Row i (1-based) of tran_stats is a pure function of i and R, the rows per
// second of tran_begin ([RowAt]): two loads of the same N and R hold the
// same rows, on any engine. tran_begin starts at [Start] and advances one
// second every R rows, so a one-second window holds R rows. The table is
// kept in tran_begin order: SQLite as a WITHOUT ROWID table with primary key
// (tran_begin, tran_count), PostgreSQL copied in that order with the same
// primary key marked as its clustering index, DuckDB appended in that order
// (its zone maps then skip row groups outside a window), MariaDB as an
// InnoDB table created with that primary key. On SQLite times are text
// ("2020-01-01 00:00:00"), on MariaDB DATETIME, elsewhere TIMESTAMP.
//
// The dimension tables dim_server_config (40 values), dim_thread_name
// (100), dim_tran_type (3), dim_tran_status (3), dim_users (5) and dim_cpus
// (8) number their values from 1; dimension is their cross join,
// 1,440,000 rows with every id and value.
//
// # Loading
//
// [Open] loads through the engine's bulk path (package engine: COPY on
// PostgreSQL, the appender on DuckDB, prepared multi-row INSERTs on SQLite
// and MariaDB)
// and measures the insert rate of tran_stats in rows per second
// ([LoadStats]). A transtats_meta table marks numalab's data: the workload
// name first, load_complete last. An SQLite or DuckDB file is reused when it
// is complete and of the same N and R; a numalab file of another size or an
// interrupted load is loaded again; any other file is refused, never
// overwritten. On PostgreSQL the tables live in numalab's own schema, on
// MariaDB in numalab's own database.
//
// # Queries
//
// Both queries return (groups, rows). P1 joins tran_stats to dimension on
// the six value columns and counts the groups of the six ids. P2(t) counts
// the rows of the window [t, t+1 s) whose resultset_size is at most the
// average resultset_size of their server_config over the whole table,
// grouped by the six value columns and summed; see [QueryText] for the
// exact SQL and the reasons for its form. The same SQL runs on every
// engine except for how P2's window bounds are written (and MariaDB's
// casts and quoting), and tests check that the engines return the same
// results. MariaDB has no intra-query parallelism: it runs DOP 1 only.
//
// What it does not do: it never writes during a run, and it has no think
// time; P2's t is drawn uniformly (whole seconds) by each stream's own
// seeded RNG.
package transtats
