package insert

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/mariaserver"
	"github.com/numalab/numalab/internal/mariaserver/mytest"
)

// my plays a user's MariaDB server (--dsn).
var my = mytest.New(mariaserver.Config{BufferPool: 64 << 20})

func TestMain(m *testing.M) {
	code := m.Run()
	my.Stop()
	os.Exit(code)
}

// TestMariaDB: a table of that name that numalab did not make is refused
// and left as it was; each key loads distinct ids as it says (shared:
// 1..n from the AUTO_INCREMENT; stream: one range per stream; none: no
// primary key), and each cell has the loader threads' waits from
// performance_schema.
func TestMariaDB(t *testing.T) {
	srv := my.Server(t)
	ctx := context.Background()
	eng, err := engine.Open(ctx, "mariadb", engine.Options{DSN: srv.DSN()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	db := eng.DB()
	mustExec(t, db, "DROP TABLE IF EXISTS "+Table, // numalab's own, left by an earlier -count round
		"CREATE TABLE "+Table+" (x int)", "INSERT INTO "+Table+" VALUES (42)")
	cfg := shortConfig("mariadb", "")
	cfg.DSN = srv.DSN()
	err = cfg.Check("/")
	if err == nil {
		_, err = NewSweep(cfg).Open(ctx, &entries{})
	}
	if !errors.Is(err, ErrNotOurs) {
		t.Fatalf("foreign table: got %v, want ErrNotOurs", err)
	}
	var x int
	if err := db.QueryRow("SELECT x FROM " + Table).Scan(&x); err != nil || x != 42 {
		t.Fatalf("foreign table changed: %v, %d", err, x)
	}
	mustExec(t, db, "DROP TABLE "+Table)
	if cfg.Method != "insert" {
		t.Errorf("method %q after Check, want insert (MariaDB's only)", cfg.Method)
	}

	read := 0 // cells whose waits were read
	defer func() {
		if read == 0 && !t.Failed() {
			t.Error("no cell's waits were read near both ends of its window")
		}
	}()
	for _, c := range []struct {
		key     string
		indexes bool
		idx     []string // the table's indexes
	}{{"shared", false, []string{"PRIMARY"}}, {"stream", true, []string{"k", "PRIMARY"}}, {"none", false, nil}} {
		cfg.Key, cfg.Indexes = c.key, c.indexes
		got, _ := runSweep(t, cfg)
		for _, g := range got {
			if unread(t, g.Stats) {
				continue
			}
			read++
			if len(g.Stats.Waits) == 0 || g.Stats.Method != "insert" || g.Stats.Key != c.key {
				t.Errorf("key %s, cell %d: method %q, key %q, waits %v; want performance_schema's waits", c.key, g.Stats.Index,
					g.Stats.Method, g.Stats.Key, g.Stats.Waits)
			}
			for _, w := range g.Stats.Waits {
				if w.Count <= 0 || w.Seconds < 0 || w.Pct < 0 {
					t.Errorf("key %s, cell %d: wait %+v; want a count and a time", c.key, g.Stats.Index, w)
				}
			}
		}
		var idx []string
		rows, err := db.Query("SELECT DISTINCT index_name FROM information_schema.statistics "+
			"WHERE table_schema = 'numalab' AND table_name = ? ORDER BY 1", Table)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			rows.Scan(&s)
			idx = append(idx, s)
		}
		rows.Close()
		if strings.Join(idx, ",") != strings.Join(c.idx, ",") {
			t.Errorf("key %s, indexes %v: the table has indexes %v, want %v", c.key, c.indexes, idx, c.idx)
		}
		n, distinct, lo, hi := keyIDs(t, db, Table)
		if n < got[1].Stats.Rows || distinct != n {
			t.Errorf("key %s: %d rows, %d distinct ids; want at least the last cell's %d, each id once", c.key,
				n, distinct, got[1].Stats.Rows)
		}
		switch c.key {
		case "shared":
			// A batch a stream had in flight when the window closed is rolled
			// back and skips its values: at most one batch per stream.
			if skip := int64(cfg.Batch * cfg.Streams[len(cfg.Streams)-1]); lo != 1 || hi < n || hi > n+skip {
				t.Errorf("key shared: ids %d..%d for %d rows; want 1..n from the AUTO_INCREMENT, started again for the "+
					"cell, with at most %d values skipped by batches rolled back at the window's end", lo, hi, n, skip)
			}
		case "stream":
			var streams int64
			if err := db.QueryRow("SELECT count(DISTINCT id >> 40) FROM " + Table).Scan(&streams); err != nil || streams != 2 {
				t.Errorf("key stream: %d ranges of ids (%v); want one per stream, 2", streams, err)
			}
		}
	}
	t.Run("orphan", func(t *testing.T) { checkEndSessions(t, eng) })
}

// TestMariaDBManagedWaits: on numalab's managed server the InnoDB latch
// instruments are on, so a cell's waits include InnoDB's (every
// acquisition is timed, contended or not).
func TestMariaDBManagedWaits(t *testing.T) {
	my.Server(t) // skips without MariaDB
	cfg := shortConfig("mariadb", "")
	cfg.Key, cfg.Streams = "shared", []int{1, 2}
	got, _ := runSweep(t, cfg)
	read := 0
	for _, g := range got {
		if unread(t, g.Stats) {
			continue
		}
		read++
		var innodb []string
		for _, w := range g.Stats.Waits {
			if strings.HasPrefix(w.Event, "wait/synch/") && strings.Contains(w.Event, "/innodb/") {
				innodb = append(innodb, w.Event)
			}
		}
		if len(innodb) == 0 {
			t.Errorf("cell %d: waits %v; want InnoDB's latches among them", g.Stats.Index, g.Stats.Waits)
		}
		if !strings.Contains(g.Stats.Dominant, "row writes in the engine") ||
			!strings.Contains(g.Stats.Dominant, "µs a row") {
			t.Errorf("cell %d: dominant %q; want the time of the row writes inside InnoDB", g.Stats.Index, g.Stats.Dominant)
		}
	}
	if read == 0 {
		t.Error("no cell's waits were read near both ends of its window")
	}
}

// unread says (and logs) that a cell's waits were not read near both ends
// of its window, as the cell itself says: under load the reader can fall
// behind, which is the machine's speed, not numalab's doing. A cell read
// at both ends that counted no wait is no such case: a read taken after a
// loader had disconnected once made it so, in 1 cell of 4 here.
func unread(t *testing.T, s CellStats) bool {
	if !strings.HasPrefix(s.Dominant, "no waits: performance_schema was not read near both ends") {
		return false
	}
	t.Logf("cell %d: %s", s.Index, s.Dominant)
	return true
}

// TestMariaDBCheck: MariaDB takes --dsn, not --db, and loads with INSERTs
// whatever --method says.
func TestMariaDBCheck(t *testing.T) {
	cfg := shortConfig("mariadb", "x.db")
	if err := cfg.Check("/"); err == nil || !strings.Contains(err.Error(), "MariaDB into database numalab") {
		t.Errorf("--db with mariadb: %v; want it refused", err)
	}
	cfg = shortConfig("mariadb", "")
	cfg.Indexes = true
	if err := cfg.Check("/"); err != nil || cfg.Method != "insert" {
		t.Errorf("mariadb with --indexes: %v, method %q; want accepted, method insert", err, cfg.Method)
	}
	cfg = shortConfig("sqlite", "x.db")
	cfg.DSN = "u:secret@unix(/tmp/s)/"
	if err := cfg.Check("/"); err == nil || !strings.Contains(err.Error(), "is for --engine postgres or mariadb") ||
		strings.Contains(err.Error(), "secret") {
		t.Errorf("--dsn with sqlite: %v; want it refused without the password", err)
	}
}

// TestMyWindow: the waits between the reads nearest the window's ends
// that saw every stream; none when the reads near an end are missing.
func TestMyWindow(t *testing.T) {
	read := func(at int64, threads int, n int64) myRead {
		return myRead{at: at, threads: threads, count: map[string]int64{"idle": n}, ps: map[string]int64{"idle": 10 * n}}
	}
	reads := []myRead{read(-50, 1, 1), read(-10, 2, 5), read(500, 2, 50), read(990, 2, 95), read(1100, 2, 99)}
	count, ps, secs, ok := myWindow(reads, 2, 0, 1000)
	if !ok || count["idle"] != 90 || ps["idle"] != 900 || secs != 1000/1e9 {
		t.Errorf("got %v %v %v %v; want 90 waits and 900 ps over the reads at -10 and 990", count, ps, secs, ok)
	}
	if _, _, _, ok := myWindow(reads[:2], 2, 0, 1000); ok {
		t.Error("reads before the window only: want none")
	}
}
