package topo

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/numalab/numalab/internal/result"
)

// tree writes files (path -> contents; a "->" prefix makes a symlink)
// under a fresh root.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, s := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := bytes.CutPrefix([]byte(s), []byte("->")); ok {
			if err := os.Symlink(string(target), full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// A tree with nothing but CPU directories: no topology, caches, nodes or
// proc. Every CPU is its own core, package 0, one node.
func TestFromSysfsBareTree(t *testing.T) {
	root := tree(t, map[string]string{
		"sys/devices/system/cpu/cpu0/x":      "",
		"sys/devices/system/cpu/cpu1/x":      "",
		"sys/devices/system/cpu/cpu2/x":      "",
		"sys/devices/system/cpu/cpu2/online": "0\n",
	})
	topo, err := FromSysfs(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.CPUs) != 2 || !slices.Equal(topo.Offline, []int{2}) || len(topo.Cores) != 2 ||
		len(topo.Packages) != 1 || len(topo.Nodes) != 1 || len(topo.Caches) != 0 || topo.Kernel != "" {
		t.Errorf("bare tree: %+v", topo)
	}
	checkConsistent(t, topo)
}

func TestFromSysfsRefusesEmptyRoot(t *testing.T) {
	_, err := FromSysfs(t.TempDir())
	if !errors.Is(err, ErrNoCPUs) {
		t.Errorf("err = %v, want ErrNoCPUs", err)
	}
}

// CPUs only under /sys/bus/cpu/devices, a non-NUMA kernel (memory from
// /proc/meminfo), cpufreq, identity files and a cgroup v2 cpuset found by
// walking up from the process's cgroup.
func TestFromSysfsBusCgroup2Identity(t *testing.T) {
	files := map[string]string{
		"proc/meminfo": "MemTotal:  1024 kB\n",
		"proc/cpuinfo": "processor\t: 0\nmodel name\t: Test CPU\nflags\t: fpu hypervisor\n\nprocessor\t: " +
			"1\nmodel name\t: Test CPU\n\nprocessor\t: 2\nmodel name\t: Test CPU\n\nprocessor\t: 3\nmodel name\t: Test CPU\n",
		"proc/version":             "Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org) #1 SMP\n",
		"proc/sys/kernel/hostname": "db1\n",
		"proc/self/cgroup":         "0::/app.slice/db.service\n",
		"proc/mounts":              "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n",
		"sys/fs/cgroup/app.slice/cpuset.cpus.effective":                     "0-1,3\n",
		"sys/devices/system/cpu/online":                                     "0-3\n",
		"sys/devices/system/cpu/smt/control":                                "on\n",
		"sys/kernel/mm/transparent_hugepage/enabled":                        "[always] madvise never\n",
		"sys/class/dmi/id/sys_vendor":                                       "QEMU\n",
		"sys/devices/system/clocksource/clocksource0/available_clocksource": "kvm-clock tsc\n",
	}
	for cpu, core := range map[string]string{"0": "0", "1": "0", "2": "1", "3": "1"} {
		d := "sys/bus/cpu/devices/cpu" + cpu + "/"
		files[d+"topology/core_id"] = core + "\n"
		files[d+"topology/physical_package_id"] = "0\n"
		files[d+"topology/thread_siblings_list"] = map[string]string{"0": "0-1", "1": "2-3"}[core] + "\n"
		files[d+"cpufreq/scaling_cur_freq"] = "2400000\n"
		files[d+"cpufreq/cpuinfo_max_freq"] = "3600000\n"
		files[d+"cpufreq/scaling_governor"] = "performance\n"
		files[d+"cache/index0/level"] = "1\n"
		files[d+"cache/index0/type"] = "Data\n"
		files[d+"cache/index0/size"] = "48K\n"
		files[d+"cache/index0/shared_cpu_list"] = map[string]string{"0": "0-1", "1": "2-3"}[core] + "\n"
	}
	topo, err := FromSysfs(tree(t, files))
	if err != nil {
		t.Fatal(err)
	}
	want := &result.Topology{
		Host: "db1", Kernel: "Linux 6.1.0-18-amd64", CPUModel: "Test CPU", Hypervisor: "KVM", SMT: "on", THP: "always",
		CPUs: []result.CPU{
			{ID: 0, Core: 0, Node: 0, CurMHz: 2400, MaxMHz: 3600, Governor: "performance"},
			{ID: 1, Core: 0, Node: 0, CurMHz: 2400, MaxMHz: 3600, Governor: "performance"},
			{ID: 3, Core: 1, Node: 0, CurMHz: 2400, MaxMHz: 3600, Governor: "performance"},
		},
		Offline:  []int{2},
		Cores:    []result.Core{{ID: 0, CPUs: []int{0, 1}}, {ID: 1, CPUs: []int{3}}},
		Packages: []result.Package{{ID: 0, Model: "Test CPU", CPUs: []int{0, 1, 3}}},
		Nodes:    []result.Node{{ID: 0, CPUs: []int{0, 1, 3}, MemBytes: 1024 * 1024}},
		Caches: []result.Cache{
			{Level: 1, Type: "Data", SizeBytes: 48 << 10, CPUs: []int{0, 1}},
			{Level: 1, Type: "Data", SizeBytes: 48 << 10, CPUs: []int{3}},
		},
	}
	topo.Source = ""
	if !reflect.DeepEqual(topo, want) {
		t.Errorf("got  %+v\nwant %+v", topo, want)
	}
}

func TestDMIHypervisor(t *testing.T) {
	tests := []struct {
		vendor, product string
		kvmClock, flag  bool
		want            string
	}{
		{"VMware, Inc.", "VMware Virtual Platform", false, true, "VMware"},
		{"Microsoft Corporation", "Virtual Machine", false, true, "Microsoft"},
		{"Microsoft Corporation", "Surface Laptop", false, false, ""},
		{"Xen", "HVM domU", false, true, "Xen"},
		{"QEMU", "Standard PC (i440FX + PIIX, 1996)", false, false, "QEMU"},
		{"QEMU", "Standard PC (Q35 + ICH9, 2009)", true, true, "KVM"},
		// QEMU's TCG emulation sets the hypervisor flag too: without the
		// KVM clock, the flag does not make it KVM.
		{"QEMU", "Standard PC (Q35 + ICH9, 2009)", false, true, "QEMU"},
		{"Google", "Google Compute Engine", false, true, "KVM"},
		{"innotek GmbH", "VirtualBox", false, true, "VirtualBox"},
		{"Dell Inc.", "PowerEdge R630", false, false, ""},
		{"", "", true, true, "KVM"},
		{"", "", false, true, ""},
	}
	for _, tt := range tests {
		if got := dmiHypervisor(tt.vendor, tt.product, tt.kvmClock, tt.flag); got != tt.want {
			t.Errorf("dmiHypervisor(%q, %q, %v, %v) = %q, want %q", tt.vendor, tt.product, tt.kvmClock, tt.flag, got, tt.want)
		}
	}
}

// Capturing a captured machine and reading the capture back gives the
// same topology.
func TestCaptureRoundTrip(t *testing.T) {
	for _, name := range []string{"16amd64-4n4c-cgroup-distance-merge", "20em64t-hybrid-1p6c2t+2ca4co1t",
		"offline-cpu0-node0", "kvm-2vcpu-zen"} {
		t.Run(name, func(t *testing.T) {
			archive := filepath.Join(fixtures, name+".tar.bz2")
			if _, err := os.Stat(archive); err != nil {
				archive = filepath.Join(fixtures, name+".tar.gz")
			}
			root := extract(t, archive)
			want, err := FromSysfs(root)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			captured, err := Capture(&buf, root, "again")
			if err != nil {
				t.Fatal(err)
			}
			root2, err := Extract(bytes.NewReader(buf.Bytes()), memDir(t))
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(root2) != "again" {
				t.Errorf("capture root %q, want .../again", root2)
			}
			got, err := FromSysfs(root2)
			if err != nil {
				t.Fatal(err)
			}
			want.Source, got.Source, captured.Source = "", "", ""
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(captured, want) {
				t.Errorf("read back from the capture:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestCaptureRefusesBadTop(t *testing.T) {
	for _, top := range []string{"", "a/b", "..", "/"} {
		if _, err := Capture(&bytes.Buffer{}, t.TempDir(), top); err == nil {
			t.Errorf("Capture with top %q: no error", top)
		}
	}
}

func tarball(t *testing.T, entries []tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, h := range entries {
		h.Mode = 0o644
		body := []byte("x")
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write(body)
		}
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func TestExtractRefusesEscapes(t *testing.T) {
	tests := map[string][]tar.Header{
		"dot-dot": {{Typeflag: tar.TypeReg, Name: "m/../../evil"}},
		"absolute link": {{Typeflag: tar.TypeDir, Name: "m/"},
			{Typeflag: tar.TypeSymlink, Name: "m/l", Linkname: "/etc"}},
		"link out": {{Typeflag: tar.TypeDir, Name: "m/"},
			{Typeflag: tar.TypeSymlink, Name: "m/l", Linkname: "../../x"}},
		"write through link": {{Typeflag: tar.TypeDir, Name: "m/"},
			{Typeflag: tar.TypeSymlink, Name: "m/l", Linkname: "."},
			{Typeflag: tar.TypeReg, Name: "m/l/f"}},
		"two tops": {{Typeflag: tar.TypeReg, Name: "a/f"}, {Typeflag: tar.TypeReg, Name: "b/f"}},
	}
	for name, entries := range tests {
		dir := t.TempDir()
		if _, err := Extract(bytes.NewReader(tarball(t, entries)), dir); !errors.Is(err, ErrNotCapture) {
			t.Errorf("%s: err = %v, want ErrNotCapture", name, err)
		}
	}
	if _, err := Extract(bytes.NewReader([]byte("not an archive at all, longer than a tar block? no")),
		t.TempDir()); !errors.Is(err, ErrNotCapture) {
		t.Errorf("garbage: err = %v, want ErrNotCapture", err)
	}
	ok := []tar.Header{{Typeflag: tar.TypeDir, Name: "m/"}, {Typeflag: tar.TypeReg, Name: "m/sys/f"},
		{Typeflag: tar.TypeSymlink, Name: "m/sys/l", Linkname: "f"}}
	root, err := Extract(bytes.NewReader(tarball(t, ok)), t.TempDir())
	if err != nil || filepath.Base(root) != "m" {
		t.Errorf("valid archive: root %q, err %v", root, err)
	}
}

// TestFromSysfsHost reads this machine. Any Linux machine will do; the
// test checks only what holds everywhere.
func TestFromSysfsHost(t *testing.T) {
	if _, err := os.Stat("/sys/devices/system/cpu"); err != nil {
		t.Skip("no /sys/devices/system/cpu: not Linux")
	}
	topo, err := FromSysfs("/")
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.CPUs) == 0 || len(topo.Cores) == 0 || len(topo.Packages) == 0 || len(topo.Nodes) == 0 {
		t.Errorf("host topology is missing parts: %+v", topo)
	}
	checkConsistent(t, topo)
	// Capturing the host and reading the capture gives the same machine
	// (frequencies and memory may move between the two reads).
	var buf bytes.Buffer
	if _, err := Capture(&buf, "/", "host"); err != nil {
		t.Fatal(err)
	}
	root, err := Extract(&buf, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	again, err := FromSysfs(root)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Cores, topo.Cores) || !reflect.DeepEqual(again.Caches, topo.Caches) ||
		!reflect.DeepEqual(again.Packages, topo.Packages) || len(again.Nodes) != len(topo.Nodes) {
		t.Errorf("host capture reads differently:\n%+v\n%+v", again, topo)
	}
}

func BenchmarkFromSysfsThisHost(b *testing.B) {
	if _, err := os.Stat("/sys/devices/system/cpu"); err != nil {
		b.Skip("no /sys/devices/system/cpu: not Linux")
	}
	for b.Loop() {
		if _, err := FromSysfs("/"); err != nil {
			b.Fatal(err)
		}
	}
}
