package vmtest

import (
	"flag"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/numalab/numalab/internal/place"
)

// mariaTree writes a tar of the host's MariaDB server in Debian's layout
// (mariadbd in /usr/sbin; mariadb-install-db, which is a shell script,
// and the programs it runs in /usr/bin; /usr/share/mysql) and every
// library they need, each at its own path, for a guest to unpack at /.
// It skips the test when the host has no such MariaDB.
func mariaTree(t *testing.T) string {
	t.Helper()
	files := []string{"/usr/sbin/mariadbd", "/usr/bin/mariadb-install-db", "/usr/bin/my_print_defaults",
		"/usr/bin/resolveip"}
	for _, f := range files {
		if _, err := exec.LookPath(f); err != nil {
			t.Skipf(
				"no MariaDB server in Debian's layout on the host to carry into the guest (.ci/run installs mariadb-server): %v",
				err)
		}
	}
	libs, err := sharedLibs(files...)
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, libs...)
	shared, err := filesUnder("/usr/share/mysql")
	if err != nil {
		t.Skipf("reading MariaDB's share directory: %v", err)
	}
	return treeTar(t, "mariadb.tar", append(files, shared...))
}

// guestMariaDB runs TestReportMariaDBDataNode, which the suite leaves out.
var guestMariaDB = flag.Bool("guest-mariadb", false,
	"run TestReportMariaDBDataNode (about 3 minutes of an emulated MariaDB server)")

// TestReportMariaDBDataNode: in the two-node guest, with the host's
// MariaDB carried in, 'run report --engine mariadb --data-node 0
// --placement node=1' starts numalab's managed server with its memory
// bound to node 0 (engine.Options.BindServer) and finds its buffer pool
// on node 0 after the prewarm by at least 99%. From then on, while the
// cell runs, the guest samples every mariadbd thread's allowed CPUs and
// CPU time: the cell sets every mariadbd thread to node 1's CPUs
// (engine.SetDOPPlaced), so threads on node 1's CPUs run the cell's work
// and threads on other CPUs, or on every CPU, run under 5% of that (the
// sampling starts a little before the cell, when the prewarm's thread is
// still pinned to node 0 and InnoDB's threads run anywhere).
//
// Each node has 2 GiB: the server's data directory lies in the guest's
// /tmp, in memory, and with the dimension tables (132 MiB whatever --rows
// is) a server bound to a 1 GiB node ran out of memory. The guest runs as
// root with no other account, so the script adds nobody, the account a
// managed server then runs as, and has no /etc/hosts, where
// mariadb-install-db looks up localhost.
func TestReportMariaDBDataNode(t *testing.T) {
	if !*guestMariaDB {
		t.Skip("left out of the suite, whose budget is 15 minutes: " +
			"it boots a guest and runs an emulated MariaDB server for about 3 minutes. " +
			"The buffer pool's placement is tested on this host (one node) " +
			"by internal/engine's TestMariaDBPrewarmPlacement and TestBindServer; " +
			"run this one with: go test ./internal/vmtest -run TestReportMariaDBDataNode -guest-mariadb")
	}
	h := host(t)
	tree := mariaTree(t)
	files := append(guestFiles(t), tree)
	m := Machine{Nodes: 2, CPUsPerNode: 2, MemPerNodeMiB: 2048}
	s := serverScript(tree)
	s.raw("echo '127.0.0.1 localhost' >> /etc/hosts")
	s.add("select", "numalab topo --select node=1 --json")
	// Each sample line: a mariadbd thread's id, allowed CPUs, and user
	// and system ticks, every half second from the placement's note on.
	s.add("report", `numalab run report --engine mariadb --rows 20000 --streams 1 --query P1 --placement node=1 --data-node 0 --warmup 0s --duration 8s --store /tmp/dn.db >/tmp/run.out 2>/tmp/run.err & r=$!
until grep -q "placed on node" /tmp/run.err; do kill -0 $r 2>/dev/null || break; sleep 0.2; done
while kill -0 $r 2>/dev/null; do
  for d in $(pidof mariadbd); do for k in /proc/$d/task/*; do echo "${k##*/} $(grep Cpus_allowed_list: $k/status | cut -f2) $(cut -d' ' -f14,15 $k/stat)"; done; done >>/tmp/samples
  sleep 0.5
done
wait $r; rc=$?; cat /tmp/run.out /tmp/run.err >&2; [ $rc = 0 ] && numalab runs show --json --store /tmp/dn.db 1`)
	s.add("samples", "cat /tmp/samples")
	secs := runScript(t, h, m, files, s, 20*time.Minute)
	checkServerDataNode(t, "report", secs["report"])
	var p place.Placement
	decode(t, "select", secs["select"], &p)
	type thread struct {
		cpus        string
		first, last int
	}
	threads := map[string]*thread{}
	for _, l := range strings.Split(strings.TrimSpace(string(secs["samples"].Out)), "\n") {
		f := strings.Fields(l)
		if len(f) < 4 {
			continue // the thread ended between the listing and the reads
		}
		if len(f) != 4 {
			t.Fatalf("sample %q: want a thread id, its CPUs and two tick counts", l)
		}
		u, err1 := strconv.Atoi(f[2])
		k, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil {
			t.Fatalf("sample %q: %v %v", l, err1, err2)
		}
		if th := threads[f[0]]; th == nil {
			threads[f[0]] = &thread{cpus: f[1], first: u + k, last: u + k}
		} else {
			th.cpus, th.last = f[1], u+k
		}
	}
	var inside, outside int // ticks run by threads on node 1's CPUs, and elsewhere
	for id, th := range threads {
		cpus, err := place.ParseCPUList(th.cpus)
		if err != nil {
			t.Fatalf("thread %s's CPUs %q: %v", id, th.cpus, err)
		}
		busy := th.last - th.first
		if !slices.ContainsFunc(cpus, func(c int) bool { return !slices.Contains(p.CPUs, c) }) {
			inside += busy
			continue
		}
		outside += busy
		if busy > 0 {
			t.Logf("mariadbd thread %s, on CPUs %v, ran %d ticks", id, cpus, busy)
		}
	}
	t.Logf("%d mariadbd threads sampled; ticks run while the cell ran: "+
		"%d by threads on node 1's CPUs %v, %d by threads on other CPUs", len(threads), inside, p.CPUs, outside)
	if inside == 0 || outside*20 > inside {
		t.Errorf("threads on node 1's CPUs ran %d ticks, threads on others %d; "+
			"want the cell's work inside, and under 5%% of that outside", inside, outside)
	}
}
