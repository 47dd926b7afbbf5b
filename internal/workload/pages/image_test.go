package pages

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHugeShare reads the share of huge pages from a captured smaps under
// a root: the mapping that holds the address, its AnonHugePages over the
// size; 0 where the file cannot be read.
func TestHugeShare(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "proc/self"), 0o755); err != nil {
		t.Fatal(err)
	}
	smaps := `7f0000000000-7f0000400000 rw-p 00000000 00:00 0
Size:               4096 kB
Rss:                4096 kB
AnonHugePages:      2048 kB
7f0000400000-7f0000800000 rw-p 00000000 00:00 0
Size:               4096 kB
Rss:                4096 kB
AnonHugePages:      4096 kB
`
	if err := os.WriteFile(filepath.Join(root, "proc/self/smaps"), []byte(smaps), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		addr uintptr
		want float64
	}{{0x7f0000000000, 0.5}, {0x7f0000400000, 1}, {0x7f0000900000, 0}} {
		if got := hugeShare(root, c.addr, 4<<20); got != c.want {
			t.Errorf("share at %#x = %v, want %v", c.addr, got, c.want)
		}
	}
	if got := hugeShare(t.TempDir(), 0x7f0000000000, 4<<20); got != 0 {
		t.Errorf("share without smaps = %v, want 0", got)
	}
}
