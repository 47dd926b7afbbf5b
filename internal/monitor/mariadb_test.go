package monitor

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/numalab/numalab/internal/mariaserver"
	"github.com/numalab/numalab/internal/mariaserver/mytest"
)

// my plays a user's MariaDB server; TestMain stops it.
var my = mytest.New(mariaserver.Config{BufferPool: 32 << 20})

func myDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	return db
}

func myExec(t *testing.T, db *sql.DB, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestMariaDBSessions: each MariaDB facility, in a cell's session (with
// the others off, as CellSession gives them), records a statement when on
// and not when off: the general log file, the slow log file (with the
// EXPLAIN for slow_log_explain), performance_schema's digests.
func TestMariaDBSessions(t *testing.T) {
	srv := my.Server(t)
	db := myDB(t, srv.DSN())
	ctx := context.Background()
	// What the managed server starts with for these facilities.
	myExec(t, db, "SET GLOBAL general_log = ON", "SET GLOBAL slow_query_log = ON")
	defer myExec(t, db, "SET GLOBAL general_log = OFF", "SET GLOBAL slow_query_log = OFF")
	var genFile, slowFile string
	if err := db.QueryRow("SELECT @@global.general_log_file, @@global.slow_query_log_file").Scan(&genFile,
		&slowFile); err != nil {
		t.Fatal(err)
	}
	fs, err := Check(
		Request{Names: []string{"performance_schema", "general_log", "slow_log", "slow_log_explain"}, Engine: "mariadb"})
	if err != nil {
		t.Fatal(err)
	}
	logged := map[string]func(marker string) bool{
		"general_log":      func(m string) bool { return fileHas(t, filepath.Join(srv.DataDir(), genFile), m) },
		"slow_log":         func(m string) bool { return fileHas(t, filepath.Join(srv.DataDir(), slowFile), m) },
		"slow_log_explain": func(m string) bool { return fileHas(t, filepath.Join(srv.DataDir(), slowFile), m) },
		"performance_schema": func(m string) bool {
			var n int
			db.QueryRow("SELECT count(*) FROM performance_schema.events_statements_summary_by_digest WHERE digest_text LIKE ?",
				"%"+m+"%").Scan(&n)
			return n > 0
		},
	}
	for _, f := range fs {
		for _, on := range []bool{true, false} {
			marker := "numalab_" + f.Name + map[bool]string{true: "_on", false: "_off"}[on]
			c, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range CellSession(fs, f, on) {
				if _, err := c.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s %v: %s: %v", f.Name, on, q, err)
				}
			}
			// A column alias is kept in a digest's text, unlike a literal.
			if _, err := c.ExecContext(ctx, "SELECT 1 AS "+marker+" FROM mysql.user LIMIT 1"); err != nil {
				t.Fatal(err)
			}
			// The slow log is written after the answer is sent: the next
			// command's answer comes after it.
			if _, err := c.ExecContext(ctx, "DO 0"); err != nil {
				t.Fatal(err)
			}
			c.Close()
			if got := logged[f.Name](marker); got != on {
				t.Errorf("%s %s: recorded %v, want %v", f.Name, map[bool]string{true: "on", false: "off"}[on], got, on)
			}
			for _, g := range fs {
				if g.Name != f.Name && g.Global && logged[g.Name](marker) &&
					!(on && strings.HasPrefix(g.Name, "slow_log") && strings.HasPrefix(f.Name, "slow_log")) {
					t.Errorf("%s %v: %s recorded it too; want the others off", f.Name, on, g.Name)
				}
			}
		}
	}
	if b, _ := os.ReadFile(filepath.Join(srv.DataDir(), slowFile)); !strings.Contains(string(b), "# explain:") {
		t.Error("the slow log has no EXPLAIN; want slow_log_explain's plans")
	}
}

func fileHas(t *testing.T, path, s string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Contains(string(b), s)
}

// TestCheckMariaDB: a user's server without the general log is refused
// with what to do; with it on, the check passes and leaves the server's
// global settings as they were; a user without the privilege to switch
// sql_log_off is refused before anything runs.
func TestCheckMariaDB(t *testing.T) {
	srv := my.Server(t)
	db := myDB(t, srv.DSN())
	ctx := context.Background()
	fs, err := Check(Request{Names: []string{"general_log", "performance_schema"}, Engine: "mariadb", DSN: true,
		AllowSettings: true})
	if err != nil {
		t.Fatal(err)
	}
	myExec(t, db, "SET GLOBAL general_log = OFF")
	err = CheckServer(ctx, srv.DSN(), fs, 0)
	if err == nil || !strings.Contains(err.Error(), "SET GLOBAL general_log = ON yourself") {
		t.Errorf("general_log off: %v; want a refusal saying how to turn it on", err)
	}
	myExec(t, db, "SET GLOBAL general_log = ON")
	defer myExec(t, db, "SET GLOBAL general_log = OFF")
	if err := CheckServer(ctx, srv.DSN(), fs, 0); err != nil {
		t.Errorf("general_log on, numalab's own user: %v", err)
	}
	var gen, sqlLogOff int
	if err := db.QueryRow("SELECT @@global.general_log, @@global.sql_log_off").Scan(&gen, &sqlLogOff); err != nil ||
		gen != 1 || sqlLogOff != 0 {
		t.Errorf("after the check: general_log %d, sql_log_off %d (%v); want the server's 1 and 0", gen, sqlLogOff, err)
	}
	myExec(t, db, "DROP USER IF EXISTS 'plain'@'localhost'", "CREATE USER 'plain'@'localhost' IDENTIFIED BY 'plainpw'")
	plain := strings.Replace(srv.DSN(), mariaserver.User+":"+srv.Password(), "plain:plainpw", 1)
	err = CheckServer(ctx, plain, fs, 0)
	if err == nil || !strings.Contains(err.Error(), "refused") || strings.Contains(err.Error(), "plainpw") {
		t.Errorf("plain user: %v; want a refusal, without the password", err)
	}
}
