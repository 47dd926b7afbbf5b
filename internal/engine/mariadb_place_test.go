package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/numalab/numalab/internal/mariaserver"
	"github.com/numalab/numalab/internal/place"
)

// TestAnonMappings: only anonymous mappings (or mappings of the kernel's
// huge page pool) in runs of the size asked for count, a run being
// contiguous mappings (a chunk split where parts were advised apart);
// files, the heap and the stack do not.
func TestAnonMappings(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "proc", "7")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	maps := `55d0a0000000-55d0a1000000 r-xp 00000000 fe:01 123 /usr/sbin/mariadbd
55d0b0000000-55d0b8000000 rw-p 00000000 00:00 0                          [heap]
7f0000000000-7f0008000000 rw-p 00000000 00:00 0 
7f0010000000-7f0010100000 rw-p 00000000 00:00 0 
7f0020000000-7f0028000000 rw-p 00000000 fe:01 99 /tmp/ib_logfile0
7f0030000000-7f0032000000 rw-p 00000000 00:00 0 
7f0032000000-7f0036000000 rw-p 00000000 00:11 584938                     /anon_hugepage (deleted)
7f0040000000-7f0042000000 rw-p 00000000 00:00 0 
7ffc00000000-7ffc08000000 rw-p 00000000 00:00 0                          [stack]
`
	if err := os.WriteFile(filepath.Join(dir, "maps"), []byte(maps), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := anonMappings(root, 7, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || !got[0x7f0000000000] || !got[0x7f0030000000] || !got[0x7f0032000000] {
		t.Errorf("got %v; want the anonymous 128 MiB mapping at 0x7f0000000000 and the run of 96 MiB at 0x7f0030000000", got)
	}
}

// TestMariaDBPrewarmPlacement: on a managed server the prewarm says where
// the buffer pool's pages are, and they hold at least the data it read.
func TestMariaDBPrewarmPlacement(t *testing.T) {
	my.Server(t) // skips without MariaDB
	ctx := context.Background()
	e, err := Open(ctx, "mariadb", Options{MariaDB: mariaserver.Config{BufferPool: 32 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, q := range []string{"CREATE TABLE p (id int PRIMARY KEY, pad char(200), k int, INDEX (k))",
		"INSERT INTO p SELECT seq, repeat('x', 200), seq % 97 FROM seq_1_to_20000"} {
		if _, err := e.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	st, err := e.Prewarm(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Placement == nil {
		t.Fatal("no placement from a managed server's prewarm")
	}
	var bytes int64
	for _, b := range st.Placement.Bytes {
		bytes += b
	}
	if st.Objects != 2 || st.Bytes <= 0 || bytes < st.Bytes {
		t.Errorf("prewarm read %d objects, %d bytes; the buffer pool holds %d bytes (%v); "+
			"want 2 indexes read and the pool holding them", st.Objects, st.Bytes, bytes, st.Placement.Bytes)
	}
	// On this machine's node 0, which holds all its memory, PlaceData
	// takes MariaDB's buffer pool as it takes PostgreSQL's shared memory.
	if _, err := os.Stat("/sys/devices/system/node/node1"); err == nil {
		return // on a machine of more nodes the pool may lie anywhere: vmtest's work
	}
	pd, err := PlaceData(ctx, e, 0)
	if err != nil || pd.Stats.Placement == nil || pd.Stats.Placement.Local(0) < minOnNode {
		t.Errorf("PlaceData on node 0 of a one-node machine: %v, placement %v", err, pd.Stats.Placement)
	}
}

// TestBindServer: only a managed server (no DSN) is bound, and only for a
// data node.
func TestBindServer(t *testing.T) {
	if o := (Options{}).BindServer(1); o.PG.MemPolicy.Mode != place.Bind ||
		!slices.Equal(o.PG.MemPolicy.Nodes, []int{1}) || !slices.Equal(o.MariaDB.MemPolicy.Nodes, []int{1}) {
		t.Errorf("managed server, node 1: %+v, %+v", o.PG.MemPolicy, o.MariaDB.MemPolicy)
	}
	for _, o := range []Options{(Options{}).BindServer(-1), (Options{DSN: "host=/tmp"}).BindServer(1)} {
		if o.PG.MemPolicy.Mode != place.Default || o.MariaDB.MemPolicy.Mode != place.Default {
			t.Errorf("bound where it must not be: %+v", o)
		}
	}
}

// TestMariaDBManagedThreadsPlaced: on a managed MariaDB server,
// SetDOPPlaced sets every mariadbd thread to the cell's CPUs, a
// connection opened after it (numalab's own pool, unpinned) gets a server
// thread on them too, and a cell with no CPUs gives every thread
// mariadbd's CPUs again; DOP 2 is refused.
func TestMariaDBManagedThreadsPlaced(t *testing.T) {
	my.Server(t) // skips without MariaDB
	all, err := place.Affinity()
	if err != nil || len(all) < 2 {
		t.Skip("needs two CPUs to place MariaDB's threads on one of them")
	}
	ctx := context.Background()
	e, err := Open(ctx, "mariadb", Options{MariaDB: mariaserver.Config{BufferPool: 32 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	pid := e.(*myEngine).server.PID()
	orig, err := place.AffinityPID(pid)
	if err != nil {
		t.Fatal(err)
	}
	threadCPUs := func() map[string]int {
		ts, err := place.ThreadsOf("/", pid)
		if err != nil {
			t.Fatal(err)
		}
		sets := map[string]int{}
		for _, th := range ts {
			if cpus, err := place.AffinityPID(th.TID); err == nil {
				sets[place.FormatCPUs(cpus)]++
			}
		}
		return sets
	}
	one := all[len(all)-1:]
	w, err := SetDOPPlaced(ctx, e, 1, one)
	if err != nil || w.Info.How == "" {
		t.Fatalf("placing on CPU %v: %+v, %v", one, w.Info, err)
	}
	if got := threadCPUs(); len(got) != 1 || got[place.FormatCPUs(one)] == 0 {
		t.Errorf("mariadbd's threads per CPU set %v; want all on %v", got, one)
	}
	// A connection numalab does not pin: a new thread, or one from the
	// thread cache, on the cell's CPUs all the same.
	c, err := e.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var tid int
	err = c.QueryRowContext(ctx,
		"SELECT thread_os_id FROM performance_schema.threads WHERE processlist_id = connection_id()").Scan(&tid)
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := place.AffinityPID(tid); err != nil || !slices.Equal(got, one) {
		t.Errorf("an unpinned connection's server thread %d runs on %v (%v); want the cell's %v", tid, got, err, one)
	}
	if _, err := SetDOPPlaced(ctx, e, 1, nil); err != nil {
		t.Fatal(err)
	}
	if got := threadCPUs(); len(got) != 1 || got[place.FormatCPUs(orig)] == 0 {
		t.Errorf("after a cell with no CPUs, mariadbd's threads per CPU set %v; want all on its own %v", got, orig)
	}
	if _, err := SetDOPPlaced(ctx, e, 2, one); err == nil {
		t.Error("DOP 2 on MariaDB was accepted")
	}
}
