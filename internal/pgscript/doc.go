// Package pgscript parses and runs pgbench's script language, as
// PostgreSQL 15's pgbench documents it, for `numalab run sql`: a user's
// own script files, and pgbench's built-in scripts (Builtin), on any
// engine.
//
//	s, err := pgscript.Parse("bank.sql", f) // the whole script, before anything runs
//	set, err := pgscript.NewSet(pgscript.Options{Placeholders: pgscript.Dollar, Seed: 1, Scale: 10},
//		pgscript.Weighted{Script: s, Weight: 1})
//	c := set.Client(0) // one per stream: its variables and generator
//	for ... {
//		tries, err := c.Run(ctx, conn, c.Choose())
//	}
//
// What it supports: SQL commands ending at a semicolon outside strings,
// quoted identifiers, dollar quotes and comments (or at a meta-command, or
// the end of the script), with :name variables; \set with pgbench's whole
// expression language (integers, doubles, booleans, NULL, its operators,
// CASE, and every function from abs to sqrt, with pgbench's types,
// coercions and errors); \sleep; \if, \elif, \else and \endif; \gset and
// \aset; the automatic variables client_id, scale, random_seed and
// default_seed; definitions (--define); retries of serialization failures
// and deadlocks (--max-tries); weighted scripts (--script FILE@WEIGHT).
//
// Where it differs from pgbench:
//
//   - Variables in SQL are bound parameters ($1 or ?, the Placeholders
//     option), as pgbench -M extended binds them, never text pasted into
//     the SQL; so a variable inside a string literal is not one, and a
//     variable can stand only where a parameter can.
//   - The random functions draw from PostgreSQL's own generator
//     (xoroshiro128**), one per client seeded from the seed and the
//     client's id, but not seeded as pgbench seeds its clients: the same
//     seed gives the same draws here, not pgbench's draws. permute and the
//     hash functions, which take their seed as an argument, give pgbench's
//     values.
//   - \gset and \aset name variables from the query's text, the same on
//     every engine (an alias, a column's name, a function's name), not
//     from what the engine calls its columns: a column without such a name
//     is refused at parse time.
//
// What it refuses: \shell and \setshell (a benchmark run starts no
// shell), \; compound commands, psql's :'name' and :"name", and unknown
// meta-commands, each at parse time with the script, line and column.
package pgscript
