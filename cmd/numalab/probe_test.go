package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/memlat"
)

func TestProbeMemBadInput(t *testing.T) {
	db := filepath.Join(t.TempDir(), "runs.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--max", "100t"}, "try a smaller --max"},
		{[]string{"--max", "lots", "--window", "0"}, `-max: "lots" is not valid: parsing size "lots": not a size`},
		{[]string{"--min", "4q", "--pages", "1g"}, `-min: "4q" is not valid`},
		{[]string{"--pages", "1g"}, `-pages: "1g" is not a page size (want 4k, 2m or both)`},
		{[]string{"--nodes", "63"}, "NUMA node 63 does not exist"},
		{[]string{"--nodes", "x"}, "is not a list of node numbers"},
		{[]string{"--samples", "0", "--window", "0"}, `-window: "0"`},
		{[]string{"stray"}, `unexpected argument "stray"`},
		{[]string{"--repeats", "0"}, `-repeats: "0" is not valid: want a whole number from 1 to 100`},
		{[]string{"--per-doubling", "0"}, `-per-doubling: "0" is not valid: want a whole number from 1 to 16`},
		{[]string{"--repeats", "-3", "--per-doubling", "99"}, `-per-doubling: "99" is not valid`},
		{[]string{"--window", "1e9"}, `-window: "1e9" is not valid`},
	} {
		_, _, err := runCLI(t, append([]string{"probe", "mem", "--store", db}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("probe mem %v: %v, want %q", tc.args, err, tc.want)
		}
	}
	if _, stderr, err := runCLI(t, "probe", "disk"); !errors.Is(err, cliflag.ErrUsage) ||
		!strings.Contains(stderr, `unknown probe "disk"`) {
		t.Errorf("probe disk: %v %q", err, stderr)
	}
	if _, _, err := runCLI(t, "probe"); !errors.Is(err, cliflag.ErrUsage) {
		t.Errorf("probe without a probe: %v", err)
	}
}

// TestProbeMemStoresRunHost runs a tiny probe on this machine and reads
// the stored summary back as 'numalab model --from-run' does, in a child
// process beside the package's other tests (childTests).
func TestProbeMemStoresRunHost(t *testing.T) {
	if _, child := runAsChild(t); !child {
		return
	}
	db := filepath.Join(t.TempDir(), "runs.db")
	out, stderr, err := runCLI(t, "probe", "mem", "--store", db, "--max", "16m", "--per-doubling", "1",
		"--samples", "1", "--window", "5", "--pages", "4k")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{"Latency ladder, 4k pages asked", "Core clock:", "NUMA latency matrix",
		"Memory bandwidth, "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	run := onlyRun(t, db)
	if run.Kind != "probe-mem" || run.Status != "complete" || !strings.Contains(run.Headline, "DRAM") {
		t.Errorf("run %+v", run)
	}
	var sum *memlat.Summary
	for _, it := range run.Results {
		if it.Kind == "memlat.Summary" {
			sum = new(memlat.Summary)
			if err := json.Unmarshal(it.Body, sum); err != nil {
				t.Fatal(err)
			}
		}
	}
	if sum == nil || sum.GHz <= 0 || sum.DRAMNS4K <= 0 || sum.LocalNS <= 0 || len(sum.MatrixNS) == 0 {
		t.Errorf("stored summary %+v", sum)
	}
}

// The help names the threshold the matrix is flagged under.
func TestProbeHelpNUMAThreshold(t *testing.T) {
	if want := fmt.Sprintf("under %.2fx", memlat.NUMAEffectRatio); !strings.Contains(helpText("probe"), want) {
		t.Errorf("probe --help does not say %q", want)
	}
}
