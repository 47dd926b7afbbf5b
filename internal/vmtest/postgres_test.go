package vmtest

import (
	"archive/tar"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/engine"
	"github.com/numalab/numalab/internal/place"
	"github.com/numalab/numalab/internal/result"
)

// pgTree writes a tar of the host's PostgreSQL in Debian's layout
// (/usr/lib/postgresql/N: postgres, initdb, pg_ctl and the modules a
// server and numalab's prewarm load; /usr/share/postgresql/N), UTC's zone
// file and every library they need, each at its own path, for a guest to
// unpack at / (PostgreSQL finds its share directory relative to its
// binary). It skips the test when the host has no such PostgreSQL.
func pgTree(t *testing.T) string {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(bins) == 0 {
		t.Skip("no PostgreSQL in Debian's layout (/usr/lib/postgresql/N/bin) on the host to carry into the guest")
	}
	bin := filepath.Dir(bins[len(bins)-1])
	root := filepath.Dir(bin)
	share := filepath.Join("/usr/share/postgresql", filepath.Base(root))
	var files []string
	for _, p := range []string{"postgres", "initdb", "pg_ctl"} {
		files = append(files, filepath.Join(bin, p))
	}
	mods, _ := filepath.Glob(filepath.Join(root, "lib", "*_and_*.so")) // encoding conversions
	for _, m := range []string{"plpgsql.so", "dict_snowball.so", "pg_prewarm.so", "libpqwalreceiver.so"} {
		mods = append(mods, filepath.Join(root, "lib", m))
	}
	files = append(files, mods...)
	libs, err := sharedLibs(files...)
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, libs...)
	shared, err := filesUnder(share)
	if err != nil {
		t.Skipf("reading PostgreSQL's share directory %s: %v", share, err)
	}
	files = append(files, shared...)
	files = append(files, "/usr/share/zoneinfo/UTC")
	return treeTar(t, "pg.tar", files)
}

// filesUnder lists the files in the tree at dir.
func filesUnder(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	return files, err
}

// treeTar writes the files at their own paths into a tar named name in a
// temporary directory, for a guest to unpack at /, and returns its path.
func treeTar(t *testing.T, name string, files []string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	for _, p := range files {
		if err := addToTar(tw, p); err != nil {
			t.Fatalf("packing %s for the guest: %v", p, err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// serverScript is a guest script that first unpacks the server's tree (a
// treeTar carried in) at / and adds the account nobody, which a managed
// server started as root runs as: the guest runs as root with no other.
func serverScript(tree string) *script {
	s := newScript()
	s.raw("(cd / && tar xf /opt/bin/" + filepath.Base(tree) +
		") && echo 'nobody:x:65534:65534::/tmp:/bin/sh' >> /etc/passwd && echo 'nogroup:x:65534:' >> /etc/group")
	return s
}

// addToTar adds the file at path (symbolic links followed) under its own
// path, without the leading slash.
func addToTar(tw *tar.Writer, path string) error {
	src, err := os.Open(path)
	if err != nil {
		return err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	h := &tar.Header{Name: strings.TrimPrefix(path, "/"), Mode: int64(fi.Mode().Perm()), Size: fi.Size(),
		Typeflag: tar.TypeReg}
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err = io.Copy(tw, src)
	return err
}

// guestPG runs TestReportPostgresWorkers, which the suite leaves out.
var guestPG = flag.Bool("guest-pg", false,
	"run TestReportPostgresWorkers (about 3 minutes of emulated PostgreSQL load)")

// TestReportPostgresWorkers: in the two-node guest, with the host's
// PostgreSQL carried in, 'run report --engine postgres --dop 2 --placement
// node=1' starts numalab's managed server and runs its parallel workers on
// node 1's CPUs only (the postmaster's CPUs, which the workers it forks
// inherit), every sample inside them. The guest runs as root with no
// other account, so the script adds nobody, the account a managed server
// then runs as. 20,000 rows: the load is emulated (the dimension tables
// are 1.44 million rows whatever --rows is). Then 'run report --engine
// postgres --data-node 0 --placement node=1': the managed server started
// bound to node 0 (engine.Options.BindServer), its shared memory on node
// 0 after the prewarm by at least 99%.
func TestReportPostgresWorkers(t *testing.T) {
	if !*guestPG {
		t.Skip("left out of the suite, whose budget is 15 minutes: " +
			"it spends about 3 minutes loading PostgreSQL in an emulated guest. " +
			"The managed server's workers inside the placement are tested on this host " +
			"by internal/engine's TestPostgresManagedWorkersPlaced; " +
			"run this one with: go test ./internal/vmtest -run TestReportPostgresWorkers -guest-pg")
	}
	h := host(t)
	tree := pgTree(t)
	files := append(guestFiles(t), tree)
	m := Machine{Nodes: 2, CPUsPerNode: 2}
	s := serverScript(tree)
	s.add("select", "numalab topo --select node=1 --json")
	s.add("report", "numalab run report --engine postgres --rows 20000 --streams 1 --dop 2 --query P1 "+
		"--placement node=1 --duration 1s --warmup 0s --store /tmp/s.db >&2 && numalab runs show --json --store /tmp/s.db 1")
	s.add("report-data-node",
		"numalab run report --engine postgres --rows 20000 --streams 1 --dop 1 --query P1 --placement node=1 "+
			"--data-node 0 --duration 1s --warmup 0s --store /tmp/dn.db >&2 && numalab runs show --json --store /tmp/dn.db 1")
	secs := runScript(t, h, m, files, s, 20*time.Minute)
	checkServerDataNode(t, "report-data-node", secs["report-data-node"])
	var p place.Placement
	decode(t, "select", secs["select"], &p)
	var r storedRun
	decode(t, "report", secs["report"], &r)
	t.Logf("run report:\n%s", secs["report"].Err)
	var workers []*result.WorkerCPUs
	for _, it := range r.Results {
		if it.Kind != string(result.KindQueryCell) {
			continue
		}
		var qc result.QueryCell
		if err := json.Unmarshal(it.Body, &qc); err != nil {
			t.Fatal(err)
		}
		if qc.Cell != nil && qc.Cell.DOP == 2 {
			workers = append(workers, qc.Workers)
		}
	}
	if len(workers) != 1 || workers[0] == nil {
		t.Fatalf("DOP 2 cells' worker records %v, want one", workers)
	}
	w := workers[0]
	t.Logf("node=1 (CPUs %v) DOP 2: %s, %d workers, %d samples, per CPU %+v, %.1f ms outside; %s%s",
		p.CPUs, w.Kind, w.Workers, w.Samples, w.PerCPU, w.OutsideMS, w.How, w.Why)
	if w.Why != "" || !slices.Equal(w.Placement, p.CPUs) || w.Workers == 0 || w.TotalMS() <= 0 {
		t.Errorf("PostgreSQL's parallel workers: %+v; want them placed on %v and sampled", w, p.CPUs)
	}
	for _, c := range w.PerCPU {
		if c.MS > 0 && !slices.Contains(p.CPUs, c.CPU) {
			t.Errorf("a parallel worker ran %.1f ms on CPU %d, outside node 1's CPUs %v", c.MS, c.CPU, p.CPUs)
		}
	}
	if w.OutsideMS != 0 {
		t.Errorf("%.1f ms outside the placement recorded", w.OutsideMS)
	}
}

// checkServerDataNode: the run stored one data placement on node 0 whose
// server memory (PostgreSQL's shared memory as the prewarming backend maps
// it, MariaDB's buffer pool) is at least 99% on node 0.
func checkServerDataNode(t *testing.T, name string, sec section) {
	t.Helper()
	pd := onePlacedData(t, name, sec)
	t.Logf("--data-node 0, placement node=1: %s", engine.PlacedText(pd))
	u := pd.Stats.Placement
	if pd.Node != 0 || u == nil || u.Local(0) < 0.99 {
		t.Errorf("%s on node 0: %+v; want at least 99%%", pd.Memory, u)
	}
}
