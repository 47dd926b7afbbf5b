// Package pages is the page-size experiment ('numalab run pages'): the
// model's latency points measured on one machine, one node included. A
// tpcc-ro SQLite database is copied into anonymous memory twice, once
// advised MADV_NOHUGEPAGE (4 KiB pages) and once MADV_HUGEPAGE (2 MiB
// pages), and read in place by SQLite (engine.OpenSQLiteImage); tpcc's
// own Order-Status and Stock-Level transactions (tpcc.Stream, drawing
// from warehouse 1) run on one pinned CPU, each twice in a row with the
// same inputs: cold, then hot from the caches the first run filled. Each
// cell is followed by a timing of a random chain in memory mapped like
// its image and as large, and by a sample of the speed sentinel; the
// caches' latency is a chain half the size of the level-2 cache. A and M
// are fitted to the kept cells (calib.MeasuredFit, stored as a run of
// kind calib.RunFit).
//
// A server engine's own buffers are measured the same way (RunConfig
// .Engine, serverSides): two managed servers with tpcc-ro W=1, PostgreSQL's
// shared buffers with huge_pages off and on (MariaDB's buffer pool with
// large pages off and on), the 2 MiB pages reserved from the kernel's pool
// by package hugepages and given back after; each server's data mapping is
// checked in a backend's smaps, and a server whose setting did not decide
// its page size is refused, as is DuckDB, which has no such setting.
//
// RunConfig.Script puts the user's scripts in the cells of a server
// engine in place of tpcc-ro, as 'run sql' takes them (package sqlscript):
// each server runs --init, timed, and prewarms what it made; a cell's
// transaction is a script chosen by weight, its hot run the same script
// with the same draws (pgscript.Client's Mark and Rewind); the fit's
// workload is the scripts' names (calib.ScriptsWorkload). On SQLite the
// scripts run on the image of DB, read-only by design: a script that
// writes fails at its write, naming the statement; --init is refused
// there.
//
// It refuses a database that is not tpcc (no tpcc_meta), a CPU this
// process may not run on, and counts nothing it could not read: a cell
// whose hardware counters could not be opened or read says why. It
// prints only to the writer it is given (Run); the command stores the
// fit.
package pages
