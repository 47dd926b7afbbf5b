package place

import (
	"errors"
	"maps"
	"os"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/sysfs"
)

// A PostgreSQL-like process on a two-node machine, written in the format of
// the kernel's show_numa_map: shared buffers interleaved, a bound anonymous
// region, hugetlb pages, the two policy names that contain a space, an
// escaped file name and a mapping with no pages.
const twoNodeMaps = `00400000 default file=/usr/lib/postgresql/16/bin/postgres mapped=300 mapmax=20 N0=200 N1=100 kernelpagesize_kB=4
7f0000000000 interleave:0-1 file=/dev/zero\040(deleted) dirty=1000 mapmax=20 N0=500 N1=500 kernelpagesize_kB=4
7f1000000000 bind:1 anon=512 dirty=512 active=0 N1=512 kernelpagesize_kB=4
7f2000000000 prefer (many):0-1 anon=2 dirty=2 N0=2 kernelpagesize_kB=4
7f3000000000 weighted interleave:0-1 anon=4 dirty=4 N0=2 N1=2 kernelpagesize_kB=4
7f4000000000 default file=/anon_hugepage\040(deleted) huge anon=4 dirty=4 N1=4 kernelpagesize_kB=2048
7f5000000000 prefer=static:1 heap anon=3 dirty=3 swapcache=1 writeback=1 future_key=7 N1=3 kernelpagesize_kB=4
7f6000000000 prefer (many)

7ffd00000000 default stack anon=3 dirty=3 active=1 N0=3 kernelpagesize_kB=4
`

func TestParseNumaMaps(t *testing.T) {
	ms, err := ParseNumaMaps(strings.NewReader(twoNodeMaps))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 9 {
		t.Fatalf("got %d mappings, want 9", len(ms))
	}
	want := []struct {
		addr   uint64
		policy string
		file   string
		pages  int64
	}{
		{0x400000, "default", "/usr/lib/postgresql/16/bin/postgres", 300},
		{0x7f0000000000, "interleave:0-1", "/dev/zero (deleted)", 1000},
		{0x7f1000000000, "bind:1", "", 512},
		{0x7f2000000000, "prefer (many):0-1", "", 2},
		{0x7f3000000000, "weighted interleave:0-1", "", 4},
		{0x7f4000000000, "default", "/anon_hugepage (deleted)", 4},
		{0x7f5000000000, "prefer=static:1", "", 3},
		{0x7f6000000000, "prefer (many)", "", 0},
		{0x7ffd00000000, "default", "", 3},
	}
	for i, w := range want {
		m := ms[i]
		if m.Addr != w.addr || m.Policy != w.policy || m.File != w.file || m.Pages() != w.pages {
			t.Errorf("mapping %d = %#x %q %q %d pages, want %#x %q %q %d",
				i, m.Addr, m.Policy, m.File, m.Pages(), w.addr, w.policy, w.file, w.pages)
		}
	}
	if m := ms[5]; !m.Huge || m.PageKB != 2048 || m.Anon != 4 {
		t.Errorf("hugetlb mapping = %+v", m)
	}
	if m := ms[6]; !m.Heap || m.SwapCache != 1 || m.Writeback != 1 || m.Dirty != 3 {
		t.Errorf("heap mapping = %+v", m)
	}
	if m := ms[8]; !m.Stack || m.Active != 1 {
		t.Errorf("stack mapping = %+v", m)
	}
	if m := ms[0]; m.Mapped != 300 || m.MapMax != 20 || m.PerNode[0] != 200 || m.PerNode[1] != 100 {
		t.Errorf("text mapping = %+v", m)
	}

	u := SumNumaMaps(ms)
	wantPages := map[int]int64{0: 200 + 500 + 2 + 2 + 3, 1: 100 + 500 + 512 + 2 + 4 + 3}
	wantBytes := map[int]int64{0: 707 * 4096, 1: 1117*4096 + 4*2048*1024}
	if !maps.Equal(u.Pages, wantPages) || !maps.Equal(u.Bytes, wantBytes) {
		t.Errorf("SumNumaMaps = pages %v bytes %v, want %v %v", u.Pages, u.Bytes, wantPages, wantBytes)
	}
	if got := u.Local(1); got < 0.8 || got > 0.9 { // (1117*4096+8 MiB)/(that+707*4096)
		t.Errorf("Local(1) = %v", got)
	}
	if len(u.Nodes()) != 2 {
		t.Errorf("Nodes() = %v", u.Nodes())
	}
}

// testdata/numa_maps.cat.txt is /proc/self/numa_maps of cat(1) on the
// one-node, 2-vCPU KVM guest; awk summed its N0 counts to 435.
func TestParseNumaMapsCaptured(t *testing.T) {
	f, err := os.Open("testdata/numa_maps.cat.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ms, err := ParseNumaMaps(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 37 {
		t.Errorf("got %d mappings, want 37", len(ms))
	}
	u := SumNumaMaps(ms)
	if u.Pages[0] != 435 || u.Bytes[0] != 435*4096 || len(u.Pages) != 1 {
		t.Errorf("SumNumaMaps = %v pages, %v bytes; want N0=435 only", u.Pages, u.Bytes)
	}
	if u.Local(0) != 1 {
		t.Errorf("Local(0) = %v, want 1", u.Local(0))
	}
}

func TestParseNumaMapsErrors(t *testing.T) {
	for _, bad := range []string{
		"zz default N0=1",
		"7f00",
		"7f00 default N0=x",
		"7f00 default Nx=1",
		"7f00 default anon=-1",
	} {
		_, err := ParseNumaMaps(strings.NewReader("00400000 default\n" + bad + "\n"))
		if !errors.Is(err, sysfs.ErrFormat) || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("ParseNumaMaps(%q) error = %v, want sysfs.ErrFormat at line 2", bad, err)
		}
	}
}

func TestReadNumaMaps(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(root+"/proc/42", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(root+"/proc/42/numa_maps", []byte(twoNodeMaps), 0o644); err != nil {
		t.Fatal(err)
	}
	ms, err := ReadNumaMaps(root, 42)
	if err != nil || len(ms) != 9 {
		t.Fatalf("ReadNumaMaps = %d mappings, %v", len(ms), err)
	}
	if _, err := ReadNumaMaps(root, 43); err == nil || !strings.Contains(err.Error(), "pid 43") {
		t.Errorf("ReadNumaMaps of a missing pid: %v", err)
	}
}
