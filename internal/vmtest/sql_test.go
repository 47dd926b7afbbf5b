package vmtest

import (
	"slices"
	"testing"
)

// addSQL adds run sql to a guest's script: a script of the user's on
// SQLite, its table made by --init, two streams at smt=on and at smt=off.
// Its cells' windows are 2 s: in one of 500 ms no call completed once in
// CI, the host busy beside the emulated guest.
func addSQL(s *script) {
	s.raw("mkdir -p /tmp/sql")
	s.raw(`printf '%s\n' 'CREATE TABLE kv (k INTEGER PRIMARY KEY, v INTEGER);' ` +
		`'INSERT INTO kv VALUES (1, 2), (2, 4), (3, 6);' > /tmp/sql/init.sql`)
	s.raw(`printf '%s\n' '\set k random(1, 3)' 'SELECT v FROM kv WHERE k = :k;' > /tmp/sql/q.sql`)
	s.add("sql", "numalab run sql --engine sqlite --db /tmp/sql/kv.db --init /tmp/sql/init.sql --script /tmp/sql/q.sql "+
		"--streams 2 --placement 'smt=on;smt=off' --duration 2s --warmup 500ms --store /tmp/sql/s.db >&2 && "+
		"numalab runs show --json --store /tmp/sql/s.db 1")
	s.raw("rm -rf /tmp/sql")
}

// TestRunSQLPlacedInGuest: in the matrix's SMT guest (two nodes, each one
// core of 2 threads), run sql's cells record their placement and the CPUs
// their streams ran on: smt=on every sibling, smt=off one per core, and
// the two streams on two cores in both.
func TestRunSQLPlacedInGuest(t *testing.T) {
	host(t)
	secs := matrixRun(t, "2nodes-smt")
	g := parseSysfs(t, secs["sysfs"].Out)
	var r storedRun
	decode(t, "sql", secs["sql"], &r)
	t.Logf("run sql in the guest:\n%s", secs["sql"].Err)
	cells := r.cells()
	if len(cells) != 2 || cells[0].Placement != "smt=on" || cells[1].Placement != "smt=off" {
		t.Fatalf("run sql stored cells %+v; want smt=on then smt=off", cells)
	}
	for _, c := range cells {
		if c.Streams != 2 || len(c.CPUs) < 2 || !distinctCores(g, c.CPUs[:2]) {
			t.Errorf("%s: %d streams on CPUs %v; want 2 streams on two cores", c.Placement, c.Streams, c.CPUs)
		}
	}
	on, off := slices.Clone(cells[0].CPUs), cells[1].CPUs
	if len(on) != 2*len(off) {
		t.Errorf("smt=on has CPUs %v, smt=off %v: want every sibling against one per core", on, off)
	}
}
