package sqlscript

import (
	"errors"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/pgscript"
)

// dialect is what differs per engine for a script, keyed by the
// registry's dialect: how a bound parameter is written, and which errors
// are worth retrying the transaction for. The registry has no
// placeholder field; this is the one place that decides it.
type dialect struct {
	placeholders pgscript.Placeholders
	// retryable: a serialization failure or a deadlock.
	retryable func(error) bool
}

var dialects = map[engine.Dialect]dialect{
	// SQLITE_BUSY (and SQLITE_LOCKED) that the busy timeout could not
	// wait out: two transactions that each read and then write, SQLite's
	// deadlock.
	engine.SQLite: {pgscript.Question, func(err error) bool {
		var e sqlite3.Error
		return errors.As(err, &e) && (e.Code == sqlite3.ErrBusy || e.Code == sqlite3.ErrLocked)
	}},
	// DuckDB's transaction conflicts ("TransactionContext Error: Conflict
	// on ..."), its optimistic concurrency control's serialization
	// failure.
	engine.DuckDB: {pgscript.Dollar, func(err error) bool {
		var e *duckdb.Error
		return errors.As(err, &e) && e.Type == duckdb.ErrorTypeTransaction
	}},
	// SQLSTATE 40001 serialization_failure, 40P01 deadlock_detected.
	engine.Postgres: {pgscript.Dollar, func(err error) bool {
		var e *pgconn.PgError
		return errors.As(err, &e) && (e.Code == "40001" || e.Code == "40P01")
	}},
	// ER_LOCK_DEADLOCK 1213, ER_LOCK_WAIT_TIMEOUT 1205.
	engine.MariaDB: {pgscript.Question, func(err error) bool {
		var e *mysql.MySQLError
		return errors.As(err, &e) && (e.Number == 1213 || e.Number == 1205)
	}},
}

// dialectOf is the engine named name's registry entry and dialect; ok
// false for an engine run sql does not know.
func dialectOf(name string) (engine.Spec, dialect, bool) {
	spec, ok := engine.Lookup(name)
	if !ok {
		return spec, dialect{}, false
	}
	d, ok := dialects[spec.Dialect]
	return spec, d, ok
}

// Engines lists the engines run sql runs on.
func Engines() string {
	return engine.List(func(s engine.Spec) bool { _, ok := dialects[s.Dialect]; return ok })
}
