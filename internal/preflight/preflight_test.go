package preflight_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/preflight"
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
	"github.com/numalab/numalab/internal/topo"
)

const fixtures = "../../testdata/topology"

// wantWarnings is, for every capture in testdata/topology, the warnings
// its preflight must give, each by the start of its setting, and no
// others. A capture added there must be added here.
var wantWarnings = map[string][]string{
	"kvm-2vcpu-zen": {"hypervisor KVM", "DAMON on: kdamond 0 (paddr, pageout)",
		"free page reporting on"},
	"guest-cgroup-limits-steal": {"hypervisor KVM", "steal 5.1%", "cgroup CPU limit 1.50 CPUs of 2",
		"cgroup memory limit 4GiB of 23.54GiB"},
	"bare-8n-numa-balancing-thp-never":   {"THP never", "NUMA balancing on"},
	"20em64t-hybrid-1p6c2t+2ca4co1t":     {"governor powersave", "turbo on"},
	"32intel64-2p8co2t+8ve":              {"turbo on"},
	"40intel64-4n10c+pci-conflicts":      {"C-state NHM-C6 enabled (exit latency 200 us)"},
	"fakecpuid1f-64intel64-2p4d2n2c2t":   {"hypervisor QEMU"},
	"16em64t-4s2c2t":                     {"1 NUMA node for 4 packages"},
	"8em64t-2s2ca2c":                     {"1 NUMA node for 2 packages"},
	"8em64t-2s4c-asymcaches":             {"1 NUMA node for 2 packages"},
	"offline-cpu0-node0":                 {"1 NUMA node for 2 packages"},
	"16amd64-4n4c-cgroup-distance-merge": nil, // 3 packages, 2 nodes allowed, but 4 online: not interleaved
	"16amd64-8n2c":                       nil, // the bare 8-node machine the balancing capture is made from
	"64amd64-4s2n4ca2co":                 nil,
}

// read unpacks a capture and reads its topology and preflight.
func read(t *testing.T, archive string) (*result.Topology, *preflight.Report) {
	t.Helper()
	top, pf, err := topo.Load(archive, "")
	if err != nil {
		t.Fatal(err)
	}
	return top, pf
}

func TestWarningsOnCaptures(t *testing.T) {
	var archives []string
	for _, pat := range []string{"*.tar.gz", "*.tar.bz2"} {
		ms, _ := filepath.Glob(filepath.Join(fixtures, pat))
		archives = append(archives, ms...)
	}
	if len(archives) != len(wantWarnings) {
		t.Errorf("%d captures in %s, %d in wantWarnings: list every capture", len(archives), fixtures, len(wantWarnings))
	}
	for _, a := range archives {
		name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(a), ".tar.gz"), ".tar.bz2")
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each unpacks its capture into a directory of its own
			want, ok := wantWarnings[name]
			if !ok {
				t.Fatalf("capture %s is not in wantWarnings", name)
			}
			_, r := read(t, a)
			var got []string
			for _, w := range r.Warnings {
				got = append(got, w.Setting)
				if w.Effect == "" || w.Fix == "" || len(w.Affects) == 0 {
					t.Errorf("warning %q lacks its effect, fix or figures: %+v", w.Setting, w)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("warnings %q, want ones starting %q", got, want)
			}
			for i := range want {
				if !strings.HasPrefix(got[i], want[i]) {
					t.Errorf("warning %d is %q, want one starting %q", i, got[i], want[i])
				}
			}
			if len(r.Settings) != 14 {
				t.Errorf("%d settings, want all 14 named even where not exposed: %+v", len(r.Settings), r.Settings)
			}
		})
	}
}

// A warning names the figures it distorts, so the report can put it beside
// them: the ones that move memory are latency warnings, the throttles
// are throughput warnings.
func TestWarningsAffectTheirFigures(t *testing.T) {
	_, r := read(t, filepath.Join(fixtures, "guest-cgroup-limits-steal.tar.gz"))
	for _, w := range r.Warnings {
		switch {
		case strings.HasPrefix(w.Setting, "cgroup CPU limit"), strings.HasPrefix(w.Setting, "steal"):
			if !slices.Contains(w.Affects, preflight.OLTP) || !slices.Contains(w.Affects, preflight.Scaling) ||
				slices.Contains(w.Affects, preflight.Latency) {
				t.Errorf("%s affects %v, want OLTP and scaling, not latency", w.Setting, w.Affects)
			}
		case strings.HasPrefix(w.Setting, "hypervisor"):
			if !slices.Contains(w.Affects, preflight.Latency) {
				t.Errorf("%s affects %v, want memory latency", w.Setting, w.Affects)
			}
		}
	}
	_, r = read(t, filepath.Join(fixtures, "kvm-2vcpu-zen.tar.gz"))
	for _, w := range r.Warnings {
		if !slices.Contains(w.Affects, preflight.Latency) {
			t.Errorf("%s affects %v, want memory latency", w.Setting, w.Affects)
		}
	}
}

// write puts files below a new root.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, s := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func settingsWarned(r *preflight.Report) []string {
	var s []string
	for _, w := range r.Warnings {
		s = append(s, w.Setting)
	}
	return s
}

// Thresholds and switches: a setting on the harmless side of its line
// gives no warning.
func TestThresholds(t *testing.T) {
	two := &result.Topology{CPUs: []result.CPU{{ID: 0}, {ID: 1}}, Packages: []result.Package{{}}, Nodes: []result.Node{{}}}
	twoNodes := &result.Topology{CPUs: two.CPUs, Packages: []result.Package{{}, {}}, Nodes: []result.Node{{}, {}}}
	cgroupV2 := map[string]string{
		"proc/mounts":      "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n",
		"proc/self/cgroup": "0::/a\n",
	}
	with := func(base map[string]string, kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name  string
		t     *result.Topology
		files map[string]string
		want  []string
	}{
		{"steal 0.9% is noise", two,
			map[string]string{"proc/stat": "cpu0 991 0 0 0 0 0 0 9\ncpu1 1000 0 0 0 0 0 0 0\nctxt 1\n"}, nil},
		{"steal 1% is not", two, map[string]string{
			"proc/stat": "cpu0 980 0 0 0 0 0 0 20\ncpu1 1000 0 0 0 0 0 0 0\nctxt 1\n"}, []string{"steal 1.0%"}},
		{"CPU limit of all CPUs", two, with(cgroupV2, "sys/fs/cgroup/a/cpu.max", "200000 100000\n"), nil},
		{"CPU limit below them, set on the parent", two, with(cgroupV2, "sys/fs/cgroup/a/cpu.max", "max 100000\n",
			"sys/fs/cgroup/cpu.max", "50000 100000\n"), []string{"cgroup CPU limit 0.50 CPUs of 2"}},
		{"cgroup v1 quota", two, map[string]string{
			"proc/mounts":      "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,cpu,cpuacct 0 0\n",
			"proc/self/cgroup": "3:cpu,cpuacct:/job\n",
			"sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_quota_us":  "100000\n",
			"sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_period_us": "100000\n",
		}, []string{"cgroup CPU limit 1.00 CPUs of 2"}},
		{"memory limit above the machine's memory", two, with(cgroupV2,
			"sys/fs/cgroup/a/memory.max", "9223372036854771712\n", "proc/meminfo", "MemTotal: 1048576 kB\n"), nil},
		{"numa balancing with one node", two, map[string]string{"proc/sys/kernel/numa_balancing": "1\n"}, nil},
		{"numa balancing with two", twoNodes, map[string]string{"proc/sys/kernel/numa_balancing": "1\n"},
			[]string{"NUMA balancing on"}},
		{"numa balancing off with two", twoNodes, map[string]string{"proc/sys/kernel/numa_balancing": "0\n"}, nil},
		{"DAMON built, idle", two, map[string]string{"sys/kernel/mm/damon/admin/kdamonds/0/state": "off\n"}, nil},
		{"DAMON reclaim module", two, map[string]string{"sys/module/damon_reclaim/parameters/enabled": "Y\n"},
			[]string{"DAMON on: damon_reclaim"}},
		{"balloon without reporting", two, map[string]string{"sys/bus/virtio/devices/virtio0/device": "0x0005\n",
			"sys/bus/virtio/devices/virtio0/features": "0110000000\n"}, nil},
		{"balloon with reporting, no interrupt yet", two,
			map[string]string{"sys/bus/virtio/devices/virtio0/device": "0x0005\n",
				"sys/bus/virtio/devices/virtio0/features": "0110010000\n"}, []string{"free page reporting on"}},
		{"deep C-state disabled", two, map[string]string{
			"sys/devices/system/cpu/cpu0/cpuidle/state0/name":    "POLL\n",
			"sys/devices/system/cpu/cpu0/cpuidle/state0/latency": "0\n",
			"sys/devices/system/cpu/cpu0/cpuidle/state1/name":    "C6\n",
			"sys/devices/system/cpu/cpu0/cpuidle/state1/latency": "133\n",
			"sys/devices/system/cpu/cpu0/cpuidle/state1/disable": "1\n",
		}, nil},
		{"turbo off", two, map[string]string{"sys/devices/system/cpu/cpufreq/boost": "0\n"}, nil},
		{"turbo on", two, map[string]string{"sys/devices/system/cpu/cpufreq/boost": "1\n"}, []string{"turbo on"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := preflight.Read(sysfs.New(write(t, tt.files)), tt.t)
			got := settingsWarned(r)
			if len(got) != len(tt.want) {
				t.Fatalf("warnings %q, want %q", got, tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("warning %q, want one starting %q", got[i], tt.want[i])
				}
			}
		})
	}
}

func TestGovernors(t *testing.T) {
	for gov, warned := range map[string]bool{"performance": false, "schedutil": false, "powersave": true,
		"conservative": true, "userspace": true} {
		top := &result.Topology{CPUs: []result.CPU{{ID: 0, Governor: gov}}}
		r := preflight.Read(sysfs.New(t.TempDir()), top)
		if got := len(r.Warnings) == 1 && r.Warnings[0].Setting == "governor "+gov; got != warned {
			t.Errorf("governor %s: warnings %q, want a warning: %v", gov, settingsWarned(r), warned)
		}
	}
}

func TestWriteText(t *testing.T) {
	_, r := read(t, filepath.Join(fixtures, "kvm-2vcpu-zen.tar.gz"))
	var b strings.Builder
	preflight.WriteText(&b, r)
	out := b.String()
	for _, want := range []string{"  hypervisor           KVM\n",
		"  damon                on: kdamond 0 (paddr, pageout)\n",
		"preflight: 3 settings distort the measurements\n", "  ! free page reporting on: ",
		"    affects: memory latency, bandwidth, tpcc-ro tps\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	preflight.WriteWarnings(&b, &preflight.Report{})
	if b.String() != "preflight: no setting found that distorts the measurements\n" {
		t.Errorf("no warnings: %q", b.String())
	}
}
