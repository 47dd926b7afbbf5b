package memlat

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/result"
)

// testdata/smaps-thp.txt is /proc/self/smaps of a test process that had
// mapped 8 MiB with MADV_HUGEPAGE at 0x7f6062800000 and 4 MiB with
// MADV_NOHUGEPAGE at 0x7f6062200000 (kernel with THP "madvise").
func TestParseSmapsCaptured(t *testing.T) {
	for _, tc := range []struct {
		addr       uintptr
		start, end uintptr
		rss, huge  int64
	}{
		{0x7f6062800000, 0x7f6062800000, 0x7f6063000000, 8 << 20, 8 << 20},
		{0x7f6062abcdef, 0x7f6062800000, 0x7f6063000000, 8 << 20, 8 << 20},
		{0x7f6062200000, 0x7f6062200000, 0x7f6062600000, 4 << 20, 0},
	} {
		f, err := os.Open("testdata/smaps-thp.txt")
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParseSmaps(f, tc.addr)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := Mapping{Start: tc.start, End: tc.end, Rss: tc.rss, AnonHugePages: tc.huge}
		if m != want {
			t.Errorf("ParseSmaps(%#x) = %+v, want %+v", tc.addr, m, want)
		}
	}
}

func TestParseSmapsErrors(t *testing.T) {
	const ok = "00400000-00500000 r-xp 00000000 08:01 1 /bin/x\nRss: 12 kB\nAnonHugePages: 0 kB\n"
	if _, err := ParseSmaps(strings.NewReader(ok), 0x600000); !errors.Is(err, ErrNoMapping) {
		t.Errorf("address outside every mapping: %v, want ErrNoMapping", err)
	}
	for _, bad := range []string{
		"0040zz00-00500000 r-xp 00000000 08:01 1 /bin/x\n",
		"00400000-00500000 r-xp 00000000 08:01 1 /bin/x\nAnonHugePages: many kB\n",
		"00400000-00500000 r-xp 00000000 08:01 1 /bin/x\nRss: 12 MB\n",
	} {
		if _, err := ParseSmaps(strings.NewReader(bad), 0x400000); !errors.Is(err, ErrBadProc) {
			t.Errorf("ParseSmaps(%q): %v, want ErrBadProc", bad, err)
		}
	}
	m, err := ParseSmaps(strings.NewReader(ok), 0x400000)
	if err != nil || m.Rss != 12<<10 {
		t.Errorf("ParseSmaps(ok) = %+v, %v", m, err)
	}
}

func TestParseMeminfo(t *testing.T) {
	m, err := ParseMeminfo(strings.NewReader("MemTotal:       24684004 kB\nMemFree:        24129112 kB\nMemAvailable:   24259636 kB\nHugePages_Total:       0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Total != 24684004<<10 || m.Available != 24259636<<10 {
		t.Fatalf("ParseMeminfo = %+v", m)
	}
	for _, bad := range []string{"MemTotal: 1 kB\n", "MemTotal: x kB\nMemAvailable: 1 kB\n", "MemTotal: 1 kB\nMemAvailable: 1 pages\n"} {
		if _, err := ParseMeminfo(strings.NewReader(bad)); !errors.Is(err, ErrBadProc) {
			t.Errorf("ParseMeminfo(%q): %v, want ErrBadProc", bad, err)
		}
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"4096": 4096, "64k": 64 << 10, "32KiB": 32 << 10, "1m": 1 << 20, "1g": 1 << 30, "1GiB": 1 << 30, "1.5m": 3 << 19, "2MB": 2 << 20} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v, want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "-1g", "0", "1q", "1e30"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q): no error", bad)
		}
	}
	for in, want := range map[int64]string{4096: "4KiB", 1 << 30: "1GiB", 3 << 19: "1.5MiB", 100: "100B"} {
		if got := FormatBytes(in); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", in, got, want)
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
		{"missing node", func(c *Config) { c.Nodes = []int{3} }, oneNode(), plenty, "node 3 does not exist (this machine has nodes [0])"},
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
