// Package sqlscript is 'numalab run sql': the user's own SQL, as pgbench
// script files (--script FILE[@WEIGHT]) or pgbench's built-in scripts
// (--builtin NAME[@WEIGHT]), run through numalab's sweep (streams ×
// placement × repeats, warm-up, pinning, pacing, Ctrl-C keeping what was
// measured) on SQLite, DuckDB, PostgreSQL and MariaDB. The language is
// package pgscript's; this package turns it into a sweep.Workload.
//
// A cell's call is one transaction: the stream's pgscript.Client chooses
// a script by weight and runs it on the stream's own engine.Conn. drive
// keeps each script's latency (a script is a transaction type); each
// stream keeps its own per-command figures (pgscript's Observe hook), for
// the calls drive counts alone (drive.Counter), merged when the cell ends:
// calls, failures with the first error's text, mean and percentiles per
// SQL command, as pgbench -r reports them, and the mean of each
// meta-command. Failures are counted, not hidden: the run stops once
// more calls failed than --max-errors allows, saying which script, line
// and error, with every cell measured so far stored. Serialization
// failures and deadlocks, as each engine reports them (dialect.go), are
// retried up to --max-tries.
//
// What it refuses: a script that does not parse (every one is parsed
// before anything connects, errors naming file:line:column); --init on a
// --dsn server or on a --db file that exists (it sets up a fresh database,
// numalab's own managed server or a new file); a --db file that does not
// exist without --init. It writes nothing into the user's database but
// what the scripts do: no schema of numalab's on a --dsn server (the DSN's
// search path is used as it is), no table, and no setting; what it
// records goes into numalab's store.
package sqlscript
