package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/numalab/numalab/internal/workload/sqlscript"
)

func TestRunSQLHelp(t *testing.T) {
	out, _, err := runCLI(t, "run", "sql", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Usage: numalab run sql", "docs/workloads/sql.md", "--script FILE[@WEIGHT]",
		"--max-errors", "Examples:", "Flags:"} {
		if !strings.Contains(out, want) {
			t.Errorf("run sql --help lacks %q", want)
		}
	}
}

// sqlFiles writes name → text into a new directory, returning its path.
func sqlFiles(t *testing.T, texts map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range texts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestRunSQLBadInput(t *testing.T) {
	dir := sqlFiles(t, map[string]string{"bad.sql": "\\set aid random(1,\nSELECT 1;\n", "ok.sql": "SELECT 1 AS one;\n",
		"shell.sql": "\\shell ls\n"})
	exists := filepath.Join(dir, "exists.db")
	if err := os.WriteFile(exists, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	st := filepath.Join(t.TempDir(), "s.db")
	ok := filepath.Join(dir, "ok.sql")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "-script: no script given"},
		{[]string{"--script", filepath.Join(dir, "bad.sql")}, "bad.sql:1:"},
		{[]string{"--script", filepath.Join(dir, "shell.sql")}, `shell.sql:1:1`},
		{[]string{"--script", filepath.Join(dir, "none.sql")}, "none.sql: no such file"},
		{[]string{"--script", ok + "@x"}, "expected a weight"},
		{[]string{"--builtin", "tpcc"}, `finding built-in script "tpcc"`},
		{[]string{"--script", ok, "--define", "scale"}, "-define"},
		{[]string{"--script", ok, "--engine", "oracle"}, `-engine: "oracle" is not an engine`},
		{[]string{"--script", ok, "--engine", "sqlite"}, "-db: no database file given"},
		{[]string{"--script", ok, "--engine", "sqlite", "--db", filepath.Join(dir, "none.db")},
			"does not exist: name an existing database, or add --init"},
		{[]string{"--script", ok, "--engine", "sqlite", "--db", exists, "--init", ok},
			"exists, and --init sets up a new database"},
		{[]string{"--script", ok, "--dsn", "host=/tmp", "--init", ok}, "-init"},
		{[]string{"--script", ok, "--streams", "0"}, `-streams`},
		{[]string{"--script", ok, "--max-tries", "0"}, `-max-tries`},
		{[]string{"--script", ok, "--max-errors", "-1"}, `-max-errors`},
		{[]string{"--script", ok, "--scale", "0"}, `-scale`},
	} {
		_, _, err := runCLI(t, append([]string{"run", "sql", "--store", st}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.args, err, c.want)
		}
	}
	if _, err := os.Stat(st); err == nil {
		t.Errorf("a refused command made the store %s", st)
	}
}

// bankSQL is the script the engines' tests run: its SQL is each
// engine's; the schema is made by --init (embedded) or by the test (a
// --dsn server, where numalab makes nothing).
const bankSQL = `\set aid random(1, 1000 * :scale)
\set delta random(-50, 50)
SELECT balance FROM sqltest_accounts WHERE aid = :aid;
UPDATE sqltest_accounts SET balance = balance + :delta WHERE aid = :aid;
`

// runSQLSweep runs bank.sql with args, streams 1,2 in 300 ms cells, and
// checks the run stored with its command line and both cells.
func runSQLSweep(t *testing.T, dir string, args ...string) {
	t.Helper()
	st := filepath.Join(t.TempDir(), "s.db")
	args = append([]string{"run", "sql", "--script", filepath.Join(dir, "bank.sql"), "--streams", "1,2",
		"--duration", "300ms",
		"--warmup", "300ms", "--store", st, "--json"}, args...)
	out, errOut, err := runCLI(t, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	t.Logf("%s", errOut)
	var cells []sqlscript.Cell
	if err := json.Unmarshal([]byte(out), &cells); err != nil || len(cells) != 2 {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	r := onlyRun(t, st)
	stored, err := sqlscript.StoredCells(r)
	if err != nil || len(stored) != 2 || r.Kind != sqlscript.RunKind || r.Status != "complete" {
		t.Fatalf("stored run %s (%s): %d cells (%v)", r.Kind, r.Status, len(stored), err)
	}
	for _, c := range stored {
		if c.Cell.Total.Count == 0 || c.Cell.Total.Errors != 0 || c.Scripts[0].Commands[3].Stats.Count != c.Cell.Total.Count {
			t.Errorf("cell %d: %+v", c.Cell.Index, c.Cell.Total)
		}
		if c.Sentinel == nil || c.Sentinel.Took <= 0 {
			t.Errorf("cell %d: no speed sentinel reading after it (%+v)", c.Cell.Index, c.Sentinel)
		}
	}
	if !strings.HasPrefix(r.Command, "numalab run sql --engine ") ||
		!strings.Contains(r.Command, "--script "+filepath.Join(dir, "bank.sql")) ||
		strings.Contains(r.Command, "secret") {
		t.Errorf("stored command %q", r.Command)
	}
	if !strings.Contains(errOut, "tps") || !strings.Contains(errOut, "statement latencies") {
		t.Errorf("the tables did not go to stderr with --json:\n%s", errOut)
	}
	// The stored command line parses back to the stored configuration
	// (the DSN's password aside: a test server's DSN has none).
	if strings.Contains(r.Command, "--dsn") {
		return
	}
	var words []string // after 'numalab run sql', but --init: the file it made exists now
	fields := strings.Fields(r.Command)[3:]
	for i := 0; i < len(fields); i++ {
		switch fields[i] {
		case "--init":
			i++
		case "''":
			words = append(words, "")
		default:
			words = append(words, fields[i])
		}
	}
	back, _, _, _, done, err := sqlFlags(&env{stdout: new(strings.Builder), stderr: new(strings.Builder)}, words)
	if done || err != nil {
		t.Fatalf("the stored command %q does not parse: %v", r.Command, err)
	}
	if js, _ := json.Marshal(back); !strings.Contains(string(r.Config), `"streams":[1,2]`) ||
		!jsonSame(t, js, r.Config, "init") {
		t.Errorf("stored command %q gives\n%s\nstored\n%s", r.Command, js, r.Config)
	}
	// The report shows the run.
	text, _, err := runCLI(t, "report", "--store", st, "--format", "text")
	if err != nil || !strings.Contains(text, "Your SQL: script runs") || !strings.Contains(text, "bank.sql@1") {
		t.Errorf("report: %v\n%s", err, text)
	}
	page := filepath.Join(t.TempDir(), "r.html")
	if _, _, err := runCLI(t, "report", "--store", st, "--out", page); err != nil {
		t.Fatalf("report --out: %v", err)
	}
	if html, err := os.ReadFile(page); err != nil || !strings.Contains(string(html), `id="sql-1-tps"`) {
		t.Errorf("the HTML report has no chart of run 1's throughput against streams (%v)", err)
	}
}

// jsonSame says whether two JSON objects are equal but for the key skip.
func jsonSame(t *testing.T, a, b []byte, skip string) bool {
	t.Helper()
	var x, y map[string]any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	delete(x, skip)
	delete(y, skip)
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func TestRunSQLSQLite(t *testing.T) {
	dir := sqlFiles(t, map[string]string{"bank.sql": bankSQL, "schema.sql": `PRAGMA journal_mode = WAL;
CREATE TABLE sqltest_accounts (aid INTEGER PRIMARY KEY, balance INTEGER NOT NULL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) INSERT INTO sqltest_accounts SELECT i, 0 FROM n;
`})
	runSQLSweep(t, dir, "--engine", "sqlite", "--db", filepath.Join(dir, "bank.db"), "--init",
		filepath.Join(dir, "schema.sql"))
}

func TestRunSQLDuckDB(t *testing.T) {
	dir := sqlFiles(t, map[string]string{"bank.sql": bankSQL,
		"schema.sql": `CREATE TABLE sqltest_accounts (aid INTEGER PRIMARY KEY, balance INTEGER NOT NULL);
INSERT INTO sqltest_accounts SELECT i, 0 FROM range(1, 1001) t(i);
`})
	// DuckDB's optimistic transactions: two streams updating one row
	// conflict, a failure worth retrying.
	runSQLSweep(t, dir, "--engine", "duckdb", "--db", filepath.Join(dir, "bank.duckdb"), "--init",
		filepath.Join(dir, "schema.sql"), "--max-tries", "10")
}

// TestRunSQLPostgres runs on the package's shared server by --dsn: the
// test makes the table in the DSN's database (numalab makes nothing
// there) and drops it after.
func TestRunSQLPostgres(t *testing.T) {
	dsn := pg.Server(t).DSN()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `DROP TABLE IF EXISTS sqltest_accounts;
CREATE TABLE sqltest_accounts (aid int PRIMARY KEY, balance int NOT NULL);
INSERT INTO sqltest_accounts SELECT i, 0 FROM generate_series(1, 1000) i`); err != nil {
		t.Fatal(err)
	}
	defer c.Exec(ctx, "DROP TABLE sqltest_accounts")
	dir := sqlFiles(t, map[string]string{"bank.sql": bankSQL})
	runSQLSweep(t, dir, "--engine", "postgres", "--dsn", dsn, "--max-tries", "10")
}

// TestRunSQLMariaDB runs on the package's shared MariaDB server by --dsn,
// in a database the test makes.
func TestRunSQLMariaDB(t *testing.T) {
	cfg, err := mysql.ParseDSN(my.Server(t).DSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.MultiStatements = true
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	if _, err := db.Exec(
		`CREATE DATABASE IF NOT EXISTS sqltest; USE sqltest; DROP TABLE IF EXISTS sqltest.sqltest_accounts;
CREATE TABLE sqltest.sqltest_accounts (aid int PRIMARY KEY, balance int NOT NULL);
INSERT INTO sqltest.sqltest_accounts SELECT seq, 0 FROM seq_1_to_1000`); err != nil {
		t.Fatal(err)
	}
	defer db.Exec("DROP DATABASE sqltest")
	cfg.MultiStatements, cfg.DBName = false, "sqltest"
	dir := sqlFiles(t, map[string]string{"bank.sql": bankSQL})
	runSQLSweep(t, dir, "--engine", "mariadb", "--dsn", cfg.FormatDSN(), "--max-tries", "10")
}

// TestRunSQLStopsAtMaxErrors: a script failing mid-way stops the run at
// --max-errors, which is stored as failed with the cells measured before.
func TestRunSQLStopsAtMaxErrors(t *testing.T) {
	dir := sqlFiles(t, map[string]string{
		"schema.sql": "CREATE TABLE t (x INTEGER PRIMARY KEY);\nINSERT INTO t VALUES (1);\n",
		"flaky.sql": "\\set n random(1, 10000)\nSELECT x FROM t WHERE x = 1;\n" +
			"\\if :n > 9990\nSELECT * FROM missing;\n\\endif\n",
	})
	st := filepath.Join(t.TempDir(), "s.db")
	_, errOut, err := runCLI(t, "run", "sql", "--engine", "sqlite", "--db", filepath.Join(dir, "t.db"), "--init",
		filepath.Join(dir, "schema.sql"),
		"--script", filepath.Join(dir, "flaky.sql"), "--streams", "1,2", "--repeat", "50", "--duration",
		"100ms", "--warmup", "0s",
		"--max-errors", "20", "--store", st)
	if err == nil || !strings.Contains(err.Error(), "more than --max-errors 20") ||
		!strings.Contains(err.Error(), "flaky.sql:4: SELECT * FROM missing: no such table") {
		t.Fatalf("err = %v; want the run stopped at --max-errors, naming flaky.sql:4 and its error\n%s", err, errOut)
	}
	r := onlyRun(t, st)
	cells, _ := sqlscript.StoredCells(r)
	var failed int64
	for _, c := range cells {
		failed += c.Cell.Total.Errors
	}
	// The call that passed --max-errors is in the cells' count only when
	// it ended inside a cell's window (100 ms here): 20 or more.
	if r.Status != "failed" || len(cells) < 2 || failed < 20 ||
		!slices.ContainsFunc(cells, func(c sqlscript.Cell) bool { return c.Cell.Total.Count > 0 }) {
		t.Errorf("stored %s with %d cells, %d failed; want it failed, with the cells before", r.Status, len(cells), failed)
	}
}
