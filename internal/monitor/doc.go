// Package monitor measures what monitoring costs: the throughput of
// tpcc-ro cells ('numalab run oltp --monitor') or of the null
// transaction's ('numalab run null --monitor') with one facility off and
// on, interleaved, with repeats, and the ratio on/off with its confidence
// interval (docs/monitoring.md).
//
// The facilities are PostgreSQL's (pg_stat_statements, auto_explain with
// and without log_analyze, log_min_duration_statement = 0,
// track_io_timing), MariaDB's (performance_schema, the general log, the
// slow log with long_query_time = 0, and with query_plan,explain: see
// mariadb.go) and numalab's own instruments (the per-call trace,
// sysmon, the per-second series). A PostgreSQL facility is switched per
// cell by SQL each stream's session runs when it connects (SET, and LOAD
// for auto_explain): the server's configuration is never changed, so
// there is nothing to restore and a killed numalab leaves nothing
// behind. pg_stat_statements needs its library preloaded, which takes a
// restart: numalab's managed server starts with it; on a user's server
// (--dsn, only with --allow-settings) CheckServer refuses before anything
// is measured when it is not preloaded, and says how to enable it.
// numalab's own instruments are switched through sweep.Plan.Switch.
//
// Plan lays the cells out, Wrap runs them through the sweep with each
// cell's facility switched and stores each as a Cell, and Analyze turns
// the cells into one Overhead per facility. The package measures; it does
// not judge: a cost is stated with its interval, and "cannot tell" when
// the interval holds 1.
package monitor
