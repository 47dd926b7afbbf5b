package memlat

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
)

func TestReadMeminfo(t *testing.T) {
	root := t.TempDir()
	write := func(text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, "proc"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "proc/meminfo"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(
		"MemTotal:       24684004 kB\nMemFree:        24129112 kB\nMemAvailable:   24259636 kB\nHugePages_Total:       0\n")
	m, err := ReadMeminfo(root)
	if err != nil {
		t.Fatal(err)
	}
	if m.Total != 24684004<<10 || m.Available != 24259636<<10 {
		t.Fatalf("ReadMeminfo = %+v", m)
	}
	for _, bad := range []string{"MemTotal: 1 kB\n", "MemTotal: x kB\nMemAvailable: 1 kB\n"} {
		write(bad)
		if _, err := ReadMeminfo(root); !errors.Is(err, sysfs.ErrFormat) {
			t.Errorf("ReadMeminfo of %q: %v, want sysfs.ErrFormat", bad, err)
		}
	}
}

func oneNode() *result.Topology {
	return &result.Topology{
		THP:    "madvise",
		CPUs:   []result.CPU{{ID: 0, Core: 0}, {ID: 1, Core: 1}},
		Cores:  []result.Core{{ID: 0, CPUs: []int{0}}, {ID: 1, CPUs: []int{1}}},
		Nodes:  []result.Node{{ID: 0, CPUs: []int{0, 1}, MemBytes: 24 << 30}},
		Caches: []result.Cache{{Level: 3, Type: "Unified", SizeBytes: 32 << 20, CPUs: []int{0, 1}}},
	}
}

func TestValidate(t *testing.T) {
	plenty := Meminfo{Total: 24 << 30, Available: 23 << 30}
	ok := DefaultConfig(false)
	if err := ok.Validate(oneNode(), plenty); err != nil {
		t.Fatalf("default config on a 24 GiB machine: %v", err)
	}
	never := oneNode()
	never.THP = "never"
	for _, tc := range []struct {
		name string
		edit func(*Config)
		t    *result.Topology
		m    Meminfo
		want string
	}{
		{"max above memory", func(c *Config) { c.MaxBytes = 64 << 30 }, oneNode(), plenty, "try a smaller --max"},
		{"little memory left", func(c *Config) {}, oneNode(), Meminfo{Total: 4 << 30, Available: 1 << 30}, "only"},
		{"missing node", func(c *Config) { c.Nodes = []int{3} }, oneNode(), plenty,
			"node 3 does not exist (this machine has nodes [0])"},
		{"bad pages", func(c *Config) { c.Pages = []string{"1g"} }, oneNode(), plenty, "want 4k, 2m or both"},
		{"thp never", func(c *Config) { c.Pages = []string{Pages2M} }, never, plenty, "try --pages 4k"},
		{"tiny max", func(c *Config) { c.MaxBytes = 64 << 10 }, oneNode(), plenty, "at least 1MiB"},
		{"mlp", func(c *Config) { c.MLP = []int{3} }, oneNode(), plenty, "want 1, 2, 4, 8 or 16"},
	} {
		c := DefaultConfig(false)
		tc.edit(&c)
		err := c.Validate(tc.t, tc.m)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestSummarise(t *testing.T) {
	s := summarise([]float64{3, 1, 2}, []float64{9}, 3, 50)
	if s.Median != 2 || s.Min != 1 || s.Max != 3 || s.Samples != 3 || s.Dropped != 1 || s.Noisy {
		t.Errorf("clean majority: %+v", s)
	}
	s = summarise([]float64{1}, []float64{5, 9, 7}, 4, 50)
	if !s.Noisy || s.Samples != 4 || s.Median != 6 {
		t.Errorf("mostly preempted: %+v", s)
	}
}

func TestSteps(t *testing.T) {
	for _, tc := range []struct {
		lo, hi int
		want   string
	}{{1, 2, "[1 2]"}, {1, 1, "[1]"}, {1, 0, "[]"}, {1, 12, "[1 2 4 8 12]"}, {1, 16, "[1 2 4 8 16]"}} {
		if got := fmt.Sprint(steps(tc.lo, tc.hi)); got != tc.want {
			t.Errorf("steps(%d, %d) = %s, want %s", tc.lo, tc.hi, got, tc.want)
		}
	}
}

func TestBest(t *testing.T) {
	clean := Stat{Median: 200, Min: 190, Max: 230, Samples: 10}
	low := Stat{Median: 185, Min: 180, Max: 190, Samples: 10}
	noisy := Stat{Median: 170, Min: 150, Max: 300, Samples: 10, Noisy: true}
	for _, c := range []struct {
		stats []Stat
		want  float64
	}{
		{[]Stat{clean}, 190},
		{[]Stat{clean, low}, 180},
		{[]Stat{clean, noisy}, 190}, // a noisy point's windows are not trusted
		{[]Stat{noisy}, 150},        // unless there is nothing else
		{[]Stat{{}, clean}, 190},    // an unmeasured repeat is skipped
		{nil, 0},
	} {
		if got := best(c.stats...); got != c.want {
			t.Errorf("best(%+v) = %v, want %v", c.stats, got, c.want)
		}
	}
}

// TestSetSamples: more clean windows per point keep the same number of
// spare ones, in the full and the quick probe.
func TestSetSamples(t *testing.T) {
	for _, quick := range []bool{false, true} {
		c := DefaultConfig(quick)
		spare := c.Tries - c.Samples
		c.SetSamples(7)
		if c.Samples != 7 || c.Tries-c.Samples != spare {
			t.Errorf("quick %v: Samples %d, Tries %d; want 7 and %d spare", quick, c.Samples, c.Tries, spare)
		}
	}
}

// TestFitMax: the quick probe's 512 MiB does not fit a guest with 1.27 GiB
// available (as the two-node SMT guest has); halved it does, and nothing
// fits below 4x the last-level cache.
func TestFitMax(t *testing.T) {
	top := &result.Topology{CPUs: []result.CPU{{ID: 0}, {ID: 1}, {ID: 2}, {ID: 3}},
		Caches: []result.Cache{{Level: 3, Type: "Unified", SizeBytes: 16 << 20}}}
	c := DefaultConfig(true)
	m := Meminfo{Total: 2 << 30, Available: 1300 << 20}
	if CheckFits(c.Need(top), m) == nil {
		t.Fatalf("the quick probe (%d bytes) fits %+v: the test shows nothing", c.Need(top), m)
	}
	got, ok := c.FitMax(top, m)
	if !ok || got >= c.MaxBytes || got < 64<<20 {
		t.Fatalf("FitMax = %d, %v; want a smaller working set of at least 64 MiB", got, ok)
	}
	c.MaxBytes = got
	if err := CheckFits(c.Need(top), m); err != nil {
		t.Errorf("FitMax's %d bytes do not fit: %v", got, err)
	}
	if _, ok := DefaultConfig(true).FitMax(top, Meminfo{Total: 2 << 30, Available: 600 << 20}); ok {
		t.Error("FitMax found a working set in less memory than 4x the last-level cache needs")
	}
}
