// Package inspect reads where the space goes in a database: per table its
// rows, reserved, data, index and unused bytes; per index its key and
// included columns, uniqueness, partial predicate, size and (PostgreSQL)
// usage counters. It works on SQLite and DuckDB files and on PostgreSQL
// databases, numalab's own or any other.
//
// It only reads. SQLite files are opened read-only and immutable, and their
// pages read with a plain read-only open; DuckDB files are opened with
// access_mode=READ_ONLY; PostgreSQL is queried inside a READ ONLY
// transaction. It refuses a database file that does not exist rather than
// let an embedded engine create it.
//
// What an engine cannot tell is left nil in the result and said in its
// Notes: DuckDB keeps no per-index sizes, PostgreSQL's free space inside
// pages needs the pgstattuple extension, which inspect does not install.
package inspect

import "time"

// Options narrow and deepen an inspection.
type Options struct {
	// Schema limits a PostgreSQL inspection to one schema ("": every
	// schema but the system's).
	Schema string
	// ExactRows counts rows with count(*) where the engine would otherwise
	// give an estimate (PostgreSQL's reltuples, DuckDB's estimated_size).
	// SQLite's rows are always exact.
	ExactRows bool
	// ConnectTimeout bounds connecting to a server (0:
	// engine.DefaultConnectTimeout).
	ConnectTimeout time.Duration
}

// Target is the database to inspect.
type Target struct {
	// Engine is "sqlite", "duckdb" or "postgres" (a file's engine is what
	// its first bytes say: engine.FileEngine).
	Engine string
	// Path is the SQLite or DuckDB file.
	Path string
	// DSN is the PostgreSQL database.
	DSN string
}
