package engine

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"
)

// openEach opens the engine s names as a workload would: an embedded one
// on a new file in a temporary directory, a server as numalab's managed
// test server (pgtest, mytest), in a schema of the test's own.
func openEach(t *testing.T, s Spec) Engine {
	t.Helper()
	opt := Options{Path: filepath.Join(t.TempDir(), "x."+s.FileExt), Create: true}
	if s.Server {
		opt = Options{Schema: "numalab_dialect_test"}
		switch s.Name {
		case "postgres":
			opt.DSN = pg.Server(t).DSN()
		case "mariadb":
			opt.DSN = my.Server(t).DSN()
		default:
			t.Fatalf("%s: no managed test server for this engine: add one here", s.Name)
		}
	}
	e, err := Open(t.Context(), s.Name, opt)
	if err != nil {
		t.Fatalf("opening %s: %v", s.Name, err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TestDialectRunsOnEveryEngine opens every engine the registry lists and
// runs each statement its SQL writes on it: the marker table made,
// written, read and found, every portable type stored and read back
// through bound parameters, literals, casts and the year of a date,
// statistics, a checkpoint, a truncate and a server session counted and
// ended.
func TestDialectRunsOnEveryEngine(t *testing.T) {
	for _, s := range Specs() {
		t.Run(s.Name, func(t *testing.T) {
			if s.SQL == nil || SQLOf(s.Name) != s.SQL {
				t.Fatalf("%s has no SQL", s.Name)
			}
			e := openEach(t, s)
			ctx := t.Context()
			db := e.DB()
			for _, q := range []string{"DROP TABLE IF EXISTS dialect_meta", "DROP TABLE IF EXISTS dialect_t"} {
				mustExec(t, db, q) // left by an earlier -count round on a server
			}
			checkMeta(t, db, s.SQL)
			checkTypes(t, db, s.SQL)
			d := s.SQL
			for _, q := range []string{d.Analyze("dialect_t"), d.AnalyzeLoaded("dialect_t"), d.Truncate("dialect_t")} {
				mustExec(t, db, q)
			}
			if q := d.Checkpoint(); q != "" {
				mustExec(t, db, q)
			}
			if n := count(t, db, "SELECT count(*) FROM dialect_t"); n != 0 {
				t.Errorf("%s left %d rows", d.Truncate("dialect_t"), n)
			}
			checkSessions(ctx, t, e)
			if d.Retryable(nil) || d.Retryable(context.Canceled) {
				t.Error("Retryable says yes to an error that is no conflict")
			}
		})
	}
}

func mustExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(t.Context(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func count(t *testing.T, db *sql.DB, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRowContext(t.Context(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func checkMeta(t *testing.T, db *sql.DB, d SQL) {
	mustExec(t, db, d.CreateMeta("dialect_meta"))
	mustExec(t, db, d.WriteMeta("dialect_meta", "workload", "test"))
	mustExec(t, db, d.WriteMeta("dialect_meta", "load_complete", "1"))
	rows, err := db.QueryContext(t.Context(), d.ReadMeta("dialect_meta"))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		got[k] = v
	}
	if err := rows.Err(); err != nil || len(got) != 2 || got["workload"] != "test" || got["load_complete"] != "1" {
		t.Errorf("%s: %v, %v", d.ReadMeta("dialect_meta"), got, err)
	}
	if n := count(t, db, d.TableCount(), "dialect_meta"); n != 1 {
		t.Errorf("TableCount(dialect_meta) = %d, want 1", n)
	}
	if n := count(t, db, d.TableCount(), "no_such_table"); n != 0 {
		t.Errorf("TableCount(no_such_table) = %d, want 0", n)
	}
}

func checkTypes(t *testing.T, db *sql.DB, d SQL) {
	mustExec(t, db, "CREATE TABLE dialect_t (i "+d.Type(Integer)+", b "+d.Type(BigInt)+", f "+d.Type(Double)+
		", dt "+d.Type(Date)+", ts "+d.Type(Timestamp)+", x "+d.Type(Text)+", s "+d.Text(20)+", v "+d.VarChar(20)+
		", m "+d.Decimal(15, 2)+", PRIMARY KEY (b, "+d.Quote("s")+"))"+d.ClusteredTable())
	day := time.Date(1995, 3, 15, 10, 30, 0, 0, time.UTC)
	if d.TextTimes() != (d.Type(Timestamp) == "TEXT") || d.TextTimes() != (d.Timestamp(day)[0] == '\'') {
		t.Errorf("TextTimes %v, but a timestamp is %s, written %s", d.TextTimes(), d.Type(Timestamp), d.Timestamp(day))
	}
	p := d.Placeholder
	mustExec(t, db, "INSERT INTO dialect_t VALUES ("+d.Placeholders(3)+", "+d.Date(day)+", "+d.Timestamp(day)+", "+
		p(4)+", "+p(5)+", "+p(6)+", "+p(7)+")", 7, int64(1)<<40, 0.5, "a long text", "short", "var", 12.25)
	q := d.IntCasts("SELECT CAST(b AS BIGINT) + CAST(i AS INTEGER) FROM dialect_t WHERE " + d.Year("dt") + " = 1995" +
		" AND ts >= " + d.Timestamp(day) + " AND ts < " + d.Timestamp(day.Add(time.Second)) + " AND dt = " + d.Date(day))
	if n := count(t, db, q); n != 1<<40+7 {
		t.Errorf("%s = %d", q, n)
	}
}

// checkSessions counts a stream's server session, ends it and counts it
// gone; an embedded engine has no session statements.
func checkSessions(ctx context.Context, t *testing.T, e Engine) {
	d := SQLOf(e.Name())
	c, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if d.SessionID() == "" {
		if c.BackendPID() != 0 || d.SessionCount(1) != "" || d.KillSession(1) != "" {
			t.Errorf("an engine without sessions has a backend %d, counts or kills sessions: %q, %q",
				c.BackendPID(), d.SessionCount(1), d.KillSession(1))
		}
		return
	}
	var id int
	err = c.Query(ctx, d.SessionID(), nil, func(vals []any) error { id = int(vals[0].(int64)); return nil })
	if err != nil || id == 0 {
		t.Fatalf("%s = %d, %v", d.SessionID(), id, err)
	}
	if n := count(t, e.DB(), d.SessionCount(id)); n != 1 {
		t.Fatalf("%s = %d before the kill", d.SessionCount(id), n)
	}
	mustExec(t, e.DB(), d.KillSession(id))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		n := count(t, e.DB(), d.SessionCount(id))
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %d 10 s after %s", d.SessionCount(id), n, d.KillSession(id))
		}
	}
}

// TestRetryable: each engine retries its own serialization failures and
// deadlocks, as its driver reports them, and no other engine's.
func TestRetryable(t *testing.T) {
	conflicts := map[string]error{
		"sqlite":   sqlite3.Error{Code: sqlite3.ErrBusy},
		"duckdb":   &duckdb.Error{Type: duckdb.ErrorTypeTransaction, Msg: "Conflict on tuple deletion"},
		"postgres": fmt.Errorf("calling: %w", &pgconn.PgError{Code: "40P01"}),
		"mariadb":  &mysql.MySQLError{Number: 1213},
	}
	for _, s := range Specs() {
		for name, err := range conflicts {
			if got := s.SQL.Retryable(err); got != (name == s.Name) {
				t.Errorf("%s: Retryable(%s's %v) = %v", s.Name, name, err, got)
			}
		}
	}
	if postgresSQL.Retryable(&pgconn.PgError{Code: "23505"}) {
		t.Error("postgres retries a unique violation")
	}
}
