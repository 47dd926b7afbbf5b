package sysmon

import (
	"os"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/sysfs"
)

func TestParseExeMaps(t *testing.T) {
	const maps = `00400000-00452000 r--p 00000000 08:02 173521      /opt/numalab bin
00452000-00800000 r-xp 00052000 08:02 173521      /opt/numalab bin
00800000-00801000 rw-p 00400000 08:02 173521      /opt/numalab bin
00e03000-00e24000 rw-p 00000000 00:00 0           [heap]
7f1c2e000000-7f1c2e021000 r--p 00000000 08:02 99  /usr/lib/libc.so.6
bad line
ffffff-0000ff r--p 00000000 08:02 173521 /opt/numalab bin
`
	got, err := parseExeMaps(strings.NewReader(maps), "/opt/numalab bin")
	if err != nil {
		t.Fatal(err)
	}
	want := []mapping{{0x400000, 0x452000}, {0x452000, 0x800000}, {0x800000, 0x801000}}
	if len(got) != len(want) {
		t.Fatalf("got %x, want %x", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("mapping %d = %x, want %x", i, got[i], want[i])
		}
	}
}

// TestOwnCodeResidentThisHost: the test binary's code is in memory while
// it runs, and no more of it than the file holds.
func TestOwnCodeResidentThisHost(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("no executable path: %v", err)
	}
	fi, err := os.Stat(exe)
	if err != nil {
		t.Fatal(err)
	}
	n := ownCodeResident(sysfs.New("/"))
	if n <= 0 || n > fi.Size()+int64(os.Getpagesize()) {
		t.Errorf("%d bytes of the %d-byte binary resident: want some, at most the file", n, fi.Size())
	}
	if ownCodeResident(sysfs.New(t.TempDir())) != 0 {
		t.Error("a root without proc/self/maps gave resident bytes")
	}
}
