package pages

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// smapsText is smaps of one mapping per entry: its size, Rss, hugetlb and
// transparent huge pages in kB, and its kernel page size.
func smapsText(maps ...[5]int) string {
	var b strings.Builder
	for i, m := range maps {
		fmt.Fprintf(&b, "7f%02x000000-7f%02x100000 rw-s 00000000 00:01 1 /anon\n", i, i)
		fmt.Fprintf(&b, "Size: %d kB\nKernelPageSize: %d kB\nRss: %d kB\nShared_Hugetlb: %d kB\nPrivate_Hugetlb: 0 kB\n", m[0], m[4], m[1], m[2])
		fmt.Fprintf(&b, "AnonHugePages: %d kB\nShmemPmdMapped: 0 kB\nVmFlags: rd wr\n", m[3])
	}
	return b.String()
}

// TestDataMapping: of the mappings of at least 64 MiB, the one most in
// memory is the data's, and its share in 2 MiB pages is all of it from the
// kernel's pool (hugetlb), else its transparent huge pages over its Rss.
func TestDataMapping(t *testing.T) {
	for _, c := range []struct {
		name string
		maps [][5]int // size, rss, hugetlb, anon huge, kernel page
		want float64
	}{
		{"PostgreSQL huge_pages=on: shared memory from the pool", [][5]int{{8192, 4000, 0, 0, 4}, {270336, 0, 120000, 0, 2048}}, 1},
		{"MariaDB large pages: a reservation of 284 MiB untouched, a chunk from the pool", [][5]int{{290816, 20, 0, 0, 4}, {126976, 0, 100000, 0, 2048}, {65404, 25000, 0, 0, 4}}, 1},
		{"4 KiB pages: a chunk in memory, none huge", [][5]int{{290816, 20, 0, 0, 4}, {126976, 100000, 0, 0, 4}}, 0},
		{"transparent huge pages on half", [][5]int{{131072, 100000, 0, 50000, 4}}, 0.5},
	} {
		m, err := dataMapping(strings.NewReader(smapsText(c.maps...)))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := m.hugeShare(); got != c.want {
			t.Errorf("%s: share %v of %+v, want %v", c.name, got, m, c.want)
		}
	}
	if _, err := dataMapping(strings.NewReader(smapsText([5]int{8192, 8000, 0, 0, 4}))); !errors.Is(err, errNoMapping) {
		t.Errorf("no mapping of 64 MiB: %v", err)
	}
}
