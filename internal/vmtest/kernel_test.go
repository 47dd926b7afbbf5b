package vmtest

import (
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hostTests are the tests that touch move_pages, mbind and sched affinity
// on the machine they run on, by package.
var hostTests = map[string]string{
	"internal/place":  "Host",
	"internal/memlat": "TestMbindMissingNodeHost|TestProbeHost|TestBWNodesHost",
	"internal/topo":   "TestFromSysfsHost",
}

// TestHostTestsInGuest is the kernel-version matrix: the host tests run
// on this host by go test run again inside a 2-node guest on Debian 12's
// 6.1 kernel, where move_pages, mbind and affinity see two nodes (and
// each node's CPUs are SMT siblings).
//
// They run in the matrix's 2-node SMT guest (matrixRun), after its own
// commands, rather than in a guest of their own: a boot takes about 25 s.
// That guest also has an ext4 RAM disk at /data; each binary runs in a
// directory of its own under /tmp, on tmpfs, as it did in a guest without
// the disk.
func TestHostTestsInGuest(t *testing.T) {
	host(t)
	sec := matrixRun(t, "2nodes-smt")["host-tests"]
	out := string(sec.Out) + string(sec.Err)
	t.Logf("host tests in the guest: %.1f s", sec.Seconds)
	if strings.Contains(out, "@@FAIL") || sec.Code != 0 {
		t.Errorf("host tests failed in the guest (exit %d):\n%s", sec.Code, out)
	}
	for _, want := range []string{"--- PASS: TestPageNodesHost", "--- PASS: TestMoveFilePagesHost",
		"--- PASS: TestMbindHost", "--- PASS: TestPinHost", "--- PASS: TestMemPolicyHost", "bind:1", "(tmpfs true)"} {
		if !strings.Contains(out, want) {
			t.Errorf("guest output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "--- SKIP") {
		t.Errorf("a host test skipped in the guest:\n%s", out)
	}
}

// addHostTests builds the host tests' binaries and adds their run to a
// guest's script as the section host-tests; it returns the binaries.
func addHostTests(t *testing.T, s *script) []string {
	t.Helper()
	consultSources(t)
	dir := t.TempDir()
	var files, dirs []string
	var lines strings.Builder
	for _, pkg := range slices.Sorted(maps.Keys(hostTests)) {
		bin := filepath.Join(dir, filepath.Base(pkg)+".test")
		if out, err := exec.Command("go", "test", "-c", "-o", bin,
			"github.com/numalab/numalab/"+pkg).CombinedOutput(); err != nil {
			t.Fatalf("building %s's tests: %v\n%s", pkg, err, out)
		}
		files = append(files, bin)
		// Each binary runs in a directory of its own name, as go test would
		// run it in its package's directory.
		name := filepath.Base(bin)
		dirs = append(dirs, "/tmp/"+name)
		lines.WriteString("echo \"@@PKG " + pkg + "\"; mkdir -p /tmp/" + name + " && cd /tmp/" + name + " && " +
			name + " -test.v -test.run '" + hostTests[pkg] + "' || echo \"@@FAIL " + pkg + "\"\n")
	}
	s.add("host-tests", lines.String())
	s.raw("rm -rf " + strings.Join(dirs, " "))
	return files
}
