package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/place"
)

// loadNumbers creates t(id, grp, name, price) in eng and bulk-loads n rows.
func loadNumbers(t *testing.T, eng Engine, n int) {
	t.Helper()
	ctx := context.Background()
	ddl := "CREATE TABLE t (id INTEGER, grp INTEGER, name TEXT, price DOUBLE PRECISION)"
	if eng.Name() == "sqlite" {
		ddl = "CREATE TABLE t (id INTEGER, grp INTEGER, name TEXT, price REAL)"
	}
	if _, err := eng.DB().ExecContext(ctx, ddl); err != nil {
		t.Fatal(err)
	}
	b, err := eng.Bulk(ctx, "t", []string{"id", "grp", "name", "price"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		var name any = fmt.Sprintf("n%d", i)
		if i%10 == 0 {
			name = nil
		}
		if err := b.Append(int64(i), i%7, name, float64(i)/4); err != nil {
			t.Fatal(err)
		}
		if i%5000 == 0 {
			if err := b.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if b.Rows() != int64(n) {
		t.Errorf("%s bulk: %d rows written, want %d", eng.Name(), b.Rows(), n)
	}
}

// checkNumbers reads the loaded rows back through a stream connection.
func checkNumbers(t *testing.T, eng Engine, n int) {
	t.Helper()
	ctx := context.Background()
	c, err := eng.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	q := "SELECT count(*), count(name), sum(id), sum(price), min(name) FROM t WHERE grp >= ?"
	if eng.Name() == "postgres" {
		q = strings.Replace(q, "?", "$1", 1)
	}
	var got []any
	err = c.Query(ctx, q, []any{0}, func(v []any) error {
		got = slices.Clone(v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sum := int64(n) * int64(n+1) / 2
	want := []any{int64(n), int64(n - n/10), sum, float64(sum) / 4, "n1"}
	if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
		t.Errorf("%s: read back %#v, want %#v", eng.Name(), got, want)
	}
}

func TestSQLiteEngine(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "e.sqlite")
	eng, err := Open(ctx, "sqlite", Options{Path: path, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	loadNumbers(t, eng, 20000)
	if _, err := eng.DB().ExecContext(ctx, "CREATE INDEX t_grp ON t (grp)"); err != nil {
		t.Fatal(err)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, "sqlite", Options{Path: path, Create: true}); err == nil ||
		!strings.Contains(err.Error(), "file exists") {
		t.Errorf("creating over an existing file: %v, want a refusal", err)
	}

	eng, err = Open(ctx, "sqlite", Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	checkNumbers(t, eng, 20000)
	if _, err := eng.Bulk(ctx, "t", []string{"id"}); err == nil {
		t.Error("bulk load into a file opened for running succeeded")
	}
	if err := eng.SetDOP(ctx, 1); err != nil {
		t.Error(err)
	}
	err = eng.SetDOP(ctx, 2)
	if err == nil || !strings.Contains(err.Error(), "SQLite runs each query on one thread") {
		t.Errorf("SetDOP(2) = %v, want a refusal saying SQLite runs each query on one thread", err)
	}
	plan, err := eng.Explain(ctx, "SELECT count(*) FROM t WHERE grp = ? AND id > ?", 3, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "USING INDEX t_grp") {
		t.Errorf("plan %q does not use index t_grp", plan)
	}
	in, err := eng.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if in.Engine != "sqlite" || in.Version == "" || in.Settings["mmap_size"] == "0" || in.Settings["dop"] != "1" {
		t.Errorf("Describe = %+v", in)
	}
	st, err := eng.Prewarm(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); st.Bytes != fi.Size() {
		t.Errorf("Prewarm read %d bytes of a %d-byte file", st.Bytes, fi.Size())
	}
}

func TestSQLiteDiscardRemovesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gone.sqlite")
	eng, err := Open(context.Background(), "sqlite", Options{Path: path, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	loadNumbers(t, eng, 10)
	if err := eng.Discard(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Discard: %v, want the file gone", err)
	}
}

func TestDuckDBEngine(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "e.duckdb")
	eng, err := Open(ctx, "duckdb", Options{Path: path, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	loadNumbers(t, eng, 200000)
	if _, err := eng.Bulk(ctx, "t", []string{"id"}); err == nil || !strings.Contains(err.Error(), "all 4 columns") {
		t.Errorf("bulk with too few columns: %v, want a refusal", err)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}

	eng, err = Open(ctx, "duckdb", Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	checkNumbers(t, eng, 200000)
	q := "SELECT grp, count(*) FROM t WHERE id > ? GROUP BY grp"
	var plans []string
	for _, dop := range []int{1, runtime.NumCPU()} {
		if err := eng.SetDOP(ctx, dop); err != nil {
			t.Fatal(err)
		}
		in, err := eng.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if in.Settings["threads"] != fmt.Sprint(dop) {
			t.Errorf("after SetDOP(%d): threads = %q", dop, in.Settings["threads"])
		}
		plan, err := eng.Explain(ctx, q, 5)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, "SEQ_SCAN") || strings.Contains(plan, "Estimated") || strings.Contains(plan, "~") {
			t.Errorf("plan at DOP %d:\n%s\nwant a SEQ_SCAN and no estimates", dop, plan)
		}
		plans = append(plans, plan)
	}
	if plans[0] != plans[len(plans)-1] {
		t.Errorf("the normalised plan changed with DOP:\n%s\n---\n%s", plans[0], plans[len(plans)-1])
	}
	if err := eng.SetDOP(ctx, runtime.NumCPU()+1); err == nil || !strings.Contains(err.Error(), "CPUs") {
		t.Errorf("SetDOP(CPUs+1) = %v, want a refusal naming the CPUs", err)
	}
	if err := eng.SetDOP(ctx, 0); err == nil {
		t.Error("SetDOP(0) succeeded")
	}
	st, err := eng.Prewarm(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Objects != 1 || st.Bytes <= 0 {
		t.Errorf("Prewarm = %+v, want the one table read", st)
	}
}

func TestDuckDBRefusesMissingFile(t *testing.T) {
	_, err := Open(context.Background(), "duckdb", Options{Path: filepath.Join(t.TempDir(), "none.duckdb")})
	if err == nil || !strings.Contains(err.Error(), "load it first") {
		t.Errorf("opening a missing DuckDB file: %v, want a refusal", err)
	}
}

func TestOpenUnknownEngine(t *testing.T) {
	_, err := Open(context.Background(), "oracle", Options{})
	if err == nil || !strings.Contains(err.Error(), "sqlite, duckdb, postgres") {
		t.Errorf("Open(oracle) = %v, want the known engines listed", err)
	}
}

func TestPostgresEngine(t *testing.T) {
	s := pg.Server(t)
	ctx := context.Background()
	eng, err := Open(ctx, "postgres", Options{DSN: s.DSN(), Schema: "numalab_engine_test", PinBackends: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := eng.DB().ExecContext(ctx, "DROP TABLE IF EXISTS t"); err != nil { // left by an earlier -count round
		t.Fatal(err)
	}
	const n = 1000000
	loadNumbers(t, eng, n)
	if _, err := eng.DB().ExecContext(ctx, "VACUUM ANALYZE t"); err != nil {
		t.Fatal(err)
	}
	checkNumbers(t, eng, n)

	// Objects live in numalab's schema, which carries the marker.
	var schema, comment string
	if err := eng.DB().QueryRowContext(ctx, `SELECT n.nspname, obj_description(n.oid, 'pg_namespace') FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = 't'`).Scan(&schema, &comment); err != nil {
		t.Fatal(err)
	}
	if schema != "numalab_engine_test" || comment != schemaMarker {
		t.Errorf("table t is in schema %q with comment %q", schema, comment)
	}

	q := "SELECT grp, count(*) FROM t WHERE price > $1 GROUP BY grp"
	plans := map[int]string{}
	for _, dop := range []int{1, 2} {
		if dop > runtime.NumCPU() {
			t.Skipf("DOP %d needs %d CPUs", dop, dop)
		}
		if err := eng.SetDOP(ctx, dop); err != nil {
			t.Fatal(err)
		}
		plan, err := eng.Explain(ctx, q, 1.5)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(plan, "cost=") || strings.Contains(plan, "rows=") {
			t.Errorf("plan has costs or estimates:\n%s", plan)
		}
		plans[dop] = plan
		in, err := eng.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if in.Settings["max_parallel_workers_per_gather"] != fmt.Sprint(dop-1) {
			t.Errorf("DOP %d: max_parallel_workers_per_gather = %q", dop, in.Settings["max_parallel_workers_per_gather"])
		}
		// Stream connections opened afterwards get the DOP too.
		c, err := eng.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got any
		c.Query(ctx, "SELECT current_setting('max_parallel_workers_per_gather')::int",
			nil, func(v []any) error { got = v[0]; return nil })
		c.Close()
		if got != int64(dop-1) {
			t.Errorf("DOP %d: a new connection has max_parallel_workers_per_gather %v", dop, got)
		}
	}
	t.Logf("DOP 1:\n%s\nDOP 2:\n%s", plans[1], plans[2])
	if strings.Contains(plans[1], "Gather") {
		t.Errorf("DOP 1 plan has a Gather:\n%s", plans[1])
	}
	if len(plans) == 2 && !strings.Contains(plans[2], "Workers Planned: 1") {
		t.Errorf("DOP 2 plan plans no worker:\n%s", plans[2])
	}
	if err := eng.SetDOP(ctx, runtime.NumCPU()+1); err == nil || !strings.Contains(err.Error(), "CPUs") {
		t.Errorf("SetDOP(CPUs+1) = %v, want a refusal naming the CPUs", err)
	}

	st, err := eng.Prewarm(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Objects != 1 || st.Bytes < n*20 || st.Method != "pg_prewarm, scans" {
		t.Errorf("Prewarm = %+v, want table t read by pg_prewarm", st)
	}
	if st.Placement == nil || len(st.Placement.Nodes()) == 0 {
		t.Errorf("Prewarm placement = %+v, want the shared memory's nodes", st.Placement)
	}
}

// TestPostgresPinsBackend pins a stream's thread to one CPU and checks that
// the backend of the connection it opens follows.
func TestPostgresPinsBackend(t *testing.T) {
	s := pg.Server(t)
	ctx := context.Background()
	eng, err := Open(ctx, "postgres", Options{DSN: s.DSN(), Schema: "numalab_engine_test", PinBackends: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	all, err := place.Affinity()
	if err != nil {
		t.Skip(err)
	}
	cpu := all[len(all)-1]
	done := make(chan error)
	go func() {
		runtime.LockOSThread() // exits with the goroutine: the thread is discarded
		if err := place.Pin([]int{cpu}); err != nil {
			done <- err
			return
		}
		c, err := eng.Connect(ctx)
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		got, err := place.AffinityPID(c.BackendPID())
		if err == nil && !slices.Equal(got, []int{cpu}) {
			err = fmt.Errorf("backend %d runs on CPUs %v, want [%d]", c.BackendPID(), got, cpu)
		}
		done <- err
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestPostgresRefusesForeignSchema(t *testing.T) {
	s := pg.Server(t)
	ctx := context.Background()
	c, err := ConnectPG(ctx, s.DSN(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, stmt := range []string{
		"DROP SCHEMA IF EXISTS theirs_plain CASCADE", // left by an earlier -count round
		"DROP SCHEMA IF EXISTS theirs_commented",
		"CREATE SCHEMA theirs_plain",
		"CREATE TABLE theirs_plain.precious (x int)",
		"CREATE SCHEMA theirs_commented",
		"COMMENT ON SCHEMA theirs_commented IS 'payroll'",
	} {
		if _, err := c.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	for _, schema := range []string{"theirs_plain", "theirs_commented"} {
		_, err := Open(ctx, "postgres", Options{DSN: s.DSN(), Schema: schema})
		if !errors.Is(err, ErrNotOurSchema) || !strings.Contains(err.Error(), "neither use nor drop") {
			t.Errorf("opening with schema %s: %v, want ErrNotOurSchema", schema, err)
		}
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM theirs_plain.precious").Scan(&n); err != nil {
		t.Errorf("the foreign schema's table is gone: %v", err)
	}
}

func TestPostgresBadDSNHidesPassword(t *testing.T) {
	_, err := Open(context.Background(), "postgres",
		Options{DSN: "postgres://u:sekrit-pw@127.0.0.1:1/db?connect_timeout=2"})
	if err == nil {
		t.Fatal("connecting to port 1 succeeded")
	}
	if strings.Contains(err.Error(), "sekrit-pw") {
		t.Errorf("error shows the password: %v", err)
	}
}

// TestPostgresPrewarmElsewhere installs pg_prewarm in a schema of its own,
// as a DBA might: Prewarm must call it there, and a role that may not use
// that schema must still prewarm, with plain reads, saying why.
func TestPostgresPrewarmElsewhere(t *testing.T) {
	s := pg.Server(t)
	ctx := context.Background()
	admin, err := ConnectPG(ctx, s.DSN(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	const db = "numalab_prewarm_elsewhere"
	for _, q := range []string{
		"DROP DATABASE IF EXISTS " + db, "CREATE DATABASE " + db,
		"DROP ROLE IF EXISTS numalab_plain", "CREATE ROLE numalab_plain LOGIN",
		"GRANT CREATE ON DATABASE " + db + " TO numalab_plain",
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	dsn := strings.Replace(s.DSN(), "dbname=postgres", "dbname="+db, 1)
	other, err := ConnectPG(ctx, dsn, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	if _, err := other.Exec(ctx, "CREATE SCHEMA elsewhere; CREATE EXTENSION pg_prewarm SCHEMA elsewhere"); err != nil {
		t.Skipf("pg_prewarm is not available on this server: %v", err)
	}

	for _, tc := range []struct {
		user, schema, method string
	}{
		{"numalab", "numalab_prewarm_owner", "pg_prewarm, scans"},
		{"numalab_plain", "numalab_prewarm_plain",
			`scans (pg_prewarm not used: "elsewhere"."pg_prewarm" failed on t: ERROR: permission denied for schema elsewhere`},
	} {
		eng, err := Open(ctx, "postgres",
			Options{DSN: strings.Replace(dsn, "user=numalab", "user="+tc.user, 1), Schema: tc.schema})
		if err != nil {
			t.Fatal(err)
		}
		loadNumbers(t, eng, 1000)
		st, err := eng.Prewarm(ctx)
		eng.Close()
		if err != nil {
			t.Fatalf("%s: Prewarm: %v", tc.user, err)
		}
		if st.Objects != 1 || !strings.HasPrefix(st.Method, tc.method) {
			t.Errorf("%s: Prewarm = %+v, want table t read, method %q", tc.user, st, tc.method)
		}
	}
}

// TestRoomCheck: a load may use the free space down to 5% of the
// filesystem, and never more than the filesystem holds.
func TestRoomCheck(t *testing.T) {
	r := Room{Dir: "/data", Total: 100 << 30, Free: 20 << 30}
	for _, tc := range []struct {
		need  int64
		want  string // "" for accepted
		holds bool
	}{
		{15 << 30, "", true},
		{15<<30 + 1,
			"about 15GiB to write in /data, which has 20GiB free of 100GiB: that would leave less than 5% free", true},
		{90 << 30, "less than 5% free", true},
		{100<<30 + 1, "about 100GiB, more than the whole filesystem of /data holds (100GiB)", false},
	} {
		err := r.Check(tc.need)
		if tc.want == "" && err != nil ||
			tc.want != "" && (!errors.Is(err, ErrNoRoom) || !strings.Contains(fmt.Sprint(err), tc.want)) {
			t.Errorf("Check(%d) = %v, want %q", tc.need, err, tc.want)
		}
		if herr := r.Holds(tc.need); tc.holds != (herr == nil) {
			t.Errorf("Holds(%d) = %v, want held %v", tc.need, herr, tc.holds)
		}
	}
	// A real filesystem: this test's directory, whose file's directory
	// StorageDir names.
	dir := t.TempDir()
	real, err := RoomAt(dir)
	if err != nil || real.Total <= 0 || real.Free < 0 || real.Free > real.Total {
		t.Errorf("RoomAt(%s) = %+v, %v", dir, real, err)
	}
	eng, err := Open(context.Background(), "sqlite", Options{Path: filepath.Join(dir, "x.db"), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if got := StorageDir(eng); got != dir {
		t.Errorf("StorageDir = %q, want %q", got, dir)
	}
	if err := CheckRoom(eng, real.Total+1); !errors.Is(err, ErrNoRoom) {
		t.Errorf("CheckRoom(more than the filesystem) = %v", err)
	}
}

// TestDuckDBPrewarmLoadsEveryBlock: Prewarm on a fresh open brings the
// table's blocks into DuckDB's buffer pool. A count of each column did
// not: with no NULLs DuckDB answers it from statistics and loaded next to
// nothing.
func TestDuckDBPrewarmLoadsEveryBlock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "warm.duckdb")
	eng, err := Open(ctx, "duckdb", Options{Path: path, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.DB().ExecContext(ctx, "CREATE TABLE w AS SELECT range AS id, range % 7 AS grp, "+
		"'n' || range AS name, range / 4 AS price FROM range(300000)"); err != nil {
		t.Fatal(err)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	eng, err = Open(ctx, "duckdb", Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	buffer := func() int64 {
		var b int64
		if err := eng.DB().QueryRowContext(ctx,
			"SELECT coalesce(sum(memory_usage_bytes), 0)::BIGINT FROM duckdb_memory() WHERE tag = 'BASE_TABLE'").
			Scan(&b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	before := buffer()
	st, err := eng.Prewarm(ctx)
	if err != nil {
		t.Fatal(err)
	}
	after := buffer()
	t.Logf("prewarm %+v: table blocks in the buffer pool %d bytes before, %d after", st, before, after)
	if st.Objects != 1 || st.Bytes <= 0 {
		t.Errorf("Prewarm = %+v, want the one table read", st)
	}
	if after-before < st.Bytes/2 {
		t.Errorf("Prewarm loaded %d bytes of table blocks into the buffer pool of a %d-byte database; want at least half",
			after-before, st.Bytes)
	}
}
