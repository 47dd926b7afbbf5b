package engine

// The generic SQL every workload writes, spelled by each engine: a
// workload asks its engine's SQL (Spec.SQL, SQLOf) how to write a bound
// parameter, a type, a cast, a literal, a catalog lookup or a maintenance
// statement, and keeps no table or branch of its own keyed by engine.
// What a workload means (its tables, its loading choices) stays in the
// workload; how an engine spells it is here, one value per engine.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"
)

// SQL is one engine's spelling of the SQL numalab's workloads share.
type SQL interface {
	// Numbered says bound parameters are numbered ($1, $2); otherwise
	// they are positional (?).
	Numbered() bool
	// Placeholder is the n-th (from 1) bound parameter's marker.
	Placeholder(n int) string
	// Placeholders is n markers joined by ", ".
	Placeholders(n int) string
	// Quote is a column or table name that some dialect reserves (KEY,
	// GROUPS): in backticks on MariaDB and MySQL, bare elsewhere
	// (numalab's names are no keyword there).
	Quote(name string) string

	// Type is the engine's name for a portable column type.
	Type(t Type) string
	// Text is a text column of values at most max characters long, as
	// the engine keeps such text best: its unbounded text where that
	// costs nothing (SQLite TEXT, DuckDB VARCHAR, PostgreSQL TEXT),
	// VARCHAR(max) on MariaDB, whose TEXT is kept off the row and indexed
	// only by a prefix.
	Text(max int) string
	// VarChar is a text column declared at most n characters long:
	// VARCHAR(n), or TEXT where the engine has no lengths (SQLite).
	VarChar(n int) string
	// Decimal is an exact number of p digits, s after the point:
	// DECIMAL(p,s), or a double where the engine has no decimal (SQLite's
	// REAL).
	Decimal(p, s int) string
	// IntCasts is q with its casts to an integer type (" AS BIGINT)",
	// " AS INTEGER)") spelled as the engine casts: MariaDB's CAST knows
	// SIGNED, not BIGINT or INTEGER. Elsewhere q itself.
	IntCasts(q string) string
	// Date and Timestamp are literals of t's date, and of its date and
	// time to the second: DATE '1995-03-15' and TIMESTAMP '1995-03-15
	// 10:00:00', or the bare text where dates and times are text
	// (SQLite).
	Date(t time.Time) string
	Timestamp(t time.Time) string
	// Year is the year of a date column, an integer.
	Year(col string) string
	// TextTimes says dates and times are stored, bound and compared as
	// text ('1995-03-15 10:00:00'): the engine has no time type (SQLite).
	TextTimes() bool
	// ClusteredTable ends a CREATE TABLE whose rows are to be kept in
	// their primary key's order: " WITHOUT ROWID" on SQLite, "" where
	// every table is so kept (InnoDB) or none can be.
	ClusteredTable() string

	// TableCount counts the tables named by its one bound parameter in
	// numalab's schema (a server's) or the database file.
	TableCount() string
	// CreateMeta, ReadMeta and WriteMeta make numalab's marker table
	// (key and value text), read its rows (key, value) and write one.
	// The key and value are numalab's own words, never the user's.
	CreateMeta(table string) string
	ReadMeta(table string) string
	WriteMeta(table, key, value string) string
	// Truncate empties table. Where the engine numbers rows for the
	// table (SQLite's rowid, PostgreSQL's identity, MariaDB's
	// AUTO_INCREMENT) numbering starts again at 1; DuckDB's sequences go
	// on (DELETE).
	Truncate(table string) string
	// Analyze gathers the optimizer's statistics of tables (their names
	// are for the engines that analyse a table at a time: PostgreSQL,
	// MariaDB; SQLite and DuckDB analyse the whole database).
	// AnalyzeLoaded does it after a bulk load, with the housekeeping a
	// fresh table wants as well: PostgreSQL's VACUUM ANALYZE (of every
	// table the connection may vacuum: its tables are ignored), whose
	// VACUUM sets the visibility map that index-only scans read.
	Analyze(tables ...string) string
	AnalyzeLoaded(tables ...string) string
	// Checkpoint writes what the engine holds of committed changes into
	// the database file ("CHECKPOINT" on DuckDB), "" where a commit does.
	Checkpoint() string
	// SessionID is the current server session's id, by which another
	// connection counts and ends it: PostgreSQL's backend PID, MariaDB's
	// connection id (the processlist's, not Conn.BackendPID's thread).
	// SessionCount counts the sessions whose id is id (0 or 1);
	// KillSession ends that session. All three are "" for an embedded
	// engine, which has no sessions.
	SessionID() string
	SessionCount(id int) string
	KillSession(id int) string
	// Retryable says err ended a transaction that may succeed when run
	// again: a serialization failure or a deadlock.
	Retryable(err error) bool
}

// Type is a portable column type.
type Type int

// The portable column types.
const (
	Integer   Type = iota // 32-bit integer
	BigInt                // 64-bit integer
	Double                // double-precision floating point
	Date                  // calendar date (text on SQLite)
	Timestamp             // date and time, no time zone (text on SQLite)
	Text                  // unbounded text, not for an index on MariaDB
	numTypes
)

// SQLOf is the SQL of the engine named name, nil for an unknown engine.
func SQLOf(name string) SQL {
	s, _ := Lookup(name)
	return s.SQL
}

// dialect is an SQL, described by what differs between engines.
type dialect struct {
	numbered    bool     // $n, not ?
	backticks   bool     // Quote backticks a name
	types       []string // by Type
	lengths     bool     // VarChar(n) has its n
	boundedText bool     // Text(max) is VARCHAR(max)
	decimal     bool     // Decimal(p, s) is DECIMAL(p,s), else REAL
	signed      bool     // integer casts are AS SIGNED
	textTimes   bool     // dates and times are text, their literals bare
	clustered   string   // ClusteredTable
	year        string   // Year's format, one %s: the column
	tableCount  string   // TableCount
	metaKey     string   // CreateMeta's key type
	analyze     string   // Analyze's statement, followed by the tables when perTable
	perTable    bool
	vacuum      bool   // AnalyzeLoaded is VACUUM ANALYZE
	truncate    string // Truncate's format, one %s: the table
	checkpoint  string // Checkpoint
	sessionID   string // SessionID
	count, kill string // SessionCount's and KillSession's formats, one %d
	retryable   func(error) bool
}

var _ SQL = (*dialect)(nil)

func (d *dialect) Numbered() bool { return d.numbered }

func (d *dialect) Placeholder(n int) string {
	if d.numbered {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

func (d *dialect) Placeholders(n int) string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = d.Placeholder(i + 1)
	}
	return strings.Join(ps, ", ")
}

func (d *dialect) Quote(name string) string {
	if d.backticks {
		return "`" + name + "`"
	}
	return name
}

func (d *dialect) Type(t Type) string {
	if t < 0 || t >= numTypes {
		panic(fmt.Sprintf("engine: no column type %d", t))
	}
	return d.types[t]
}

func (d *dialect) Text(max int) string {
	if d.boundedText {
		return "VARCHAR(" + strconv.Itoa(max) + ")"
	}
	return d.types[Text]
}

func (d *dialect) VarChar(n int) string {
	if d.lengths {
		return "VARCHAR(" + strconv.Itoa(n) + ")"
	}
	return "TEXT"
}

func (d *dialect) Decimal(p, s int) string {
	if d.decimal {
		return fmt.Sprintf("DECIMAL(%d,%d)", p, s)
	}
	return "REAL"
}

// signedCasts rewrites casts to integer types for MariaDB.
var signedCasts = strings.NewReplacer(" AS BIGINT)", " AS SIGNED)", " AS INTEGER)", " AS SIGNED)")

func (d *dialect) IntCasts(q string) string {
	if d.signed {
		return signedCasts.Replace(q)
	}
	return q
}

func (d *dialect) literal(typ, text string) string {
	if d.textTimes {
		return "'" + text + "'"
	}
	return typ + " '" + text + "'"
}

func (d *dialect) Date(t time.Time) string { return d.literal("DATE", t.Format(time.DateOnly)) }

func (d *dialect) Timestamp(t time.Time) string {
	return d.literal("TIMESTAMP", t.Format(time.DateTime))
}

func (d *dialect) Year(col string) string { return fmt.Sprintf(d.year, col) }

func (d *dialect) TextTimes() bool { return d.textTimes }

func (d *dialect) ClusteredTable() string { return d.clustered }

func (d *dialect) TableCount() string { return d.tableCount }

func (d *dialect) CreateMeta(table string) string {
	return "CREATE TABLE " + table + " (" + d.Quote("key") + " " + d.metaKey + " PRIMARY KEY, value TEXT NOT NULL)"
}

func (d *dialect) ReadMeta(table string) string {
	return "SELECT " + d.Quote("key") + ", value FROM " + table
}

func (d *dialect) WriteMeta(table, key, value string) string {
	return "INSERT INTO " + table + " (" + d.Quote("key") + ", value) VALUES ('" + key + "', '" + value + "')"
}

func (d *dialect) Truncate(table string) string { return fmt.Sprintf(d.truncate, table) }

func (d *dialect) Analyze(tables ...string) string {
	if d.perTable && len(tables) > 0 {
		return d.analyze + " " + strings.Join(tables, ", ")
	}
	return d.analyze
}

func (d *dialect) AnalyzeLoaded(tables ...string) string {
	if d.vacuum {
		return "VACUUM " + d.analyze
	}
	return d.Analyze(tables...)
}

func (d *dialect) Checkpoint() string { return d.checkpoint }

func (d *dialect) SessionID() string { return d.sessionID }

func (d *dialect) SessionCount(id int) string { return session(d.count, id) }

func (d *dialect) KillSession(id int) string { return session(d.kill, id) }

func session(format string, id int) string {
	if format == "" {
		return ""
	}
	return fmt.Sprintf(format, id)
}

func (d *dialect) Retryable(err error) bool { return err != nil && d.retryable(err) }

// The engines' SQL.
var (
	sqliteSQL = &dialect{
		types:      []string{"INTEGER", "BIGINT", "REAL", "TEXT", "TEXT", "TEXT"},
		textTimes:  true,
		clustered:  " WITHOUT ROWID",
		year:       "CAST(strftime('%%Y', %s) AS INTEGER)",
		tableCount: "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?",
		metaKey:    "TEXT",
		analyze:    "ANALYZE",
		truncate:   "DELETE FROM %s", // the rowid is max(rowid) + 1: 1 again
		// SQLITE_BUSY (and SQLITE_LOCKED) that the busy timeout could not
		// wait out: two transactions that each read and then write,
		// SQLite's deadlock.
		retryable: func(err error) bool {
			var e sqlite3.Error
			return errors.As(err, &e) && (e.Code == sqlite3.ErrBusy || e.Code == sqlite3.ErrLocked)
		},
	}
	duckSQL = &dialect{numbered: true, lengths: true, decimal: true,
		types: []string{"INTEGER", "BIGINT", "DOUBLE", "DATE", "TIMESTAMP", "VARCHAR"},
		year:  "extract(year from %s)",
		tableCount: "SELECT count(*) FROM information_schema.tables WHERE table_catalog = current_database()" +
			" AND table_schema = current_schema() AND table_name = $1",
		metaKey:    "TEXT",
		analyze:    "ANALYZE",
		truncate:   "DELETE FROM %s",
		checkpoint: "CHECKPOINT",
		// DuckDB's transaction conflicts ("TransactionContext Error:
		// Conflict on ..."), its optimistic concurrency control's
		// serialization failure.
		retryable: func(err error) bool {
			var e *duckdb.Error
			return errors.As(err, &e) && e.Type == duckdb.ErrorTypeTransaction
		},
	}
	postgresSQL = &dialect{numbered: true, lengths: true, decimal: true,
		types:      []string{"INTEGER", "BIGINT", "DOUBLE PRECISION", "DATE", "TIMESTAMP", "TEXT"},
		year:       "extract(year from %s)",
		tableCount: "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = $1",
		metaKey:    "TEXT",
		analyze:    "ANALYZE", perTable: true, vacuum: true,
		truncate:  "TRUNCATE %s RESTART IDENTITY",
		sessionID: "SELECT pg_backend_pid()",
		count:     "SELECT count(*) FROM pg_stat_activity WHERE pid = %d",
		kill:      "SELECT pg_terminate_backend(%d)",
		// SQLSTATE 40001 serialization_failure, 40P01 deadlock_detected.
		retryable: func(err error) bool {
			var e *pgconn.PgError
			return errors.As(err, &e) && (e.Code == "40001" || e.Code == "40P01")
		},
	}
	mariadbSQL = &dialect{backticks: true, lengths: true, boundedText: true, decimal: true, signed: true,
		types:      []string{"INTEGER", "BIGINT", "DOUBLE", "DATE", "DATETIME", "TEXT"},
		year:       "extract(year from %s)",
		tableCount: "SELECT count(*) FROM information_schema.tables WHERE table_schema = database() AND table_name = ?",
		metaKey:    "VARCHAR(64)", // InnoDB indexes no TEXT whole
		analyze:    "ANALYZE TABLE", perTable: true,
		truncate:  "TRUNCATE TABLE %s", // AUTO_INCREMENT starts again at 1
		sessionID: "SELECT connection_id()",
		count:     "SELECT count(*) FROM information_schema.processlist WHERE id = %d",
		kill:      "KILL CONNECTION %d",
		// ER_LOCK_DEADLOCK 1213, ER_LOCK_WAIT_TIMEOUT 1205.
		retryable: func(err error) bool {
			var e *mysql.MySQLError
			return errors.As(err, &e) && (e.Number == 1213 || e.Number == 1205)
		},
	}
)
