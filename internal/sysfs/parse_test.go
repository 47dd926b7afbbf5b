package sysfs

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		bad  bool
	}{
		{"", nil, false},
		{"\n", nil, false},
		{"0", []int{0}, false},
		{"0-3,8\n", []int{0, 1, 2, 3, 8}, false},
		{"8,0-1,1", []int{0, 1, 8}, false},
		{"1,3,5,7,9,11,13,15,17,19,21,23", []int{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23}, false},
		{"4-20", []int{4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, false},
		{"3-1", nil, true},
		{"a", nil, true},
		{"0-", nil, true},
		{"-1", nil, true},
		{"0,,1", nil, true},
		{"0-15:2/4", nil, true},
		{"0-99999999", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseCPUList([]byte(tt.in))
		if tt.bad {
			if !errors.Is(err, ErrFormat) {
				t.Errorf("ParseCPUList(%q) = %v, %v; want an ErrFormat error", tt.in, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestFormatCPUList(t *testing.T) {
	tests := []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{0}, "0"},
		{[]int{0, 1}, "0-1"},
		{[]int{0, 1, 2, 3, 8}, "0-3,8"},
		{[]int{1, 3, 5}, "1,3,5"},
		{[]int{0, 2, 3, 4, 7, 8}, "0,2-4,7-8"},
	}
	for _, tt := range tests {
		if got := FormatCPUList(tt.in); got != tt.want {
			t.Errorf("FormatCPUList(%v) = %q, want %q", tt.in, got, tt.want)
		}
		back, err := ParseCPUList([]byte(tt.want))
		if err != nil || !slices.Equal(back, tt.in) {
			t.Errorf("ParseCPUList(FormatCPUList(%v)) = %v, %v", tt.in, back, err)
		}
	}
}

func TestParseCPUMask(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		bad  bool
	}{
		{"", nil, false},
		{"00000000", nil, false},
		{"00000001\n", []int{0}, false},
		{"00000000,0000000f", []int{0, 1, 2, 3}, false},
		{"00000001,00000000", []int{32}, false},
		{"0000,00000011,11111111", []int{0, 4, 8, 12, 16, 20, 24, 28, 32, 36}, false},
		{"80000000,00000000,00000000", []int{95}, false},
		{"0x000000ff", []int{0, 1, 2, 3, 4, 5, 6, 7}, false},
		{"0x00000001,0x00000002", []int{1, 32}, false},
		{"f", []int{0, 1, 2, 3}, false},
		{"xyz", nil, true},
		{"100000000", nil, true}, // nine digits do not fit a 32-bit group
		{"0xf...f", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseCPUMask([]byte(tt.in))
		if tt.bad {
			if !errors.Is(err, ErrFormat) {
				t.Errorf("ParseCPUMask(%q) = %v, %v; want an ErrFormat error", tt.in, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseCPUMask(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		bad  bool
	}{
		{"32K\n", 32 << 10, false},
		{"30720K", 30 << 20, false},
		{"2M", 2 << 20, false},
		{"1G", 1 << 30, false},
		{"512", 512, false},
		{"", 0, true},
		{"K", 0, true},
		{"12X", 0, true},
		{"-1K", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseSize([]byte(tt.in))
		if tt.bad {
			if !errors.Is(err, ErrFormat) {
				t.Errorf("ParseSize(%q) = %d, %v; want an ErrFormat error", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestParseMeminfo(t *testing.T) {
	node := "Node 0 MemTotal:        8387892 kB\nNode 0 MemFree:  100 kB\nNode 0 HugePages_Total:     4\n"
	m, err := ParseMeminfo(strings.NewReader(node))
	if err != nil {
		t.Fatal(err)
	}
	if m["MemTotal"] != 8387892*1024 || m["MemFree"] != 100*1024 || m["HugePages_Total"] != 4 {
		t.Errorf("node meminfo: got %v", m)
	}
	m, err = ParseMeminfo(strings.NewReader("MemTotal:       24684084 kB\nbogus line\n"))
	if err != nil || m["MemTotal"] != 24684084*1024 {
		t.Errorf("meminfo: got %v, %v", m, err)
	}
	if _, err := ParseMeminfo(strings.NewReader("MemTotal: lots kB\n")); !errors.Is(err, ErrFormat) {
		t.Errorf("bad meminfo: err = %v, want ErrFormat", err)
	}
}

func TestParseMounts(t *testing.T) {
	in := "cgroup /sys/fs/cgroup/cpuset cgroup rw,relatime,cpuset 0 0\n" +
		"none /mnt/with\\040space tmpfs rw 0 0\n"
	ms, err := ParseMounts(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Dir != "/sys/fs/cgroup/cpuset" || ms[0].Type != "cgroup" ||
		!slices.Contains(ms[0].Options, "cpuset") || ms[1].Dir != "/mnt/with space" {
		t.Errorf("got %+v", ms)
	}
	if _, err := ParseMounts(strings.NewReader("only two\n")); !errors.Is(err, ErrFormat) {
		t.Errorf("short line: err = %v, want ErrFormat", err)
	}
}

func TestParseCgroup(t *testing.T) {
	in := "4:cpuset:/\n1:name=systemd:/user.slice\n0::/user.slice/session-1.scope\n"
	ls, err := ParseCgroup(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 3 || ls[0].Hierarchy != 4 || !slices.Equal(ls[0].Controllers, []string{"cpuset"}) ||
		ls[2].Hierarchy != 0 || ls[2].Controllers != nil || ls[2].Path != "/user.slice/session-1.scope" {
		t.Errorf("got %+v", ls)
	}
	if _, err := ParseCgroup(strings.NewReader("x:y:z\n")); !errors.Is(err, ErrFormat) {
		t.Errorf("bad hierarchy: err = %v, want ErrFormat", err)
	}
}

func TestParseCPUInfo(t *testing.T) {
	x86 := `processor	: 0
vendor_id	: AuthenticAMD
model name	: AMD EPYC
physical id	: 0
flags		: fpu sse2 hypervisor

processor	: 1
model name	: AMD EPYC
physical id	: 1
flags		: fpu sse2
`
	cs, err := ParseCPUInfo(strings.NewReader(x86))
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].ModelName != "AMD EPYC" || cs[1].PhysicalID != 1 ||
		!slices.Contains(cs[0].Flags, "hypervisor") || slices.Contains(cs[1].Flags, "hypervisor") {
		t.Errorf("x86: got %+v", cs)
	}
	arm := "Processor\t: ARMv7 Processor rev 4 (v7l)\nprocessor\t: 0\nFeatures\t: half thumb\n\nprocessor\t: 1\n"
	cs, err = ParseCPUInfo(strings.NewReader(arm))
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[1].ModelName != "ARMv7 Processor rev 4 (v7l)" || cs[0].PhysicalID != -1 {
		t.Errorf("arm: got %+v", cs)
	}
}

func TestBracketed(t *testing.T) {
	for in, want := range map[string]string{
		"always [madvise] never\n": "madvise",
		"[always] madvise never":   "always",
		"on\n":                     "on",
		"":                         "",
	} {
		if got := Bracketed([]byte(in)); got != want {
			t.Errorf("Bracketed(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFS reads a small tree written by the test: the readers, a missing
// file, a dangling link and the list/mask fallback.
func TestFS(t *testing.T) {
	root := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("sys/devices/system/cpu/online", "0-3\n")
	write("sys/devices/system/cpu/cpu0/topology/core_id", " 7\n")
	write("sys/devices/system/cpu/cpu0/topology/thread_siblings", "00000000,00000011\n")
	write("sys/devices/system/cpu/cpu1/topology/core_id", "x\n")
	write("sys/devices/system/cpu/cpu12/x", "")
	write("sys/devices/system/cpu/cpufreq/x", "")
	if err := os.Symlink("../nowhere", filepath.Join(root, "sys/devices/system/cpu/cpu5")); err != nil {
		t.Fatal(err)
	}
	f := New(root)
	if got, err := f.CPUList("sys/devices/system/cpu/online"); err != nil || !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Errorf("CPUList = %v, %v", got, err)
	}
	if got, err := f.Int("/sys/devices/system/cpu/cpu0/topology/core_id"); err != nil || got != 7 {
		t.Errorf("Int = %v, %v", got, err)
	}
	if _, err := f.Int("sys/devices/system/cpu/cpu1/topology/core_id"); !errors.Is(err, ErrFormat) {
		t.Errorf("Int of junk: err = %v, want ErrFormat", err)
	}
	if _, err := f.String("sys/devices/system/cpu/offline"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want ErrNotExist", err)
	}
	got, err := f.CPUs("sys/devices/system/cpu/cpu0/topology/thread_siblings",
		"sys/devices/system/cpu/cpu0/topology/thread_siblings_list")
	if err != nil || !slices.Equal(got, []int{0, 4}) {
		t.Errorf("CPUs from the mask = %v, %v", got, err)
	}
	got, err = f.CPUs("sys/devices/system/cpu/nomask", "sys/devices/system/cpu/online")
	if err != nil || !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Errorf("CPUs falling back to the list = %v, %v", got, err)
	}
	if ns, err := f.Numbered("sys/devices/system/cpu", "cpu"); err != nil || !slices.Equal(ns, []int{0, 1, 12}) {
		t.Errorf("Numbered = %v, %v; want [0 1 12] (the dangling cpu5 and cpufreq skipped)", ns, err)
	}
	if _, err := f.Numbered("sys/devices/system/node", "node"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Numbered of a missing directory: err = %v", err)
	}
}

func TestParseProcStat(t *testing.T) {
	// A real line (a postgres backend); the second has a command name with
	// spaces and a ')' in it.
	real := "4242 (postgres) S 4200 4200 4200 0 -1 4194560 1391 0 0 0 0 0 0 0 20 0 1 0 86528137 226942976 5123 " +
		"18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n"
	for _, tc := range []struct {
		in   string
		want ProcStat
		err  bool
	}{
		{real, ProcStat{State: 'S', PPID: 4200, PGRP: 4200, Start: 86528137}, false},
		{"77 (a b) c)) Z 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 123 0 0",
			ProcStat{State: 'Z', PPID: 1, PGRP: 77, Start: 123}, false},
		{"77 a S 1", ProcStat{}, true},
		{"77 (x) S 1 2 3", ProcStat{}, true},
		{"77 (x) S 1 group 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 123 0", ProcStat{}, true},
		{"77 (x) S 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 later 0", ProcStat{}, true},
	} {
		got, err := ParseProcStat([]byte(tc.in))
		if tc.err {
			if !errors.Is(err, ErrFormat) {
				t.Errorf("ParseProcStat(%q) = %+v, %v; want ErrFormat", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseProcStat(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	// This process, read the production way: running, started after boot.
	st, err := New("/").ProcStat(os.Getpid())
	if err != nil || st.State != 'R' && st.State != 'S' || st.Start == 0 {
		t.Errorf("ProcStat(self) = %+v, %v", st, err)
	}
	if _, err := New(t.TempDir()).ProcStat(1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ProcStat of a missing process: %v, want ErrNotExist", err)
	}
}
