package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/store"
)

const topoFixtures = "../../testdata/topology/"

// The text and JSON views of captured machines: this 2-vCPU guest, the
// same under cgroup limits with steal, a hybrid laptop, a cgroup-restricted
// box with memory-only nodes, and two hwloc XML machines (384 CPUs;
// DRAM+HBM nodes), which have no preflight.
var topoExamples = []struct{ golden, args string }{
	{"topo-kvm-2vcpu.txt", "--sysfs " + topoFixtures + "kvm-2vcpu-zen.tar.gz"},
	{"topo-kvm-2vcpu.json", "--json --sysfs " + topoFixtures + "kvm-2vcpu-zen.tar.gz"},
	{"topo-guest-limits.txt", "--sysfs " + topoFixtures + "guest-cgroup-limits-steal.tar.gz"},
	{"topo-hybrid.txt", "--sysfs " + topoFixtures + "20em64t-hybrid-1p6c2t+2ca4co1t.tar.bz2"},
	{"topo-cgroup.txt", "--sysfs " + topoFixtures + "16amd64-4n4c-cgroup-distance-merge.tar.bz2"},
	{"topo-cgroup.json", "--json --sysfs " + topoFixtures + "16amd64-4n4c-cgroup-distance-merge.tar.bz2"},
	{"topo-192em64t.txt", "--hwloc " + topoFixtures + "192em64t-24n8c2t.xml"},
	{"topo-heteromem.txt", "--hwloc " + topoFixtures + "64intel64-heteromem.xml"},
}

func TestTopoGolden(t *testing.T) {
	for _, ex := range topoExamples {
		t.Run(ex.golden, func(t *testing.T) {
			out, stderr, err := runCLI(t, append([]string{"topo"}, strings.Fields(ex.args)...)...)
			if err != nil {
				t.Fatalf("numalab topo %s: %v\n%s", ex.args, err, stderr)
			}
			if strings.HasSuffix(ex.golden, ".json") {
				var top result.Topology
				if err := json.Unmarshal([]byte(out), &top); err != nil || len(top.CPUs) == 0 {
					t.Errorf("--json output does not read back as a topology: %v", err)
				}
			}
			checkGolden(t, ex.golden, out)
		})
	}
}

func TestTopoSelect(t *testing.T) {
	capture := topoFixtures + "16em64t-4s2c2t.tar.bz2" // 4 sockets x 2 cores x 2 threads
	out, _, err := runCLI(t, "topo", "--sysfs", capture, "--select", "smt=off")
	if err != nil {
		t.Fatal(err)
	}
	if want := "smt=off: cpus 0-7 (8 cores, node 0)\n"; out != want {
		t.Errorf("--select smt=off printed %q, want %q", out, want)
	}
	out, _, err = runCLI(t, "topo", "--sysfs", capture, "--select", "cores=2", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var p struct{ CPUs []int }
	if err := json.Unmarshal([]byte(out), &p); err != nil || len(p.CPUs) != 4 {
		t.Errorf("--select cores=2 --json: %q, %v", out, err)
	}
	if _, _, err := runCLI(t, "topo", "--sysfs", capture, "--select", "node=3"); err == nil ||
		!strings.Contains(err.Error(), "node 0") {
		t.Errorf("an impossible selector should say what exists: %v", err)
	}
}

func TestTopoBadFlags(t *testing.T) {
	for args, want := range map[string]string{
		"--sysfs a --hwloc b":                       "give one source",
		"--capture x.tar.bz2":                       "must end in .tar.gz",
		"--capture x.tar.gz --hwloc b":              "not an XML file",
		"--sysfs /nonexistent/numalab":              "want a directory holding sys/ and proc/",
		"--hwloc " + topoFixtures + "COPYING.hwloc": "want the output of lstopo --of xml",
		"--sysfs " + topoFixtures + "COPYING.hwloc": "numalab topo --capture",
	} {
		_, _, err := runCLI(t, append([]string{"topo"}, strings.Fields(args)...)...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("topo %s: err = %v, want one saying %q", args, err, want)
		}
	}
}

// TestTopoHostCaptureAndRead reads this machine: it captures it, shows the
// capture, and checks that the capture reads as the machine does. Any
// Linux machine will do.
func TestTopoHostCaptureAndRead(t *testing.T) {
	if _, err := os.Stat("/sys/devices/system/cpu"); err != nil {
		t.Skip("no /sys/devices/system/cpu: not Linux")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "this-host.tar.gz")
	out, _, err := runCLI(t, "topo", "--capture", file)
	if err != nil || !strings.Contains(out, "wrote "+file) {
		t.Fatalf("--capture: %q, %v", out, err)
	}
	live, _, err := runCLI(t, "topo", "--json")
	if err != nil {
		t.Fatal(err)
	}
	captured, _, err := runCLI(t, "topo", "--json", "--sysfs", file)
	if err != nil {
		t.Fatal(err)
	}
	var a, b result.Topology
	if err := json.Unmarshal([]byte(live), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(captured), &b); err != nil {
		t.Fatal(err)
	}
	if len(a.CPUs) != len(b.CPUs) || len(a.Cores) != len(b.Cores) || len(a.Caches) != len(b.Caches) ||
		a.Host != b.Host || b.Source != "capture:"+file {
		t.Errorf("the capture reads differently from the machine:\nlive     %s\ncaptured %s", live, captured)
	}
	text, _, err := runCLI(t, "topo")
	if err != nil || !strings.Contains(text, "cores ") || !strings.Contains(text, "NUMA nodes") {
		t.Errorf("numalab topo on this machine: %v\n%s", err, text)
	}
}

// BenchmarkTopoThisHost is `numalab topo` on this machine, start to finish
// (read /sys and /proc, render the map).
func BenchmarkTopoThisHost(b *testing.B) {
	if _, err := os.Stat("/sys/devices/system/cpu"); err != nil {
		b.Skip("no /sys/devices/system/cpu: not Linux")
	}
	for b.Loop() {
		if err := run(context.Background(), []string{"topo"}, io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRunStoresPreflightOnHost: every run's record starts with this
// machine's preflight, the one topo shows. Any Linux machine will do.
func TestRunStoresPreflightOnHost(t *testing.T) {
	if _, err := os.Stat("/sys/devices/system/cpu"); err != nil {
		t.Skip("no /sys/devices/system/cpu: not Linux")
	}
	path := filepath.Join(t.TempDir(), "runs.db")
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, args: []string{"probe", "io"}}
	rec, err := startRun(context.Background(), e, path, "probe-io", struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Finish(nil, ""); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run, err := st.Get(rec.ID())
	if err != nil {
		t.Fatal(err)
	}
	all, err := preflight.Kind.All(run)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Results) != 1 || len(all) != 1 {
		t.Fatalf("stored items %+v, want the preflight alone", run.Results)
	}
	stored := all[0]
	live, _, err := runCLI(t, "topo", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var shown struct{ Preflight preflight.Report }
	if err := json.Unmarshal([]byte(live), &shown); err != nil {
		t.Fatal(err)
	}
	// Steal moves between the two reads; every other setting is the same.
	names := func(r preflight.Report) (s []string) {
		for _, x := range r.Settings {
			s = append(s, x.Name)
		}
		return s
	}
	if len(stored.Settings) == 0 || !slices.Equal(names(stored), names(shown.Preflight)) ||
		len(stored.Warnings) != len(shown.Preflight.Warnings) {
		t.Errorf("stored preflight %+v, topo shows %+v", stored, shown.Preflight)
	}
}

// TestEvalPrintsPreflightFirstOnHost: eval's first lines are the
// preflight's verdict, before its plan (here refused: the budget is too
// small to measure anything).
func TestEvalPrintsPreflightFirstOnHost(t *testing.T) {
	if _, err := os.Stat("/sys/devices/system/cpu"); err != nil {
		t.Skip("no /sys/devices/system/cpu: not Linux")
	}
	dir := t.TempDir()
	out, _, err := runCLI(t, "eval", "--budget", "1s", "--dir", dir, "--store", filepath.Join(dir, "numalab.db"))
	if err == nil || !strings.Contains(err.Error(), "budget") {
		t.Fatalf("eval --budget 1s: %v, want the budget refused", err)
	}
	if !strings.HasPrefix(out, "preflight: ") {
		t.Errorf("eval does not start with the preflight:\n%s", out)
	}
}
