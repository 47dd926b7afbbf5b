package vmtest

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hostTests are the tests that touch move_pages, mbind and sched affinity
// on the machine they run on, by package.
var hostTests = map[string]string{
	"internal/place":  "Host",
	"internal/memlat": "TestMbindMissingNodeHost|TestProbeHost",
	"internal/topo":   "TestFromSysfsHost",
}

// TestHostTestsInGuest is the kernel-version matrix: the host tests run
// on this host by go test run again inside a 2-node guest on Debian 12's
// 6.1 kernel, where move_pages, mbind and affinity see two nodes.
func TestHostTestsInGuest(t *testing.T) {
	h := host(t)
	consultSources(t)
	dir := t.TempDir()
	var files []string
	var script strings.Builder
	for pkg, run := range hostTests {
		bin := filepath.Join(dir, filepath.Base(pkg)+".test")
		if out, err := exec.Command("go", "test", "-c", "-o", bin, "github.com/numalab/numalab/"+pkg).CombinedOutput(); err != nil {
			t.Fatalf("building %s's tests: %v\n%s", pkg, err, out)
		}
		files = append(files, bin)
		// Each binary runs in a directory of its own name, as go test would
		// run it in its package's directory.
		name := filepath.Base(bin)
		script.WriteString("echo \"@@PKG " + pkg + "\"; mkdir -p /tmp/" + name + " && cd /tmp/" + name + " && " +
			name + " -test.v -test.run '" + run + "' || echo \"@@FAIL " + pkg + "\"\n")
	}
	m := Machine{Nodes: 2, CPUsPerNode: 2}
	r, err := h.Run(context.Background(), m, Job{Files: files, Script: script.String(), Timeout: 8 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	out := string(r.Output)
	t.Logf("%s: wall %v", m, r.Wall.Round(time.Second))
	if strings.Contains(out, "@@FAIL") || r.ExitCode != 0 {
		t.Errorf("host tests failed in the guest:\n%s", out)
	}
	for _, want := range []string{"--- PASS: TestPageNodesHost", "--- PASS: TestMoveFilePagesHost", "--- PASS: TestMbindHost",
		"--- PASS: TestPinHost", "--- PASS: TestMemPolicyHost", "bind:1", "(tmpfs true)"} {
		if !strings.Contains(out, want) {
			t.Errorf("guest output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "--- SKIP") {
		t.Errorf("a host test skipped in the guest:\n%s", out)
	}
}
