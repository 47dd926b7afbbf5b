package sqlscript

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sweep"
	"github.com/numalab/numalab/internal/topo"
)

// recorder keeps what a sweep stores, and what it notes.
type recorder struct {
	entries []result.Entry
	notes   []string
}

func (r *recorder) Add(e result.Entry) error   { r.entries = append(r.entries, e); return nil }
func (r *recorder) Say(string)                 {}
func (r *recorder) Note(line string)           { r.notes = append(r.notes, line) }
func (r *recorder) Measured(sweep.Cell, *Cell) {}

func (r *recorder) kinds() []string {
	var k []string
	for _, e := range r.entries {
		k = append(k, e.Kind())
	}
	return k
}

// bankSchema and bankScript are the tests' script on SQLite: a table of
// accounts, read and written by key. The file is in WAL mode: in a
// rollback journal each commit waits for several fsyncs, which on a busy
// disk leave a 300 ms window without a commit.
const (
	bankSchema = `PRAGMA journal_mode = WAL;
CREATE TABLE accounts (aid INTEGER PRIMARY KEY, balance INTEGER NOT NULL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
INSERT INTO accounts SELECT i, 0 FROM n;
`
	bankScript = `\set aid random(1, 1000 * :scale)
\set delta random(-50, 50)
SELECT balance FROM accounts WHERE aid = :aid;
UPDATE accounts SET balance = balance + :delta WHERE aid = :aid;
`
)

// files writes name → text into a new directory and returns its path.
func files(t *testing.T, texts map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range texts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// sweepOf runs cfg's sweep on this host: streams 1 and 2, 1 s cells (its
// warm-up as cfg has it): a cell completing no transaction stops the
// sweep, and 300 ms windows completed none beside two emulated guests.
func sweepOf(t *testing.T, cfg RunConfig) ([]*Cell, *recorder, error) {
	t.Helper()
	cfg.Streams, cfg.Duration = []int{1, 2}, time.Second
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	if err := cfg.CheckFiles(); err != nil {
		t.Fatal(err)
	}
	ws, stored, err := cfg.ParseScripts()
	if err != nil {
		t.Fatal(err)
	}
	init, err := cfg.ParseInit()
	if err != nil {
		t.Fatal(err)
	}
	host, err := topo.FromSysfs("/")
	if err != nil {
		t.Fatal(err)
	}
	cells, _, err := sweep.Resolve(host, cfg.Spec(), cfg.Spread)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	out, err := sweep.Run(context.Background(), cfg.Plan(cells), NewSweep(cfg, ws, stored, init), rec, rec)
	return out, rec, err
}

// TestSweepSQLite: --init makes the table in a new file; two cells of a
// \set + SELECT + UPDATE script count every transaction, and each
// command's calls are the script's (drive's count, from the streams' own
// figures).
func TestSweepSQLite(t *testing.T) {
	dir := files(t, map[string]string{"schema.sql": bankSchema, "bank.sql": bankScript})
	cfg := DefaultRunConfig()
	cfg.Warmup = 300 * time.Millisecond
	cfg.Engine, cfg.DB, cfg.Init = "sqlite", filepath.Join(dir, "bank.db"), filepath.Join(dir, "schema.sql")
	cfg.Scripts = []string{filepath.Join(dir, "bank.sql")}
	out, rec, err := sweepOf(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkCells(t, out, 4)
	if k := rec.kinds(); !slices.Contains(k, string(KindInit)) || !slices.Contains(k, string(KindScripts)) {
		t.Errorf("stored %v; want the init and the scripts", k)
	}
	// Run again on the file --init made, without it.
	cfg.Init = ""
	if _, _, err := sweepOf(t, cfg); err != nil {
		t.Fatal(err)
	}
}

// TestSweepDuckDB: the same script on DuckDB, $1 placeholders.
func TestSweepDuckDB(t *testing.T) {
	schema := `CREATE TABLE accounts (aid INTEGER PRIMARY KEY, balance INTEGER NOT NULL);
INSERT INTO accounts SELECT i, 0 FROM range(1, 1001) t(i);
`
	read := "\\set aid random(1, 1000)\nSELECT balance FROM accounts WHERE aid = :aid;\n" +
		"SELECT count(*) AS n FROM accounts WHERE balance > :aid \\gset\n"
	dir := files(t, map[string]string{"schema.sql": schema, "read.sql": read})
	cfg := DefaultRunConfig()
	cfg.Warmup = 300 * time.Millisecond
	cfg.Engine, cfg.DB, cfg.Init = "duckdb", filepath.Join(dir, "bank.duckdb"), filepath.Join(dir, "schema.sql")
	cfg.Scripts = []string{filepath.Join(dir, "read.sql")}
	out, _, err := sweepOf(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkCells(t, out, 3)
}

// checkCells: every cell counted transactions and no failure, and each
// command of the one script counted as many calls as the script.
func checkCells(t *testing.T, out []*Cell, commands int) {
	t.Helper()
	if len(out) != 2 {
		t.Fatalf("%d cells; want 2", len(out))
	}
	for _, c := range out {
		m := &c.Cell
		t.Logf("cell %d: %d streams, %.0f tps, p95 %.3f ms", m.Index, m.Streams, m.TPS, m.Total.P95US/1000)
		if m.Total.Count == 0 || m.Total.Errors != 0 || len(c.Scripts) != 1 || len(c.Scripts[0].Commands) != commands {
			t.Fatalf("cell %d: %+v, %d scripts", m.Index, m.Total, len(c.Scripts))
		}
		for _, cmd := range c.Scripts[0].Commands {
			if cmd.Stats.Count != m.Total.Count || cmd.Stats.MeanUS <= 0 {
				t.Errorf("cell %d, line %d (%s): %d calls, mean %.1f µs; want the script's %d calls",
					m.Index, cmd.Line, cmd.Stats.Name, cmd.Stats.Count, cmd.Stats.MeanUS, m.Total.Count)
			}
		}
	}
}

// TestSweepStopsAtMaxErrors: a script failing mid-way (a statement on a
// table that is not there, every other transaction) is counted against
// its statement, with its line, and stops the run once failures pass
// --max-errors; the cell measured is kept.
func TestSweepStopsAtMaxErrors(t *testing.T) {
	flaky := `\set aid random(1, 1000)
SELECT balance FROM accounts WHERE aid = :aid;
\if :aid % 2 = 0
SELECT * FROM missing WHERE x = :aid;
\endif
`
	dir := files(t, map[string]string{"schema.sql": bankSchema, "flaky.sql": flaky})
	cfg := DefaultRunConfig()
	cfg.Warmup = 300 * time.Millisecond
	cfg.Engine, cfg.DB, cfg.Init = "sqlite", filepath.Join(dir, "bank.db"), filepath.Join(dir, "schema.sql")
	// No warm-up: failures in a warm-up count against --max-errors too,
	// and would stop the run before its first window.
	cfg.Scripts, cfg.MaxErrors, cfg.Warmup = []string{filepath.Join(dir, "flaky.sql")}, 3, 0
	out, rec, err := sweepOf(t, cfg)
	if err == nil || !strings.Contains(err.Error(), "more than --max-errors 3") ||
		!strings.Contains(err.Error(), "flaky.sql:4: SELECT * FROM missing") ||
		!strings.Contains(err.Error(), "no such table: missing") {
		t.Fatalf("err = %v; want the run stopped at --max-errors, naming flaky.sql:4 and its error", err)
	}
	if len(out) != 1 || !slices.Contains(rec.kinds(), string(result.KindCell)) ||
		!slices.Contains(rec.kinds(), string(KindCellScripts)) {
		t.Fatalf("%d cells measured, stored %v; want the first kept", len(out), rec.kinds())
	}
	c := out[0]
	bad := c.Scripts[0].Commands[3]
	if bad.Line != 4 || bad.Stats.Errors < 4 || bad.Stats.Errors != c.Cell.Total.Errors ||
		!strings.Contains(bad.Stats.FirstError, "no such table") {
		t.Errorf("the failing statement: %+v; the cell %d failed", bad, c.Cell.Total.Errors)
	}
	if len(c.Cell.Stopped) == 0 {
		t.Errorf("no stream stopped once failures passed --max-errors")
	}
}

// TestSweepStopsInWarmup: a script that cannot run (a statement the
// engine refuses) stops the run in the first cell's warm-up, naming the
// line and the engine's error, not after a thousand failures.
func TestSweepStopsInWarmup(t *testing.T) {
	dir := files(t, map[string]string{"schema.sql": bankSchema, "bad.sql": "SELECT 1 AS one;\nEND TRANSACTION NOW;\n"})
	cfg := DefaultRunConfig()
	cfg.Warmup = 300 * time.Millisecond
	cfg.Engine, cfg.DB, cfg.Init = "sqlite", filepath.Join(dir, "bank.db"), filepath.Join(dir, "schema.sql")
	cfg.Scripts = []string{filepath.Join(dir, "bad.sql")}
	out, _, err := sweepOf(t, cfg)
	if err == nil ||
		!strings.Contains(err.Error(), "1 transaction failed in this run (warm-ups included), more than --max-errors 0") ||
		!strings.Contains(err.Error(), "bad.sql:2: END TRANSACTION NOW: ") {
		t.Fatalf("err = %v", err)
	}
	if len(out) != 1 || out[0].Cell.Total.Count != 0 || len(out[0].Cell.Stopped) != 1 {
		t.Errorf("%d cells; want the first, stored with its stream stopped", len(out))
	}
}
