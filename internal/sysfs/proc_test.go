package sysfs

import (
	"errors"
	"os"
	"strings"
	"testing"
)

const statText = `cpu  12104 0 4773 81231 424 0 73 16 0 0
cpu0 3864 0 1836 43554 55 0 15 5 0 0
cpu1 8239 0 2937 37677 368 0 57 10 0 0
intr 409092 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
ctxt 694423
btime 1795240935
processes 15231
procs_running 1
procs_blocked 0
softirq 170761 0 16968 5 3352 70558 0 207 37060 0 42611
`

func TestParseStat(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		cpus    int
		cpu1    CPUTimes
		ctxt    uint64
		wantErr bool
	}{
		{name: "kvm 2 vCPU", text: statText, cpus: 2,
			cpu1: CPUTimes{User: 8239, System: 2937, Idle: 37677, IOWait: 368, SoftIRQ: 57, Steal: 10}, ctxt: 694423},
		{name: "old kernel, 8 fields, offline cpu0 missing",
			text: "cpu 1 2 3 4 5 6 7 8\ncpu1 1 2 3 4 5 6 7 8\nctxt 5\n", cpus: 1,
			cpu1: CPUTimes{1, 2, 3, 4, 5, 6, 7, 8}, ctxt: 5},
		{name: "no ctxt", text: "cpu0 1 2 3 4 5 6 7 8\n", wantErr: true},
		{name: "no cpus", text: "ctxt 5\n", wantErr: true},
		{name: "short cpu line", text: "cpu0 1 2 3\nctxt 5\n", wantErr: true},
		{name: "bad number", text: "cpu0 1 2 x 4 5 6 7 8\nctxt 5\n", wantErr: true},
		{name: "bad cpu name", text: "cpuX 1 2 3 4 5 6 7 8\nctxt 5\n", wantErr: true},
		{name: "empty", text: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := ParseStat(strings.NewReader(tt.text))
			if tt.wantErr {
				if !errors.Is(err, ErrFormat) {
					t.Fatalf("err = %v, want ErrFormat", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(st.CPUs) != tt.cpus || st.CPUs[1] != tt.cpu1 || st.Ctxt != tt.ctxt {
				t.Errorf("got %d CPUs, cpu1 %+v, ctxt %d; want %d, %+v, %d",
					len(st.CPUs), st.CPUs[1], st.Ctxt, tt.cpus, tt.cpu1, tt.ctxt)
			}
		})
	}
}

func TestParseIO(t *testing.T) {
	tests := []struct {
		text    string
		want    int64
		wantErr bool
	}{
		{"rchar: 6976\nwchar: 0\nsyscr: 10\nsyscw: 0\nread_bytes: 8192\nwrite_bytes: 0\ncancelled_write_bytes: 0\n",
			8192, false},
		{"read_bytes: 0\n", 0, false},
		{"rchar: 1\n", 0, true},
		{"read_bytes: lots\n", 0, true},
		{"read_bytes: -4\n", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseIO(strings.NewReader(tt.text))
		if tt.wantErr != (err != nil) || got != tt.want {
			t.Errorf("ParseIO(%q) = %d, %v; want %d, error %v", tt.text, got, err, tt.want, tt.wantErr)
		}
		if tt.wantErr && !errors.Is(err, ErrFormat) {
			t.Errorf("ParseIO(%q): error %v does not wrap ErrFormat", tt.text, err)
		}
	}
}

func TestParseDiskstats(t *testing.T) {
	text := `   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 254       0 vda 69531 8398 2660226 26553 11345 72560 1945840 6437 0 8496 33468 7757 57 560080 442 980 34
 254       1 vda1 100 0 800 26 0 0 0 0 0 8 26
`
	got, err := ParseDiskstats(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if got["vda"] != (DiskStat{Reads: 69531, SectorsRead: 2660226}) ||
		got["vda1"] != (DiskStat{100, 800}) || len(got) != 3 {
		t.Errorf("got %+v", got)
	}
	for _, bad := range []string{" 254 0 vda 1 2 3\n", " 254 0 vda x 0 5 0 0 0 0 0 0 0 0\n"} {
		if _, err := ParseDiskstats(strings.NewReader(bad)); !errors.Is(err, ErrFormat) {
			t.Errorf("ParseDiskstats(%q): err = %v, want ErrFormat", bad, err)
		}
	}
}

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
		if _, err := ParseSmaps(strings.NewReader(bad), 0x400000); !errors.Is(err, ErrFormat) {
			t.Errorf("ParseSmaps(%q): %v, want ErrFormat", bad, err)
		}
	}
	m, err := ParseSmaps(strings.NewReader(ok), 0x400000)
	if err != nil || m.Rss != 12<<10 {
		t.Errorf("ParseSmaps(ok) = %+v, %v", m, err)
	}
}
